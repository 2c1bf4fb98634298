package loadtest

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"dgpviz/internal/relay"

	"github.com/gorilla/websocket"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// The relays mode: one presenter's server (viz serve -nats, a process),
// an embedded NATS server (in this process), R relays (viz relay,
// processes) and N followers spread over them, as pages: each says
// "drawn" for every frame it gets, and when its relay goes away it
// follows on through another. Measured: the followers' frame rates
// against the presenter's, the gaps between frames, the latency from the
// presenter's encode (a NATS header stamped for this measurement only:
// viz serve -nats-stamp) to a follower's receipt, each process's CPU and
// RSS, and, with Faults, what followers see when a relay is killed, NATS
// restarts and the presenter leaves.

// Faults (Options.Faults).
const (
	FaultKillRelay       = "kill-relay"       // relay 1 is killed (SIGKILL) a third into the window
	FaultRestartNATS     = "restart-nats"     // the NATS server stops two thirds into the window and starts again a second later
	FaultPresenterLeaves = "presenter-leaves" // the presenter closes its session at the end
)

// RelaysReport is the relays mode's part of the report.
type RelaysReport struct {
	Relays       int                `json:"relays"`
	FramesPerFol float64            `json:"frames_per_follower"` // frames a follower got in the window, on average
	LatencyMS    Summary            `json:"latency_ms"`          // presenter's encode → follower's receipt
	Processes    []ProcessReport    `json:"processes"`
	RelayCostUS  float64            `json:"relay_cost_us"` // relays' CPU per follower per frame (µs)
	NATSMessages int64              `json:"nats_frames"`   // frames seen on NATS in the window
	Reconnects   Summary            `json:"reconnect_s"`   // kill-relay: kill → first frame through another relay, per affected follower
	Moved        int                `json:"moved"`         // kill-relay: followers that followed on through another relay
	Stranded     int                `json:"stranded"`      // kill-relay: followers of the killed relay without a frame since
	NATSPause    Summary            `json:"nats_pause_s"`  // restart-nats: the longest gap per follower around the restart
	NATSErrors   int                `json:"nats_errors"`   // restart-nats: follower connections that ended meanwhile
	Leave1001    int                `json:"leave_1001"`    // presenter-leaves: followers closed with 1001
	LeaveOther   map[string]int     `json:"leave_other"`   // presenter-leaves: other ends
	LeaveSeconds Summary            `json:"leave_s"`       // presenter-leaves: the presenter's close → the follower's
	FaultTimes   map[string]float64 `json:"fault_at_s"`
}

// ProcessReport is one process's CPU (percent of one core over the
// window) and peak RSS.
type ProcessReport struct {
	Name       string  `json:"name"`
	PID        int     `json:"pid"`
	Followers  int     `json:"followers,omitempty"`
	CPUPercent float64 `json:"cpu_percent"`
	RSSMB      float64 `json:"rss_mb"`
}

// proc is a process under test.
type proc struct {
	name string
	cmd  *exec.Cmd
	pid  int
	base string // http://host:port/
	cpu0 float64
	rss  float64
	fols int
	dead atomic.Bool // killed or stopped (the sampler reads it)
}

// freePort returns a free loopback port (closed again: the child binds it).
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startProcess starts viz with args and waits for its /healthz.
func startProcess(o Options, name string, port int, args ...string) (*proc, error) {
	cmd := o.Exec(args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, pid: cmd.Process.Pid, base: "http://127.0.0.1:" + strconv.Itoa(port) + "/"}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := http.Get(p.base + "healthz")
		if err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return p, nil
			}
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("%s exited: %s", name, strings.TrimSpace(stderr.String()))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			return nil, fmt.Errorf("%s did not answer on %s within 30 s", name, p.base)
		}
	}
}

func (p *proc) stop() {
	if p.dead.Load() {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.cmd.Process.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(6 * time.Second):
		p.cmd.Process.Kill()
	}
	p.dead.Store(true)
}

// cpuSeconds reads a process's user+system CPU time from /proc (0 if it
// cannot: the process has gone).
func cpuSeconds(pid string) float64 {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces) in parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ, 100 on Linux
}

// frameSeq reads a frame's seq from the start of its header
// ({"v":2,"type":"frame","seq":N,…}) without parsing the rest.
func frameSeq(head []byte) (uint64, bool) {
	i := bytes.Index(head, []byte(`"type":"frame","seq":`))
	if i < 0 {
		return 0, false
	}
	j := i + len(`"type":"frame","seq":`)
	k := j
	for k < len(head) && head[k] >= '0' && head[k] <= '9' {
		k++
	}
	n, err := strconv.ParseUint(string(head[j:k]), 10, 64)
	return n, err == nil
}

