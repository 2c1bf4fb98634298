package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/share"
	"dgpviz/internal/stream"
	"dgpviz/internal/wire"
	"dgpviz/web"

	"github.com/gorilla/websocket"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// world is a presenter's server and relays on one embedded NATS server,
// each on the credentials of its role.
type world struct {
	t         *testing.T
	ns        *server.Server
	natsAddr  string
	natsOpts  ServerOptions
	creds     map[Role]*Credentials
	presenter *stream.Server
	pURL      string // http://…/
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, creds: map[Role]*Credentials{Presenter: newCreds(t), Relay: newCreds(t)}}
	w.natsOpts = ServerOptions{Users: []User{w.creds[Presenter].User(Presenter), w.creds[Relay].User(Relay)}}
	ns, err := StartNATS("127.0.0.1:0", w.natsOpts)
	if err != nil {
		t.Fatal(err)
	}
	w.ns, w.natsAddr = ns, ns.Addr().String()
	t.Cleanup(func() { w.ns.Shutdown() })
	nc := w.connect("presenter", Presenter)
	var site http.Handler // the presenter's page and websocket
	hs := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { site.ServeHTTP(rw, r) }))
	w.pURL = hs.URL + "/"
	l := admit.DefaultLimits()
	srv, err := stream.NewServer(stream.Options{Limits: l, Defaults: admit.DefaultConfig(), Workers: 1,
		Share: share.ShareOptions{Publisher: NewPublisher(nc, PublisherOptions{}), PublicURL: w.pURL}})
	if err != nil {
		t.Fatal(err)
	}
	w.presenter = srv
	site = web.New(srv, srv, slog.New(slog.DiscardHandler))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		hs.Close()
	})
	return w
}

func newCreds(t testing.TB) *Credentials {
	t.Helper()
	c, err := NewCredentials()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (w *world) connect(name string, r Role) *nats.Conn {
	w.t.Helper()
	nc, err := Connect("nats://"+w.natsAddr, ConnectOptions{Name: name, Credentials: w.creds[r]})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(nc.Close)
	return nc
}

// testRelay is a relay on its own NATS connection and HTTP server.
type testRelay struct {
	srv *Server
	nc  *nats.Conn
	hs  *httptest.Server
	ws  string // ws://…/ws
}

func (w *world) relay(name string) *testRelay {
	w.t.Helper()
	nc := w.connect(name, Relay)
	var srv *Server
	hs := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { srv.Handler().ServeHTTP(rw, r) }))
	srv, err := New(Options{NATS: nc, PublicURL: hs.URL + "/"})
	if err != nil {
		w.t.Fatal(err)
	}
	r := &testRelay{srv: srv, nc: nc, hs: hs, ws: "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws"}
	w.t.Cleanup(func() { r.stop() })
	return r
}

func (r *testRelay) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.srv.Shutdown(ctx)
	r.hs.Close()
	r.nc.Close()
}

// peer is a websocket client that keeps every message it reads.
type peer struct {
	t    *testing.T
	c    *websocket.Conn
	msgs chan wsMsg
	next int64
}

type wsMsg struct {
	binary bool
	b      []byte
	typ    string
	text   map[string]any
	err    error // the connection's end
}

func dialPeer(t *testing.T, url string) *peer {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	p := &peer{t: t, c: c, msgs: make(chan wsMsg, 4096), next: 100}
	t.Cleanup(func() { c.Close() })
	go func() {
		for {
			mt, b, err := c.ReadMessage()
			if err != nil {
				p.msgs <- wsMsg{err: err}
				return
			}
			m := wsMsg{binary: mt == websocket.BinaryMessage, b: b}
			if m.binary {
				d, err := wire.Decode(b)
				if err != nil {
					t.Errorf("a binary message does not decode: %v", err)
				}
				m.typ, _ = d["type"].(string)
			} else {
				json.Unmarshal(b, &m.text)
				m.typ, _ = m.text["type"].(string)
			}
			select {
			case p.msgs <- m:
			default: // a test that stopped reading
			}
		}
	}()
	return p
}

