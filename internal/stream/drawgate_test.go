package stream

import (
	"strings"
	"testing"
	"time"

	"dgpviz/internal/share"
	"dgpviz/internal/stream/streamtest"
)

// frames reads c's messages on a goroutine of its own and returns its
// frames' sequence numbers and its replies (a read deadline would break
// the connection, and the test must see frames not come).
func frames(c *streamtest.Client) (<-chan uint64, <-chan map[string]any) {
	seqs, replies := make(chan uint64, 256), make(chan map[string]any, 16)
	go func() {
		for {
			m, err := c.Read(time.Minute)
			if err != nil {
				close(seqs)
				return
			}
			switch {
			case m.Type() == "frame":
				seqs <- uint64(streamtest.Num(m.Frame["seq"]))
			case m.Text != nil:
				replies <- m.Text
			}
		}
	}()
	return seqs, replies
}

// next returns the next frame's seq within timeout.
func next(seqs <-chan uint64, timeout time.Duration) (uint64, bool) {
	select {
	case s, ok := <-seqs:
		return s, ok
	case <-time.After(timeout):
		return 0, false
	}
}

// latest drains seqs until none comes for 100 ms and returns the last.
func latest(seqs <-chan uint64, last uint64) uint64 {
	for {
		s, ok := next(seqs, 100*time.Millisecond)
		if !ok {
			return last
		}
		last = s
	}
}

// TestDrawnPacesFrames: a page that says which frame it drew gets the next
// only then (or after share.DrawGateTimeout); a page that never says it gets
// frames as before; a follower is paced the same way; "drawn" without
// its seq is an error that names the field. Each "step" makes one new
// state to show.
func TestDrawnPacesFrames(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, streamtest.Paused)
	seqs, replies := frames(c)
	step := func() { c.Send(map[string]any{"op": "step", "n": 1}) }
	seq, ok := next(seqs, 10*time.Second)
	if !ok {
		t.Fatal("no first frame")
	}
	// Not saying "drawn": every step's frame comes.
	for range 3 {
		step()
		if seq, ok = next(seqs, 5*time.Second); !ok {
			t.Fatal("no frame for a step without drawn")
		}
	}
	// Saying it: a step's frame comes once the last one is drawn.
	c.Send(map[string]any{"op": "drawn", "seq": seq})
	step()
	if seq, ok = next(seqs, 5*time.Second); !ok {
		t.Fatal("no frame for a step after drawn")
	}
	step() // frame seq undrawn
	start := time.Now()
	if s, ok := next(seqs, 400*time.Millisecond); ok {
		t.Fatalf("frame %d came while frame %d was undrawn", s, seq)
	}
	s, ok := next(seqs, share.DrawGateTimeout+2*time.Second)
	if !ok {
		t.Fatal("no frame after the gate's timeout")
	}
	if d := time.Since(start); d < share.DrawGateTimeout/2 {
		t.Errorf("the undrawn page's frame came after %v", d)
	}
	seq = s
	c.Send(map[string]any{"op": "drawn", "seq": seq})
	step()
	if _, ok := next(seqs, 5*time.Second); !ok {
		t.Fatal("no frame for a step after drawn")
	}

	id := c.Send(map[string]any{"op": "drawn"})
	for answered := false; !answered; { // past the hello and the steps' acks
		select {
		case r := <-replies:
			if streamtest.Num(r["id"]) != float64(id) {
				continue
			}
			answered = true
			if r["type"] != "error" || !strings.Contains(r["error"].(string), "seq") {
				t.Errorf("drawn without seq: %v", r)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no reply to drawn without seq")
		}
	}

	// A follower of a second session, paced by its own drawn.
	key := ""
	p := e.Dial(t, streamtest.Paused)
	p.Until("hello", 5*time.Second, func(m streamtest.Msg) bool {
		key, _ = m.Text["share_key"].(string)
		return m.Type() == "hello"
	})
	pseqs, _ := frames(p)
	f := e.Dial(t, "follow="+key)
	fseqs, _ := frames(f)
	last, ok := next(fseqs, 10*time.Second)
	if !ok {
		t.Fatal("the follower got no frame")
	}
	f.Send(map[string]any{"op": "drawn", "seq": last})
	time.Sleep(100 * time.Millisecond) // the drawn reaches the server before the step's frame
	p.Send(map[string]any{"op": "step", "n": 1})
	if s, ok := next(fseqs, 5*time.Second); !ok || s <= last {
		t.Fatalf("follower: frame %d (%v) after drawing %d", s, ok, last)
	}
	p.Send(map[string]any{"op": "step", "n": 1})
	if _, ok := next(pseqs, 5*time.Second); !ok {
		t.Fatal("the presenter got no frame for its step")
	}
	if s, ok := next(fseqs, 400*time.Millisecond); ok {
		t.Fatalf("follower: frame %d came while the last was undrawn", s)
	}
}
