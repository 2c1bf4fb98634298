package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// The attack mode: N victims play (each a client of its own) alone for a
// third of the time; then one attacking client — one address — runs one of
// the hardening campaign's attacks until the end (what it needs first, its
// bodies or its first session, is made before the victims' window), while every two seconds
// a new honest client opens a session. Measured: the victims' frame rates
// before and during the attack, the honest newcomers admitted, the
// server's RSS against its memory budget, and what the attacker got.
// Acceptance (issue 27): victims keep at least 80 % of their frame rate,
// every honest newcomer is admitted, and RSS stays within 1.25 times the
// budget.

// Attacks.
const (
	AttackAddData = "add-data" // sessions growing their data with add_data until refused
	AttackUpload  = "upload"   // 16 MiB hostile model and CSV bodies, eight at a time
	AttackPark    = "park"     // tiny uploads and forks as fast as answered: parked state
	AttackCompare = "compare"  // depth comparisons of 5000 iterations every 0.5 s per session
	AttackDensity = "density"  // fit densities of 5000 samples every 0.5 s per session
	AttackFigure  = "figure"   // message figures of 100,000 samples, new inputs every 0.1 s
	AttackReset   = "reset"    // resets every 0.5 s per session (the preset's restarts where there is one)
	AttackDecode  = "decode"   // decodes of 64 points back to back (an autoencoder's data: -attack-query data=…)
	// AttackWide uploads 2000 rows of 460 outputs (the campaign's wide
	// CSV) and plays the session it parks, as many as it is let: the
	// server's memory as full as its budgets allow.
	AttackWide = "wide"
)

// Attacks lists the attacks.
var Attacks = []string{AttackAddData, AttackUpload, AttackPark, AttackCompare, AttackDensity, AttackFigure, AttackReset, AttackDecode, AttackWide}

// attackQuery is each attack's sessions' query when Options.AttackQuery
// is empty.
var attackQuery = map[string]string{
	// The campaign's: a small estimate at 30 rows, 383 MiB and 2.8 s an
	// iteration at 2,000.
	AttackAddData: "play=0&hidden=8,8,8,8,8&m=64",
	AttackCompare: "play=1",
	AttackDensity: "play=1",
	AttackFigure:  "play=1",
	AttackReset:   "play=1",
	AttackDecode:  "play=1",
}

// AttackReport is the attack mode's result.
type AttackReport struct {
	Attack   string  `json:"attack"`
	Query    string  `json:"attack_query,omitempty"` // the attacker's sessions' query
	Started  float64 `json:"started_s"`              // when the attack began
	Identity string  `json:"identity"`               // the attacker's address (X-Forwarded-For; the first of Clients)
	Clients  int     `json:"clients"`                // attacking clients, each running the attack
	// The victims' frames per second per victim before and during the
	// attack (from a second after it began), and the ratio of their means.
	Before Summary `json:"victims_fps_before"`
	During Summary `json:"victims_fps_during"`
	Ratio  float64 `json:"victims_ratio"`
	// ReplyDuring is the victims' reply latency during the attack.
	ReplyDuring Summary `json:"victims_reply_ms_during"`
	// Honest newcomers during the attack: tried, and admitted (a frame
	// within 10 s).
	HonestTried    int    `json:"honest_tried"`
	HonestAdmitted int    `json:"honest_admitted"`
	HonestRefusal  string `json:"honest_refusal,omitempty"` // the first refusal's reason
	// BudgetMB is the server's memory budget (hello's limits); RSS peak
	// and the ratio of the two.
	BudgetMB   float64 `json:"budget_mb"`
	RSSPeakMB  float64 `json:"rss_peak_mb"`
	RSSBudget  float64 `json:"rss_over_budget"`
	RSSAfterMB float64 `json:"rss_after_mb"` // 5 s (at most a third of the duration) after the attack ended, its sessions closed
	// What the attacker got.
	Sessions   int            `json:"attacker_sessions"` // sessions it got
	Refused    int            `json:"attacker_refused"`  // sessions refused
	Requests   int64          `json:"attacker_requests"` // commands or HTTP requests sent
	Answers    map[string]int `json:"attacker_answers"`  // by kind: ack, error: first words, HTTP status…
	FirstError string         `json:"attacker_first_error,omitempty"`
	Pass       bool           `json:"pass"` // the acceptance holds
}

// attackIdentity is the k-th attacking client's address (from 0).
// victimWarmup is how long victims play before their frame rate counts.
const victimWarmup = 10 * time.Second

