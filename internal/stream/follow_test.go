package stream

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/stream/streamtest"

	"github.com/gorilla/websocket"
)

// TestFollowers: a follower of a shared session gets its hello, setup and
// frames (the presenter's iterations, the follower count in the frames),
// may not edit, and can fork a session of its own that starts from the
// presenter's model; a follower that never reads holds up no one; when
// the presenter leaves, followers are closed with 1001.
func TestFollowers(t *testing.T) {
	e := newEnv(t, nil)
	p := e.Dial(t, streamtest.Paused)
	hello := p.Until("hello", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "hello" }).Text
	key, _ := hello["share_key"].(string)
	if len(key) != 32 {
		t.Fatalf("share key %q", key)
	}
	p.FrameAfter(p.Ack(map[string]any{"op": "step", "n": 7}))

	f := e.Dial(t, "follow="+key)
	fh := f.Until("follower hello", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "hello" }).Text
	if fh["follower"] != true || fh["config"] == nil {
		t.Fatalf("follower hello: %v", fh)
	}
	f.Until("setup", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "setup" })
	first := f.Until("frame", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" }).Frame
	if streamtest.Num(first["iter"]) != 7 {
		t.Errorf("the follower's first frame is at iteration %v, the presenter's at 7", first["iter"])
	}
	silent := e.Dial(t, "follow="+key) // never reads again, once it has joined (its hello comes after)
	silent.Until("the silent follower's hello", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "hello" })

	// The presenter sees two followers; the follower sees its steps.
	id := p.Ack(map[string]any{"op": "step", "n": 5})
	pf := p.FrameAfter(id)
	if n := streamtest.Num(pf["followers"]); n != 2 {
		t.Errorf("the presenter's frame counts %v followers, want 2", n)
	}
	got := f.Until("the presenter's step", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" && streamtest.Num(m.Frame["iter"]) == 12 }).Frame
	if streamtest.Num(got["bound"]) != streamtest.Num(pf["bound"]) {
		t.Errorf("follower's bound %v, presenter's %v", got["bound"], pf["bound"])
	}
	// Read-only.
	r := f.Reply(f.Send(map[string]any{"op": "move", "layer": 0, "index": 1, "z": []float64{0.2}}))
	if s, _ := r["error"].(string); r["type"] != "error" || !strings.Contains(s, "read-only") {
		t.Errorf("a follower's edit: %v", r)
	}
	// Fork.
	r = f.Reply(f.Send(map[string]any{"op": "fork"}))
	token, _ := r["resume"].(string)
	if r["type"] != "ack" || token == "" {
		t.Fatalf("fork: %v", r)
	}
	own := e.Dial(t, "resume="+token)
	of := own.Until("own frame", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" }).Frame
	if streamtest.Num(of["iter"]) != 12 || streamtest.Num(of["bound"]) != streamtest.Num(pf["bound"]) {
		t.Errorf("the fork starts at iteration %v bound %v; the presenter was at 12, %v", of["iter"], of["bound"], pf["bound"])
	}
	own.Ack(map[string]any{"op": "move", "layer": 0, "index": 1, "z": []float64{0.2}}) // it is its own now
	_ = silent

	// The presenter leaves (closes its tab): the follower is closed with
	// 1001 at once. (A dropped connection keeps the share for the resume:
	// TestResumeKeepsShare.)
	p.Conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, ""), time.Now().Add(time.Second))
	p.Conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := f.Read(time.Until(deadline))
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway {
			t.Errorf("after the presenter left: %v, want close 1001", err)
		}
		break
	}
	if c := e.Dial(t, "follow="+key); true {
		_, err := c.Read(5 * time.Second)
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || !strings.Contains(ce.Text, "no such shared session") {
			t.Errorf("following an ended session: %v", err)
		}
	}
}