// relayFollower is one follower that behaves as the page does: it says
// "drawn" for every frame, and follows on through another relay when its
// relay goes away.
type relayFollower struct {
	relays []string      // ws://…/ws of every relay
	at     int           // the relay it follows through
	sem    chan struct{} // handshakes at once
	key    string
	t0     time.Time
	stop   atomic.Bool

	mu      sync.Mutex
	conn    *websocket.Conn
	frames  []time.Duration
	seqs    []uint64
	moved   time.Duration // when it first had a frame through another relay after losing one (0: never)
	lostAt  time.Duration
	ends    []string // close codes of connections that ended before the end
	final   string   // how its last connection ended
	finalAt time.Duration
	done    chan struct{}
}

func (f *relayFollower) run() {
	defer close(f.done)
	tries := 0
	for !f.stop.Load() {
		f.sem <- struct{}{}
		conn, _, err := dialer.Dial(f.relays[f.at]+"?follow="+f.key, nil)
		<-f.sem
		if err != nil {
			if tries++; tries > 3*len(f.relays) {
				f.mu.Lock()
				f.final, f.finalAt = "dial failed", time.Since(f.t0)
				f.mu.Unlock()
				return
			}
			f.at = (f.at + 1) % len(f.relays)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		tries = 0
		f.mu.Lock()
		f.conn = conn
		f.mu.Unlock()
		code := f.read(conn)
		conn.Close()
		now := time.Since(f.t0)
		f.mu.Lock()
		f.final, f.finalAt = code, now
		if f.stop.Load() || code == "1000" || code == "1001" || code == "1008" {
			f.mu.Unlock()
			return
		}
		f.ends = append(f.ends, code)
		if f.lostAt == 0 {
			f.lostAt = now
		}
		f.mu.Unlock()
		// As the page: another relay, at once.
		f.at = (f.at + 1 + rand.IntN(max(1, len(f.relays)-1))) % len(f.relays)
	}
}

// read reads frames until the connection ends and returns its close code.
func (f *relayFollower) read(conn *websocket.Conn) string {
	head := make([]byte, 64)
	for {
		mt, r, err := conn.NextReader()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return strconv.Itoa(ce.Code)
			}
			return "1006"
		}
		if mt != websocket.BinaryMessage {
			io.Copy(io.Discard, r)
			continue
		}
		n, _ := io.ReadFull(r, head)
		if _, err := io.Copy(io.Discard, r); err != nil {
			return "1006"
		}
		seq, ok := frameSeq(head[:n])
		if !ok {
			continue // setup, history
		}
		now := time.Since(f.t0)
		f.mu.Lock()
		f.frames = append(f.frames, now)
		f.seqs = append(f.seqs, seq)
		if f.lostAt > 0 && f.moved == 0 {
			f.moved = now
		}
		f.mu.Unlock()
		conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if conn.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"op":"drawn","seq":%d}`, seq)) != nil && !f.stop.Load() {
			return "1006"
		} // (once it has sent its close, it reads on for the relay's)
	}
}

func (f *relayFollower) finish() {
	f.stop.Store(true)
	f.mu.Lock()
	if c := f.conn; c != nil {
		c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "load test done"), time.Now().Add(time.Second))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
	}
	f.mu.Unlock()
}

// stamps keeps the presenter's frames' encode times by seq, from NATS.
type stamps struct {
	mu sync.Mutex
	at map[uint64]time.Time
	n  int64
}

// runRelays runs the relays mode.
func runRelays(ctx context.Context, o Options, r *Report) error {
	rr := &RelaysReport{Relays: o.Relays, FaultTimes: map[string]float64{}, LeaveOther: map[string]int{}}
	r.Relays = rr
	nk, err := newNATSKeys()
	if err != nil {
		return err
	}
	defer os.RemoveAll(nk.dir)
	ns, err := relay.StartNATS("127.0.0.1:0", nk.server)
	if err != nil {
		return err
	}
	natsAddr := ns.Addr().String()
	defer func() { ns.Shutdown() }()
	natsURL := "nats://" + natsAddr
	o.note("NATS on %s", natsURL)

	var procs []*proc
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	pport, err := freePort()
	if err != nil {
		return err
	}
	many := strconv.Itoa(o.N + 64)
	pres, err := startProcess(o, "presenter", pport, "serve", "-addr", "127.0.0.1:"+strconv.Itoa(pport), "-nats", natsURL, "-nats-creds", nk.presenterFile, "-nats-stamp",
		"-public-url", "http://127.0.0.1:"+strconv.Itoa(pport)+"/", "-max-conns-per-ip", many, "-max-followers", many, "-log-level", "warn")
	if err != nil {
		return err
	}
	procs = append(procs, pres)
	var relays []*proc
	var wsURLs []string
	for i := range o.Relays {
		port, err := freePort()
		if err != nil {
			return err
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		p, err := startProcess(o, "relay "+strconv.Itoa(i+1), port, "relay", "-nats", natsURL, "-nats-creds", nk.relayFile, "-addr", addr, "-public-url", "http://"+addr+"/",
			"-max-followers", many, "-max-conns-per-ip", many, "-log-level", "warn")
		if err != nil {
			return err
		}
		procs = append(procs, p)
		relays = append(relays, p)
		wsURLs = append(wsURLs, "ws://"+addr+"/ws")
	}
	o.note("presenter and %d relays started", len(relays))

	t0 := time.Now()
	r.Before = Sample{At: 0, RSSMB: rssMB("/proc/" + strconv.Itoa(pres.pid) + "/status"), Goroutines: -1, Sessions: -1}
	presenter, err := dial("ws://127.0.0.1:"+strconv.Itoa(pport)+"/ws?"+o.Query, kindNormal, t0)
	if err != nil || presenter.share == "" {
		return fmt.Errorf("the presenter's session did not start: %v", err)
	}
	presenter.start()
	key := presenter.share

	// The presenter's frames' encode times, from their NATS header.
	st := &stamps{at: map[uint64]time.Time{}}
	nc, err := relay.Connect(natsURL, relay.ConnectOptions{Name: "loadtest", Credentials: nk.relay})
	if err != nil {
		return err
	}
	defer nc.Close()
	if _, err := nc.Subscribe(relay.FrameSubject(key), func(m *nats.Msg) {
		at, ok := relay.EncodedAt(m)
		seq, ok2 := frameSeq(m.Data[:min(len(m.Data), 64)])
		if ok && ok2 {
			st.mu.Lock()
			st.at[seq] = at
			st.n++
			st.mu.Unlock()
		}
	}); err != nil {
		return err
	}

	// The followers, spread over the relays, 16 handshakes at a time.
	fols := make([]*relayFollower, o.N)
	sem := make(chan struct{}, 16)
	for i := range fols {
		f := &relayFollower{relays: wsURLs, at: i % len(wsURLs), key: key, t0: t0, done: make(chan struct{}), sem: sem}
		fols[i] = f
		relays[f.at].fols++
		spawn(f.run)
	}
	// Wait until every follower has a frame (or 30 s).
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ready := 0
		for _, f := range fols {
			f.mu.Lock()
			if len(f.frames) > 0 {
				ready++
			}
			f.mu.Unlock()
		}
		if ready == len(fols) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	o.note("%d followers connected after %.1f s", o.N, time.Since(t0).Seconds())

	// The window.
	self := strconv.Itoa(os.Getpid())
	selfCPU0 := cpuSeconds(self)
	for _, p := range procs {
		p.cpu0 = cpuSeconds(strconv.Itoa(p.pid))
	}
	st.mu.Lock()
	natsFrames0 := st.n
	st.mu.Unlock()
	winStart := time.Since(t0)
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	var selfRSS float64
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			for _, p := range procs {
				if !p.dead.Load() {
					p.rss = max(p.rss, rssMB("/proc/"+strconv.Itoa(p.pid)+"/status"))
				}
			}
			selfRSS = max(selfRSS, rssMB("/proc/self/status"))
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
		}
	}()
	sleep := func(d time.Duration) {
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
	var killAt, restartAt time.Duration
	killed := -1
	if o.fault(FaultKillRelay) {
		sleep(o.Duration / 3)
		killed = 0
		killAt = time.Since(t0)
		rr.FaultTimes[FaultKillRelay] = round3((killAt - winStart).Seconds())
		o.note("killing %s", relays[killed].name)
		p := relays[killed]
		p.cpu0 = cpuSeconds(strconv.Itoa(p.pid)) - p.cpu0 // its CPU until now
		p.cmd.Process.Kill()
		p.dead.Store(true)
	}
	if o.fault(FaultRestartNATS) {
		sleep(o.Duration*2/3 - time.Since(t0) + winStart)
		restartAt = time.Since(t0)
		rr.FaultTimes[FaultRestartNATS] = round3((restartAt - winStart).Seconds())
		o.note("restarting NATS")
		ns.Shutdown()
		ns.WaitForShutdown()
		time.Sleep(time.Second)
		var err error
		if ns, err = startNATSAt(natsAddr, nk.server); err != nil {
			return err
		}
	}
	sleep(o.Duration - time.Since(t0) + winStart)
	winEnd := time.Since(t0)
	for _, p := range procs {
		if !p.dead.Load() {
			p.cpu0 = cpuSeconds(strconv.Itoa(p.pid)) - p.cpu0
		}
	}
	selfCPU := cpuSeconds(self) - selfCPU0
	close(stopSampling)
	<-sampled
	st.mu.Lock()
	rr.NATSMessages = st.n - natsFrames0
	st.mu.Unlock()
	window := (winEnd - winStart).Seconds()

	// The presenter leaves, or the followers do.
	if o.fault(FaultPresenterLeaves) {
		leftAt := time.Since(t0)
		presenter.finish()
		for _, f := range fols {
			select {
			case <-f.done:
			case <-time.After(30 * time.Second):
			}
		}
		var secs []float64
		for _, f := range fols {
			f.mu.Lock()
			if f.final == "1001" {
				rr.Leave1001++
				secs = append(secs, (f.finalAt - leftAt).Seconds())
			} else {
				rr.LeaveOther[cmp.Or(f.final, "open")]++
			}
			f.mu.Unlock()
		}
		rr.LeaveSeconds = summarize(secs)
		for _, f := range fols {
			f.finish()
		}
	} else {
		for _, f := range fols {
			f.finish()
		}
		for _, f := range fols {
			select {
			case <-f.done:
			case <-time.After(15 * time.Second):
			}
		}
		presenter.finish()
	}

	// Results.
	pf := rate(presenter.frames, winStart, winEnd)
	r.PresenterFPS = &pf
	var fps, gaps, lat, back, pause []float64
	total := 0
	st.mu.Lock()
	for _, f := range fols {
		f.mu.Lock()
		r.Clients++
		fps = append(fps, rate(f.frames, winStart, winEnd))
		gaps = append(gaps, frameGaps(f.frames, winStart, winEnd)...)
		for k, at := range f.frames {
			if at < winStart || at >= winEnd {
				continue
			}
			total++
			if enc, ok := st.at[f.seqs[k]]; ok {
				lat = append(lat, (t0.Add(at).Sub(enc)).Seconds()*1000)
			}
		}
		if killed >= 0 && f.lostAt > 0 && f.lostAt >= killAt {
			if f.moved > 0 {
				rr.Moved++
				back = append(back, (f.moved - killAt).Seconds())
			} else {
				rr.Stranded++
			}
		}
		if restartAt > 0 {
			longest := 0.0
			for k := 1; k < len(f.frames); k++ {
				if f.frames[k] > restartAt && f.frames[k-1] < restartAt+20*time.Second {
					longest = max(longest, (f.frames[k] - max(f.frames[k-1], restartAt)).Seconds())
				}
			}
			pause = append(pause, longest)
			for range f.ends {
				if f.lostAt >= restartAt {
					rr.NATSErrors++
				}
			}
		}
		r.CloseCodes[cmp.Or(f.final, "open")]++
		f.mu.Unlock()
	}
	st.mu.Unlock()
	r.FPS = summarize(fps)
	r.FrameGapMS = summarize(gaps)
	rr.LatencyMS = summarize(lat)
	rr.Reconnects = summarize(back)
	rr.NATSPause = summarize(pause)
	rr.FramesPerFol = round3(float64(total) / float64(max(1, len(fols))))
	relayCPU := 0.0
	for i, p := range procs {
		pr := ProcessReport{Name: p.name, PID: p.pid, Followers: p.fols, RSSMB: round3(p.rss), CPUPercent: round3(100 * p.cpu0 / window)}
		if i > 0 { // the relays: every follower's frames went through one
			relayCPU += p.cpu0
		}
		rr.Processes = append(rr.Processes, pr)
	}
	rr.Processes = append(rr.Processes, ProcessReport{Name: "load test (NATS server and the clients)", PID: os.Getpid(), CPUPercent: round3(100 * selfCPU / window), RSSMB: round3(selfRSS)})
	// Per follower per frame: the relays' CPU (a killed one's until its
	// end) over the frames the followers got.
	if total > 0 {
		rr.RelayCostUS = round3(1e6 * relayCPU / float64(total))
	}
	r.WindowSeconds = round3(window)
	r.After = Sample{At: time.Since(t0).Seconds(), RSSMB: pres.rss, Goroutines: -1, Sessions: -1}
	return nil
}

// natsKeys are the relays mode's NATS users: the presenter's server's
// and the relays' (which the load test's own subscriber shares), their
// credentials files in dir.
type natsKeys struct {
	dir                      string
	server                   relay.ServerOptions
	relay                    *relay.Credentials
	presenterFile, relayFile string
}

func newNATSKeys() (*natsKeys, error) {
	dir, err := os.MkdirTemp("", "dgpviz-loadtest-nats-")
	if err != nil {
		return nil, err
	}
	nk := &natsKeys{dir: dir, presenterFile: filepath.Join(dir, "presenter.creds"), relayFile: filepath.Join(dir, "relay.creds")}
	for _, u := range []struct {
		role relay.Role
		file string
	}{{relay.Presenter, nk.presenterFile}, {relay.Relay, nk.relayFile}} {
		c, err := relay.NewCredentials()
		if err == nil {
			err = relay.WriteCredentials(u.file, c, "viz loadtest -mode relays: the "+u.role.String()+"'s")
		}
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		nk.server.Users = append(nk.server.Users, c.User(u.role))
		if u.role == relay.Relay {
			nk.relay = c
		}
	}
	return nk, nil
}

// startNATSAt starts the embedded NATS server again on its address (the
// port may take a moment to be free).
func startNATSAt(addr string, o relay.ServerOptions) (*server.Server, error) {
	var err error
	for range 20 {
		var ns *server.Server
		if ns, err = relay.StartNATS(addr, o); err == nil {
			return ns, nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return nil, err
}

func (o Options) fault(name string) bool { return slices.Contains(o.Faults, name) }

// writeRelays writes the relays mode's report for people.
func (rr *RelaysReport) writeText(w io.Writer, r *Report) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	fmt.Fprintf(bw, "followers:    %d over %d relays; measured over %.1f s\n", r.Clients, rr.Relays, r.WindowSeconds)
	if r.PresenterFPS != nil {
		fmt.Fprintf(bw, "frames/s:     presenter %.1f; followers min %.1f  p50 %.1f  mean %.1f  (%.0f frames each on average; %d frames on NATS)\n", *r.PresenterFPS, r.FPS.Min, r.FPS.P50, r.FPS.Mean, rr.FramesPerFol, rr.NATSMessages)
	}
	fmt.Fprintf(bw, "frame gap:    p50 %.0f ms  p95 %.0f ms  max %.0f ms\n", r.FrameGapMS.P50, r.FrameGapMS.P95, r.FrameGapMS.Max)
	fmt.Fprintf(bw, "latency:      p50 %.1f ms  p95 %.1f ms  max %.1f ms  (the presenter's encode → a follower's receipt, %d frames)\n", rr.LatencyMS.P50, rr.LatencyMS.P95, rr.LatencyMS.Max, rr.LatencyMS.N)
	for _, p := range rr.Processes {
		fol := ""
		if p.Followers > 0 {
			fol = fmt.Sprintf(", %d followers", p.Followers)
		}
		fmt.Fprintf(bw, "  %-40s CPU %6.1f %% of a core, RSS %6.1f MB%s\n", p.Name, p.CPUPercent, p.RSSMB, fol)
	}
	if rr.RelayCostUS > 0 {
		fmt.Fprintf(bw, "relay cost:   %.1f µs of CPU per follower per frame\n", rr.RelayCostUS)
	}
	if at, ok := rr.FaultTimes[FaultKillRelay]; ok {
		fmt.Fprintf(bw, "relay killed at %.1f s: %d followers went on through another relay (kill → first frame p50 %.2f s, p95 %.2f s, max %.2f s), %d stranded\n", at, rr.Moved, rr.Reconnects.P50, rr.Reconnects.P95, rr.Reconnects.Max, rr.Stranded)
	}
	if at, ok := rr.FaultTimes[FaultRestartNATS]; ok {
		fmt.Fprintf(bw, "NATS restarted at %.1f s: the longest pause per follower p50 %.2f s, p95 %.2f s, max %.2f s; %d follower connections ended\n", at, rr.NATSPause.P50, rr.NATSPause.P95, rr.NATSPause.Max, rr.NATSErrors)
	}
	if rr.Leave1001+len(rr.LeaveOther) > 0 {
		fmt.Fprintf(bw, "presenter left: %d followers told with 1001 (after p50 %.2f s, max %.2f s); other ends %v\n", rr.Leave1001, rr.LeaveSeconds.P50, rr.LeaveSeconds.Max, rr.LeaveOther)
	}
}