// until reads until pred accepts a message.
func (p *peer) until(what string, pred func(wsMsg) bool) wsMsg {
	p.t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m := <-p.msgs:
			if m.err != nil {
				p.t.Fatalf("waiting for %s: %v", what, m.err)
			}
			if pred(m) {
				return m
			}
		case <-timeout:
			p.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (p *peer) send(cmd map[string]any) int64 {
	p.t.Helper()
	p.next++
	cmd["id"] = p.next
	if err := p.c.WriteJSON(cmd); err != nil {
		p.t.Fatal(err)
	}
	return p.next
}

func (p *peer) reply(id int64) map[string]any {
	p.t.Helper()
	return p.until("reply", func(m wsMsg) bool {
		got, _ := m.text["id"].(float64)
		return m.text != nil && int64(got) == id && (m.typ == "ack" || m.typ == "error")
	}).text
}

// closed waits for the connection's end and returns its close code.
func (p *peer) closed() int {
	p.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m := <-p.msgs:
			if m.err != nil {
				var ce *websocket.CloseError
				if errors.As(m.err, &ce) {
					return ce.Code
				}
				return -1
			}
		case <-timeout:
			p.t.Fatal("timed out waiting for the connection to close")
		}
	}
}

func isType(typ string) func(wsMsg) bool { return func(m wsMsg) bool { return m.typ == typ } }

func seqOf(t *testing.T, b []byte) uint64 {
	d, err := wire.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := d["seq"].(float64)
	return uint64(s)
}

// presenterFrames keeps the presenter's frames by seq.
type presenterFrames struct {
	mu     sync.Mutex
	frames map[uint64][]byte
	setup  []byte
}

func (pf *presenterFrames) get(seq uint64) []byte {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	return pf.frames[seq]
}