// TestFollowerDecodesFaces: a follower of the Frey view gets its faces
// (decode changes nothing, so it is answered from the presenter's
// published model): the same grey levels the presenter gets for the same
// point; bad input an error naming the field; edits stay refused.
//
// With the keep-alive shortened, it also checks that a build longer than
// pongWait keeps its connection: the writer pings from the start. Before,
// it began once the model was built, and the reader's deadline ended a
// longer build's session (close 1006): the Frey preset's restarts under
// -race on a busy machine took over a minute, against 60 s.
func TestFollowerDecodesFaces(t *testing.T) {
	if testing.Short() {
		t.Skip("fits the Frey preset on the fixture (seconds under -race): not in the short tier")
	}
	// The ping period keeps share.PingPeriod's slack below the wait.
	defer func(w, p time.Duration) { pongWait, pingPeriod = w, p }(pongWait, pingPeriod)
	pongWait, pingPeriod = 1500*time.Millisecond, 300*time.Millisecond
	e := freyEnv(t, streamtest.FreyFixture(t))
	t0 := time.Now()
	p := e.Dial(t, "data=frey&hidden=2&m=15&play=0")
	// The hello is written once the preset's restarts have run: seconds
	// under -race.
	key, _ := p.Until("hello", streamtest.FreyWait, func(m streamtest.Msg) bool { return m.Type() == "hello" }).Text["share_key"].(string)
	t.Logf("the model was built in %v (pongWait %v)", time.Since(t0).Round(time.Millisecond), pongWait)
	p.Until("frame", 20*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	f := e.Dial(t, "follow="+key)
	f.Until("frame", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })

	want, er := p.Decode(map[string]any{"points": []float64{0.5, -0.25}})
	if er != nil {
		t.Fatalf("presenter's decode: %v", er)
	}
	got, er := f.Decode(map[string]any{"points": []float64{0.5, -0.25}, "frames": []int{3}})
	if er != nil {
		t.Fatalf("follower's decode: %v", er)
	}
	wm, gm := streamtest.Floats(streamtest.Get(want, "mean")), streamtest.Floats(streamtest.Get(got, "mean"))
	if len(gm) != 560 || len(streamtest.Floats(streamtest.Get(got, "recon_mean"))) != 560 {
		t.Fatalf("follower's face: %d pixels, reconstruction %d", len(gm), len(streamtest.Floats(streamtest.Get(got, "recon_mean"))))
	}
	for k := range wm {
		// 1e-9 grey levels: the same model and point, decoded by two
		// decoders (the q16 encoding is exact for equal inputs).
		if math.Abs(wm[k]-gm[k]) > 1e-9 {
			t.Fatalf("pixel %d: follower %v, presenter %v", k, gm[k], wm[k])
		}
	}
	if _, er := f.Decode(map[string]any{"points": []float64{0.5}}); er == nil || !strings.Contains(er["error"].(string), "points") {
		t.Errorf("a follower's bad decode: %v, want an error naming points", er)
	}
	r := f.Reply(f.Send(map[string]any{"op": "move", "layer": 1, "index": 0, "z": []float64{0, 0}}))
	if s, _ := r["error"].(string); r["type"] != "error" || !strings.Contains(s, "read-only") {
		t.Errorf("a follower's edit: %v", r)
	}
}

// TestWatchingAtOnce: a paused presenter, which sends no frames of its
// own, learns at once when a follower comes and when it goes (a fork, a
// closed tab): "watching" did not change until the next frame.
func TestWatchingAtOnce(t *testing.T) {
	e := newEnv(t, nil)
	p := e.Dial(t, streamtest.Paused)
	hello := p.Until("hello", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "hello" }).Text
	key, _ := hello["share_key"].(string)
	p.FrameAfter(p.Ack(map[string]any{"op": "step", "n": 3}))
	f := e.Dial(t, "follow="+key)
	f.Until("follower hello", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "hello" })
	p.Until("a frame counting the follower", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" && streamtest.Num(m.Frame["followers"]) == 1 })
	f.Conn.Close()
	p.Until("a frame counting none", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" && streamtest.Num(m.Frame["followers"]) == 0 })
}
