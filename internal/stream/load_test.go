package stream

import (
	"errors"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/stream/streamtest"

	"github.com/gorilla/websocket"
)

// TestRefusedWhileSaturated: while the server counts as saturated a new
// session is closed at once with 1013 and a reason saying why; once it no
// longer does, sessions are admitted again.
func TestRefusedWhileSaturated(t *testing.T) {
	e := newEnv(t, nil)
	e.Srv.overloaded.Store(true)
	c := e.Dial(t, streamtest.Paused)
	_, err := c.Read(5 * time.Second)
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseTryAgainLater || !strings.Contains(ce.Text, "at capacity") {
		t.Fatalf("while saturated: %v, want close 1013 saying the server is at capacity", err)
	}
	e.Srv.overloaded.Store(false)
	ok := e.Dial(t, streamtest.Paused)
	ok.Until("frame", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
}

// TestLoadWatchSeesPlayingSessions: the watch samples the frame rates of
// playing sessions (a step demo at full speed gets tens of frames a
// second, far from saturation) and stops with the server.
func TestLoadWatchSeesPlayingSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("samples for several seconds: not in the short tier")
	}
	e := newEnv(t, nil)
	a := e.Dial(t, "play=1")
	b := e.Dial(t, "play=1")
	for _, c := range []*streamtest.Client{a, b} {
		c.Until("frame", 30*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
		// Read on, as a page does: a client that stops reading fills its
		// socket and slows its own frames, which the watch rightly counts.
		go func() {
			for {
				c.Conn.SetReadDeadline(time.Now().Add(10 * time.Second))
				if _, _, err := c.Conn.ReadMessage(); err != nil {
					return
				}
			}
		}()
	}
	time.Sleep(3 * loadSample)
	if e.Srv.overloaded.Load() {
		t.Error("two step demos made the server count as saturated")
	}
}