func attackIdentity(k int) string { return fmt.Sprintf("10.66.6.%d", 6+k) }

func runAttack(ctx context.Context, o Options, t *target, r *Report) error {
	t0 := time.Now()
	r.Before = t.sample(t0)
	baseGoroutines := r.Before.Goroutines
	u := t.url + "?" + o.Query
	ar := &AttackReport{Attack: o.Attack, Identity: attackIdentity(0), Clients: max(1, o.AttackClients), Answers: map[string]int{}}
	ar.Query = o.AttackQuery
	if ar.Query == "" {
		ar.Query = attackQuery[o.Attack]
	}
	r.Attack = ar

	o.note("connecting %d victims to %s", o.N, u)
	victims := liveClients(connect(ctx, u, kindNormal, o.N, t0, r))
	if len(victims) == 0 {
		return fmt.Errorf("no victim session started (%s)", r.DialError)
	}
	for _, c := range victims {
		c.start()
		if c.budget > 0 {
			ar.BudgetMB = float64(c.budget) / (1 << 20)
		}
	}
	stop := make(chan struct{})
	var probesWG sync.WaitGroup
	for _, c := range victims {
		probesWG.Add(1)
		off := time.Duration(rand.Int64N(int64(o.ReplyEvery)))
		spawn(func() { defer probesWG.Done(); c.probes(o.ReplyEvery, off, stop) })
	}
	smp := startSampler(t, t0, stop)
	sleep := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	stopAttack := make(chan struct{})
	var attackers []*attacker
	var prepWG sync.WaitGroup
	for k := range ar.Clients {
		a := &attacker{o: o, t: t, ar: ar, id: attackIdentity(k), stop: stopAttack, victim: victims[0]}
		attackers = append(attackers, a)
		prepWG.Add(1)
		spawn(func() { defer prepWG.Done(); a.prepare() })
	}
	// The victims' first seconds run flat out until their bound settles
	// (the live pace), at another frame rate than the rest: the window
	// before the attack starts after them, and after the attackers are
	// ready.
	sleep(min(victimWarmup, o.Duration/4))
	prepWG.Wait()
	winStart := time.Since(t0)
	sleep(o.Duration / 3)
	attackAt := time.Since(t0)
	ar.Started = round3(attackAt.Seconds())
	o.note("attack %s begins (%s)", o.Attack, ar.Query)
	var attackWG sync.WaitGroup
	for _, a := range attackers {
		attackWG.Add(1)
		spawn(func() { defer attackWG.Done(); a.run(ctx) })
	}
	a := attackers[0]

	// Honest newcomers, every two seconds, each a client of its own.
	honestDone := make(chan struct{})
	spawn(func() {
		defer close(honestDone)
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-a.stop:
				return
			case <-tick.C:
				ok, why := honestSession(u)
				a.mu.Lock()
				ar.HonestTried++
				if ok {
					ar.HonestAdmitted++
				} else if ar.HonestRefusal == "" {
					ar.HonestRefusal = why
				}
				a.mu.Unlock()
			}
		}
	})
	sleep(o.Duration - o.Duration/3)
	winEnd := time.Since(t0)
	close(stopAttack)
	attackWG.Wait()
	<-honestDone
	for _, x := range attackers[1:] {
		ar.Requests += x.reqs.Load()
	}
	r.During = peak(smp.sofar())
	sleep(min(5*time.Second, o.Duration/3)) // the attacker's sessions closed: what memory comes back
	close(stop)
	probesWG.Wait()
	r.Samples = append(smp.wait(), t.sample(t0))
	ar.RSSAfterMB = r.Samples[len(r.Samples)-1].RSSMB

	var wg sync.WaitGroup
	for _, c := range victims {
		wg.Add(1)
		spawn(func() { defer wg.Done(); c.finish() })
	}
	wg.Wait()
	r.After, r.SettleSeconds, r.Settled = t.settle(t0, baseGoroutines, 2, 15*time.Second)
	r.SettleSeconds = round3(r.SettleSeconds)

	warm := attackAt + time.Second
	var before, during, lat []float64
	for _, c := range victims {
		r.count(c)
		r.Clients++
		before = append(before, rate(c.frames, winStart, attackAt))
		during = append(during, rate(c.frames, warm, winEnd))
		for _, p := range c.latencies {
			if p.sent >= warm && p.sent < winEnd {
				lat = append(lat, p.rtt.Seconds()*1000)
			}
		}
		r.ErrorReplies += c.errReplies
	}
	r.FPS = summarize(during)
	r.WindowSeconds = round3((winEnd - winStart).Seconds())
	ar.Before, ar.During, ar.ReplyDuring = summarize(before), summarize(during), summarize(lat)
	if ar.Before.Mean > 0 {
		ar.Ratio = round3(ar.During.Mean / ar.Before.Mean)
	}
	ar.RSSPeakMB = r.During.RSSMB
	if ar.BudgetMB > 0 && ar.RSSPeakMB > 0 {
		ar.RSSBudget = round3(ar.RSSPeakMB / ar.BudgetMB)
	}
	ar.Pass = ar.Ratio >= 0.8 && ar.HonestAdmitted == ar.HonestTried && (ar.RSSBudget == 0 || ar.RSSBudget <= 1.25)
	return nil
}