// TestRelays: a presenter's server publishes to an embedded NATS server;
// followers on two relays get the presenter's setup and frames byte for
// byte, and late joiners the bound history from iteration 0 and the
// presentation state; followers are read-only; a fork through a relay
// gives a link to the presenter's server that resumes at the presenter's
// iteration; the presenter counts the relays' followers; a relay
// unsubscribes when its last follower leaves; a relay that restarts and
// a NATS server that restarts are recovered from; when the presenter
// leaves, every follower is closed with 1001.
func TestRelays(t *testing.T) {
	w := newWorld(t)
	a, b := w.relay("relay A"), w.relay("relay B")

	// The presenter, paused: frames come from its steps.
	p := dialPeer(t, strings.Replace(w.pURL, "http", "ws", 1)+"ws?play=0&speed=0")
	hello := p.until("hello", isType("hello")).text
	key, _ := hello["share_key"].(string)
	pf := &presenterFrames{frames: map[uint64][]byte{}}
	pf.setup = p.until("setup", isType("setup")).b
	keep := func(m wsMsg) {
		if m.typ == "frame" {
			pf.mu.Lock()
			pf.frames[seqOf(t, m.b)] = m.b
			pf.mu.Unlock()
		}
	}
	// step runs n iterations and returns the frame after them.
	step := func(n int) wsMsg {
		id := p.send(map[string]any{"op": "step", "n": n})
		for {
			m := p.until("a frame", func(m wsMsg) bool { keep(m); return m.typ == "frame" })
			if d, _ := wire.Decode(m.b); d["applied"].(float64) >= float64(id) {
				return m
			}
		}
	}
	step(5)
	p.send(map[string]any{"op": "present", "present": true, "scale": 1.6, "slide": "lesson:paper/2"})

	// Followers on both relays.
	checkJoin := func(f *peer, wantIter float64) {
		t.Helper()
		h := f.until("hello", isType("hello")).text
		if h["follower"] != true || h["relay"] != true || h["config"] == nil || h["presenter_url"] != w.pURL {
			t.Errorf("a relay's hello: %v", h)
		}
		// The setup, the history, then frames; the presentation state
		// whenever the relay has it (the presenter's "present" has no
		// reply: it may reach the relay after the snapshot).
		got := map[string]wsMsg{}
		var order []string
		for len(got) < 4 {
			m := f.until("setup, history, presentation and a frame", func(m wsMsg) bool { return m.binary || m.typ == "presentation" })
			if _, ok := got[m.typ]; !ok {
				got[m.typ] = m
				order = append(order, m.typ)
			}
		}
		if o := strings.Join(order, " "); !strings.HasPrefix(strings.ReplaceAll(o, "presentation ", ""), "setup history frame") {
			t.Errorf("a follower of a relay got %s, want the setup, the history, then frames", o)
		}
		if !bytes.Equal(got["setup"].b, pf.setup) {
			t.Errorf("the relay's setup differs from the presenter's")
		}
		hist, _ := wire.Decode(got["history"].b)
		// From the start to (about) now: the relay may not have the
		// presenter's very latest frame yet.
		if it, _ := hist["iters"].([]float64); len(it) < 2 || it[0] != 0 || it[len(it)-1] > wantIter {
			t.Errorf("history iterations %v, want from 0 to at most %v", hist["iters"], wantIter)
		}
		pr := got["presentation"].text
		if pr["present"] != true || pr["scale"] != 1.6 || pr["slide"] != "lesson:paper/2" {
			t.Errorf("presentation %v", pr)
		}
		fr := got["frame"]
		// The presenter's own page may have skipped that frame (its mailbox
		// keeps the latest: a follower's coming publishes one at once);
		// frames after a step are compared below in any case.
		if want := pf.get(seqOf(t, fr.b)); want != nil && !bytes.Equal(fr.b, want) {
			t.Errorf("the relay's first frame (seq %d) differs from the presenter's", seqOf(t, fr.b))
		}
	}
	f1 := dialPeer(t, a.ws+"?follow="+key)
	checkJoin(f1, 5)
	f2 := dialPeer(t, b.ws+"?follow="+key)
	checkJoin(f2, 5)

	// Anything else on the session's subjects is refused by the relays,
	// even from the presenter's identity (which alone may publish there):
	// followers get only the presenter's messages.
	junk := w.connect("junk", Presenter)
	for kind, b := range map[string][]byte{
		"frame":        binaryMsg(`{"v":2,"type":"frame","seq":999999,"sections":[{"t":"f32","n":100,"o":0}]}`, nil),
		"setup":        []byte("not a setup"),
		"presentation": []byte(`{"v":2,"type":"presentation","present":true,"scale":99}`),
	} {
		junk.Publish(streamSubject(key, kind), b)
	}
	junk.Flush()

	// Frames byte-identical to the presenter's, on both relays.
	last := step(4)
	want := seqOf(t, last.b)
	for _, f := range []*peer{f1, f2} {
		got := f.until("the presenter's latest frame", func(m wsMsg) bool { return m.typ == "frame" && seqOf(t, m.b) == want })
		if !bytes.Equal(got.b, last.b) {
			t.Errorf("frame %d differs from the presenter's", want)
		}
	}

	// The presenter's frames count the relays' followers.
	deadline := time.Now().Add(15 * time.Second)
	for {
		d, _ := wire.Decode(step(1).b)
		if d["followers"].(float64) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the presenter's frames count %v followers, want 2 (one on each relay)", d["followers"])
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Read-only, and a bad command is an error, not a crash.
	if r := f1.reply(f1.send(map[string]any{"op": "move", "layer": 0, "index": 1, "z": []float64{0.2}})); r["type"] != "error" || !strings.Contains(r["error"].(string), "read-only") {
		t.Errorf("a follower's edit: %v", r)
	}
	f1.c.WriteMessage(websocket.TextMessage, []byte("{not json"))

	// A late joiner gets the history from the start.
	d, _ := wire.Decode(step(2).b)
	f3 := dialPeer(t, b.ws+"?follow="+key)
	checkJoin(f3, d["iter"].(float64))

	// Fork through a relay: a link to the presenter's server.
	r := f1.reply(f1.send(map[string]any{"op": "fork"}))
	token, _ := r["resume"].(string)
	if r["type"] != "ack" || r["url"] != w.pURL+"?resume="+token {
		t.Fatalf("fork through a relay: %v", r)
	}
	own := dialPeer(t, strings.Replace(w.pURL, "http", "ws", 1)+"ws?resume="+token)
	of, _ := wire.Decode(own.until("the fork's frame", isType("frame")).b)
	if of["iter"] != d["iter"] {
		t.Errorf("the fork starts at iteration %v, the presenter was at %v", of["iter"], d["iter"])
	}
	own.c.Close()

	// The last follower of relay A leaves: it unsubscribes.
	f1.c.Close()
	eventually(t, "relay A unsubscribed", func() bool { return a.srv.Sessions() == 0 && len(w.sessionSubs("relay A")) == 0 })
	if len(w.sessionSubs("relay B")) != 1 {
		t.Errorf("relay B's subscriptions to the session: %v, want one", w.sessionSubs("relay B"))
	}

	// Relay B restarts: its followers (closed with 1012) reconnect to a
	// new relay and carry on from the history.
	b.stop()
	for _, f := range []*peer{f2, f3} {
		if code := f.closed(); code != websocket.CloseServiceRestart {
			t.Errorf("a follower of a relay that shut down was closed with %d, want 1012", code)
		}
	}
	b2 := w.relay("relay B2")
	f2 = dialPeer(t, b2.ws+"?follow="+key)
	checkJoin(f2, d["iter"].(float64))

	// NATS restarts: the relay and the presenter's server reconnect; the
	// follower sees a pause, then the presenter's frames again.
	w.ns.Shutdown()
	w.ns.WaitForShutdown()
	ns, err := StartNATS(w.natsAddr, w.natsOpts)
	if err != nil {
		t.Fatal(err)
	}
	w.ns = ns
	deadline = time.Now().Add(20 * time.Second)
	for {
		want := seqOf(t, step(1).b)
		got := false
		timeout := time.After(time.Second)
	wait:
		for {
			select {
			case m := <-f2.msgs:
				if m.err != nil {
					t.Fatalf("the follower's connection ended while NATS restarted: %v", m.err)
				}
				if m.typ == "frame" && seqOf(t, m.b) >= want {
					got = true
					break wait
				}
			case <-timeout:
				break wait
			}
		}
		if got {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no frames on the relay 20 s after NATS restarted")
		}
	}

	// The presenter leaves (closes its page): the relay's follower is told,
	// 1001. (A dropped connection keeps the share for the resume.)
	p.c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, ""), time.Now().Add(time.Second))
	p.c.Close()
	if code := f2.closed(); code != websocket.CloseGoingAway {
		t.Errorf("after the presenter left the follower was closed with %d, want 1001", code)
	}
	// And a new follower is refused: no such session.
	f4 := dialPeer(t, b2.ws+"?follow="+key)
	if code := f4.closed(); code != websocket.ClosePolicyViolation {
		t.Errorf("following an ended session: close %d, want 1008", code)
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sessionSubs are the subscriptions of the NATS connection named name to
// sessions' streams, as the NATS server sees them.
func (w *world) sessionSubs(name string) []string {
	w.t.Helper()
	cz, err := w.ns.Connz(&server.ConnzOptions{Subscriptions: true})
	if err != nil {
		w.t.Fatal(err)
	}
	var out []string
	for _, c := range cz.Conns {
		if c.Name != name {
			continue
		}
		for _, s := range c.Subs {
			if strings.HasPrefix(s, "dgpviz.share.") {
				out = append(out, s)
			}
		}
	}
	return out
}