// honestSession opens a session as a new client and reports whether it
// got a frame within 10 s, or why not.
func honestSession(u string) (bool, string) {
	cl, err := dial(u, kindNormal, time.Now())
	if err != nil {
		return false, err.Error()
	}
	defer cl.conn.Close()
	if cl.refused() {
		return false, cl.closeCode + " " + cl.closeReason
	}
	cl.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		mt, _, err := cl.conn.ReadMessage()
		if err != nil {
			cl.noteClose(err)
			return false, cl.closeCode + " " + cl.closeReason
		}
		if mt == websocket.BinaryMessage {
			break
		}
	}
	cl.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	return true, ""
}

// attacker runs one attack as one client until stop.
type attacker struct {
	id     string // its address (X-Forwarded-For)
	o      Options
	t      *target
	ar     *AttackReport
	stop   chan struct{}
	victim *client // whose shared session the park attack forks
	// Made before the window (prepare): the bodies the attacker uploads,
	// and the decode attack's first session.
	bodies []upload
	first  *client
	reqs   atomic.Int64
	mu     sync.Mutex
}

func (a *attacker) answer(kind, detail string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ar.Answers[kind]++
	if detail != "" && a.ar.FirstError == "" {
		a.ar.FirstError = detail
	}
}

func (a *attacker) stopped() bool {
	select {
	case <-a.stop:
		return true
	default:
		return false
	}
}

// prepare makes what the attack needs before its window, so that the
// window measures the attack, not its setup: the bodies it uploads (16
// MiB each, slow to write under -race), or the first session of an attack
// by commands, whose model is built before it answers any (the decode
// attack's is the autoencoder's preset, restarts and all).
func (a *attacker) prepare() {
	switch a.o.Attack {
	case AttackUpload:
		a.bodies = hostileBodies()
	case AttackWide:
		a.bodies = []upload{{"data?name=wide.csv", "text/csv", wideCSV()}}
	case AttackPark: // forks and tiny uploads: nothing to make
	default: // commands on sessions
		a.first = a.open(a.t.url + "?" + a.ar.Query)
	}
}

func (a *attacker) run(ctx context.Context) {
	defer func() {
		a.mu.Lock()
		if a.id == attackIdentity(0) {
			a.ar.Requests = a.reqs.Load()
		}
		a.mu.Unlock()
	}()
	switch a.o.Attack {
	case AttackUpload:
		a.uploads(ctx, 8, a.bodies)
	case AttackPark:
		var wg sync.WaitGroup
		wg.Add(1)
		spawn(func() { defer wg.Done(); a.forks() })
		a.uploads(ctx, 8, []upload{{"data", "text/csv", []byte("x,y\n0,0\n1,1\n")}})
		wg.Wait()
	case AttackWide:
		a.wide(ctx)
	default:
		a.sessions(ctx)
	}
}

// wide uploads the campaign's wide CSV and plays the session it parks,
// again and again until refused or stopped; the sessions stay open.
func (a *attacker) wide(ctx context.Context) {
	body := a.bodies[0]
	base := strings.Replace(strings.TrimSuffix(a.t.url, "/ws"), "ws", "http", 1)
	hc := &http.Client{Timeout: 60 * time.Second}
	defer hc.CloseIdleConnections() // the server's goroutines settle
	var wg sync.WaitGroup
	defer wg.Wait()
	for k := 0; k < 8 && !a.stopped(); k++ {
		req, _ := http.NewRequestWithContext(ctx, "POST", base+"/"+body.route, bytes.NewReader(body.body))
		req.Header.Set("Content-Type", body.typ)
		req.Header.Set("X-Forwarded-For", a.id)
		a.reqs.Add(1)
		resp, err := hc.Do(req)
		if err != nil {
			a.answer("HTTP error", err.Error())
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if resp.StatusCode != 200 {
			a.answer(fmt.Sprintf("HTTP %d data", resp.StatusCode), strings.TrimSpace(string(body)))
			select {
			case <-a.stop:
				return
			case <-time.After(2 * time.Second):
			}
			continue
		}
		var tok struct{ Resume string }
		json.Unmarshal(body, &tok)
		a.answer("HTTP 200 data", "")
		c, err := dialAs(a.t.url+"?resume="+tok.Resume, kindNormal, time.Now(), a.id)
		if err != nil {
			a.answer("session refused", err.Error())
			continue
		}
		if c.refused() {
			a.answer("session refused", c.closeCode+" "+c.closeReason)
			continue
		}
		a.mu.Lock()
		a.ar.Sessions++
		a.mu.Unlock()
		wg.Add(1)
		spawn(func() {
			defer wg.Done()
			defer c.conn.Close()
			done := make(chan struct{})
			spawn(func() {
				defer close(done)
				for {
					mt, rd, err := c.conn.NextReader()
					if err != nil {
						return
					}
					if mt == websocket.TextMessage {
						var m struct{ Type, Error string }
						if json.NewDecoder(rd).Decode(&m) == nil && m.Type == "error" {
							a.answer("error: "+firstWords(m.Error, 6), m.Error)
						}
						continue
					}
					io.Copy(io.Discard, rd)
				}
			})
			select {
			case <-a.stop:
			case <-done:
			}
		})
	}
}

// sessions opens the attacker's sessions (2 × the usual per-client limit
// of 4, to see the refusals) and runs the attack's commands on each.
func (a *attacker) sessions(ctx context.Context) {
	u := a.t.url + "?" + a.ar.Query
	var wg sync.WaitGroup
	for k := range 8 {
		if a.stopped() {
			break
		}
		c := a.first
		if k > 0 || c == nil {
			c = a.open(u)
		}
		if c == nil {
			continue
		}
		wg.Add(1)
		spawn(func() { defer wg.Done(); a.session(c) })
	}
	wg.Wait()
}

// open opens one of the attacker's sessions at u, counting it or its
// refusal; nil when it was refused or could not be dialled.
func (a *attacker) open(u string) *client {
	c, err := dialAs(u, kindNormal, time.Now(), a.id)
	if err != nil {
		a.answer("dial error", err.Error())
		return nil
	}
	if c.refused() {
		a.mu.Lock()
		a.ar.Refused++
		a.mu.Unlock()
		a.answer("refused "+c.closeCode, c.closeReason)
		c.conn.Close()
		return nil
	}
	a.mu.Lock()
	a.ar.Sessions++
	a.mu.Unlock()
	return c
}

// session sends the attack's commands on c until stop, counting replies.
func (a *attacker) session(c *client) {
	defer c.conn.Close()
	replies := make(chan struct{}, 1)
	spawn(func() {
		for {
			mt, rd, err := c.conn.NextReader()
			if err != nil {
				close(replies)
				return
			}
			if mt != websocket.TextMessage {
				// A binary answer (decoded, compare, fit_density,
				// message_figure) by its header's type, near the start;
				// frames and setups are not answers.
				head := make([]byte, 80)
				n, _ := io.ReadFull(rd, head)
				io.Copy(io.Discard, rd)
				if typ := binaryType(head[:n]); typ != "frame" && typ != "setup" && typ != "" {
					a.answer(typ, "")
				}
				continue
			}
			b, err := io.ReadAll(rd)
			if err != nil {
				close(replies)
				return
			}
			var m struct {
				Type  string `json:"type"`
				Op    string `json:"op"`
				Error string `json:"error"`
			}
			if json.Unmarshal(b, &m) != nil || m.Op == "speed" {
				continue
			}
			switch m.Type {
			case "ack":
				a.answer("ack", "")
			case "error":
				a.answer("error: "+firstWords(m.Error, 6), m.Error)
			default:
				continue
			}
			select {
			case replies <- struct{}{}:
			default:
			}
		}
	})
	every := map[string]time.Duration{AttackCompare: 500 * time.Millisecond, AttackDensity: 500 * time.Millisecond, AttackReset: 500 * time.Millisecond,
		AttackFigure: 100 * time.Millisecond, AttackDecode: 50 * time.Millisecond}[a.o.Attack]
	tick := time.NewTicker(max(every, time.Millisecond))
	defer tick.Stop()
	for k := 1; ; k++ {
		var cmd string
		switch a.o.Attack {
		case AttackAddData:
			cmd = fmt.Sprintf(`{"id":%d,"op":"add_data","x":[%g],"y":[%g]}`, k, rand.Float64()*4-2, rand.Float64()*2-1)
		case AttackCompare:
			cmd = fmt.Sprintf(`{"id":%d,"op":"compare","n":5000}`, k)
		case AttackDensity:
			cmd = fmt.Sprintf(`{"id":%d,"op":"fit_density","samples":5000}`, k)
		case AttackReset:
			cmd = fmt.Sprintf(`{"id":%d,"op":"reset","seed":%d}`, k, k)
		case AttackFigure:
			var ins []string
			for range 8 {
				ins = append(ins, fmt.Sprintf(`{"mean":%g,"var":%g}`, rand.Float64()*2-1, 0.01+rand.Float64()))
			}
			cmd = fmt.Sprintf(`{"id":%d,"op":"message_figure","samples":100000,"inputs":[%s]}`, k, strings.Join(ins, ","))
		case AttackDecode:
			pts := make([]string, 128)
			for i := range pts {
				pts[i] = strconv.FormatFloat(rand.Float64()*4-2, 'g', 4, 64)
			}
			cmd = fmt.Sprintf(`{"id":%d,"op":"decode","points":[%s]}`, k, strings.Join(pts, ","))
		}
		c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if c.conn.WriteMessage(websocket.TextMessage, []byte(cmd)) != nil {
			return
		}
		a.reqs.Add(1)
		if a.o.Attack == AttackAddData { // as fast as they are answered
			select {
			case <-a.stop:
				return
			case _, ok := <-replies:
				if !ok {
					return
				}
			}
			continue
		}
		select {
		case <-a.stop:
			return
		case <-tick.C:
		}
	}
}

// wideCSV is the campaign's wide upload: 2000 rows of one input and 460
// smooth outputs.
func wideCSV() []byte {
	var b bytes.Buffer
	b.WriteString("x1")
	for j := 1; j <= 460; j++ {
		fmt.Fprintf(&b, ",y%d", j)
	}
	b.WriteByte('\n')
	for i := range 2000 {
		t := float64(i) / 1999
		fmt.Fprintf(&b, "%.4f", t)
		for j := range 460 {
			fmt.Fprintf(&b, ",%.4f", math.Sin(6*t+float64(j)*0.37)+0.1*math.Cos(float64(i*j)))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// upload is a body for POST /model or /data.
type upload struct {
	route, typ string
	body       []byte
}

// hostileBodies are the campaign's upload bombs, each just under 16 MiB:
// data rows "[0]," for POST /model, and for POST /data the most numbers a
// CSV may hold (2000 rows of 1000 columns) and one huge quoted field.
func hostileBodies() []upload {
	const limit = 16 << 20
	head, tail := []byte(`{"data":{"X":[`), []byte(`[0]],"Y":[[0]]},"layers":[]}`)
	rows := bytes.Repeat([]byte("[0],"), (limit-len(head)-len(tail))/4)
	model := append(append(append([]byte{}, head...), rows...), tail...)
	var b bytes.Buffer
	b.WriteString("x1")
	for j := 1; j < 1000; j++ {
		fmt.Fprintf(&b, ",y%d", j)
	}
	b.WriteByte('\n')
	row := bytes.Repeat([]byte("0.00000,"), 1000)
	row[len(row)-1] = '\n'
	for range 2000 {
		b.Write(row)
	}
	field := append(append([]byte("x,y,z\n0,0,\""), bytes.Repeat([]byte("b"), limit-64)...), "\"\n"...)
	return []upload{{"model", "application/json", model}, {"data", "text/csv", b.Bytes()}, {"data", "text/csv", field}}
}

// uploads posts the bodies in turn from k goroutines until stop.
func (a *attacker) uploads(ctx context.Context, k int, bodies []upload) {
	base := strings.Replace(strings.TrimSuffix(a.t.url, "/ws"), "ws", "http", 1)
	hc := &http.Client{Timeout: 60 * time.Second}
	defer hc.CloseIdleConnections() // the server's goroutines settle
	var wg sync.WaitGroup
	for g := range k {
		wg.Add(1)
		spawn(func() {
			defer wg.Done()
			for i := g; !a.stopped() && ctx.Err() == nil; i++ {
				up := bodies[i%len(bodies)]
				req, _ := http.NewRequestWithContext(ctx, "POST", base+"/"+up.route, bytes.NewReader(up.body))
				req.Header.Set("Content-Type", up.typ)
				req.Header.Set("X-Forwarded-For", a.id)
				a.reqs.Add(1)
				resp, err := hc.Do(req)
				if err != nil {
					a.answer("HTTP error", err.Error())
					time.Sleep(100 * time.Millisecond)
					continue
				}
				msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
				resp.Body.Close()
				detail := ""
				if resp.StatusCode != 200 {
					detail = strings.TrimSpace(string(msg))
				}
				a.answer(fmt.Sprintf("HTTP %d %s", resp.StatusCode, up.route), detail)
			}
		})
	}
	wg.Wait()
}

// forks follows the first victim's shared session and asks for forks as
// fast as they are answered.
func (a *attacker) forks() {
	if a.victim.share == "" {
		return
	}
	h := http.Header{}
	h.Set("X-Forwarded-For", a.id)
	conn, _, err := dialer.Dial(a.t.url+"?follow="+a.victim.share, h)
	if err != nil {
		a.answer("fork dial error", err.Error())
		return
	}
	defer conn.Close()
	for k := 1; !a.stopped(); k++ {
		conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if conn.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"id":%d,"op":"fork"}`, k)) != nil {
			return
		}
		a.reqs.Add(1)
		for {
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			mt, b, err := conn.ReadMessage()
			if err != nil {
				return
			}
			var m struct {
				Type, Op, Error string
			}
			if mt != websocket.TextMessage || json.Unmarshal(b, &m) != nil || m.Op != "fork" {
				continue
			}
			if m.Type == "ack" {
				a.answer("fork ack", "")
			} else {
				a.answer("fork error: "+firstWords(m.Error, 6), m.Error)
			}
			break
		}
	}
}

// firstWords is s cut to its first n words, to count answers by kind.
func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}

func (ar *AttackReport) writeText(w io.Writer) {
	fmt.Fprintf(w, "attack:       %s by %d client(s) from %s, from %.1f s", ar.Attack, ar.Clients, ar.Identity, ar.Started)
	if ar.Query != "" {
		fmt.Fprintf(w, " (sessions %q)", ar.Query)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "victims:      frames/s before p50 %.1f mean %.1f; during p50 %.1f mean %.1f min %.1f: %.0f %% kept; replies during p50 %.1f ms p95 %.1f ms\n",
		ar.Before.P50, ar.Before.Mean, ar.During.P50, ar.During.Mean, ar.During.Min, 100*ar.Ratio, ar.ReplyDuring.P50, ar.ReplyDuring.P95)
	fmt.Fprintf(w, "newcomers:    %d of %d honest new sessions admitted", ar.HonestAdmitted, ar.HonestTried)
	if ar.HonestRefusal != "" {
		fmt.Fprintf(w, " (first refusal: %s)", ar.HonestRefusal)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "memory:       RSS peak %.0f MB, %.0f MB at the end; budget %.0f MiB (peak %.2f × budget)\n", ar.RSSPeakMB, ar.RSSAfterMB, ar.BudgetMB, ar.RSSBudget)
	fmt.Fprintf(w, "attacker:     %d sessions, %d refused, %d requests; answers:", ar.Sessions, ar.Refused, ar.Requests)
	keys := make([]string, 0, len(ar.Answers))
	for k := range ar.Answers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, " %q×%d", k, ar.Answers[k])
	}
	fmt.Fprintln(w)
	if ar.FirstError != "" {
		fmt.Fprintf(w, "first refusal: %s\n", ar.FirstError)
	}
	verdict := "PASS"
	if !ar.Pass {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "acceptance:   %s (victims ≥ 80 %% of their frame rate, every newcomer admitted, RSS ≤ 1.25 × budget)\n", verdict)
}

// binaryType is the "type" of a binary message from the start of its JSON
// header (wire's layout: a 4-byte length, then the header).
func binaryType(head []byte) string {
	const key = `"type":"`
	i := bytes.Index(head, []byte(key))
	if i < 0 {
		return ""
	}
	rest := head[i+len(key):]
	if j := bytes.IndexByte(rest, '"'); j >= 0 {
		return string(rest[:j])
	}
	return ""
}
