package web

import (
	"dgpviz/internal/wire"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"
)

// TestBrowserFollowerMirrorsPresenter: a page that follows late draws the
// bound history from the presenter's first iteration, not from when it
// joined, and mirrors the presenter's presentation state (presentation
// mode, type scale, slide) as it changes; a presenting page sends its
// state to its followers, at connect and when it changes.
func TestBrowserFollowerMirrorsPresenter(t *testing.T) {
	e := newE2E(t)
	ws := "ws" + strings.TrimPrefix(e.base, "http") + "/ws?"

	// A websocket client presents: 30 iterations, then presentation mode.
	p, _, err := websocket.DefaultDialer.Dial(ws+"play=0&speed=0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var hello struct {
		ShareKey string `json:"share_key"`
	}
	if err := p.ReadJSON(&hello); err != nil {
		t.Fatal(err)
	}
	p.WriteJSON(map[string]any{"op": "step", "n": 30}) // one command: a step replaces one still running
	p.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		mt, b, err := p.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for the presenter's iteration 30: %v", err)
		}
		if d, err := wire.Decode(b); mt == websocket.BinaryMessage && err == nil && d["type"] == "frame" && d["iter"] == 30.0 {
			break
		}
	}
	p.SetReadDeadline(time.Time{})
	go func() {
		for {
			if _, _, err := p.ReadMessage(); err != nil {
				return
			}
		}
	}()
	p.WriteJSON(map[string]any{"op": "present", "present": true, "scale": 1.7, "slide": "lesson:paper/2"})
	e.run(chromedp.Navigate(e.base + "/?follow=" + hello.ShareKey))
	e.waitFor("the presenter's frames", `window.dgpviz && window.dgpviz.state.follower && window.dgpviz.state.frame && window.dgpviz.state.frame.iter >= 30`)
	e.waitFor("the history from iteration 0", `window.dgpviz.state.history.length >= 2 && window.dgpviz.state.history[0].iter === 0 && window.dgpviz.state.history[0].terms.length === 3`)
	e.waitFor("presentation mode at 1.7 on the presenter's slide", `document.body.classList.contains("present") && location.search.includes("scale=1.7") && window.dgpviz.state.slide === "lesson:paper/2"`)
	e.screenshot("follower-presenting.png", "")
	p.WriteJSON(map[string]any{"op": "present", "present": false, "scale": 1.7})
	e.waitFor("presentation mode left", `!document.body.classList.contains("present")`)
	e.noErrors()

	// The page presents; a websocket client follows it.
	e.openPaused()
	key := evalAs[string](e, `window.dgpviz.state.shareKey`)
	f, _, err := websocket.DefaultDialer.Dial(ws+"follow="+key, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	next := func(what string, pred func(map[string]any) bool) {
		t.Helper()
		f.SetReadDeadline(time.Now().Add(20 * time.Second))
		for {
			mt, b, err := f.ReadMessage()
			if err != nil {
				t.Fatalf("waiting for %s: %v", what, err)
			}
			var m map[string]any
			if mt == websocket.TextMessage && json.Unmarshal(b, &m) == nil && m["type"] == "presentation" && pred(m) {
				return
			}
		}
	}
	next("the page's state (not presenting)", func(m map[string]any) bool { return m["present"] == false })
	e.eval(`document.dispatchEvent(new KeyboardEvent("keydown", {key: "p"}))`, nil)
	next("presentation mode", func(m map[string]any) bool { return m["present"] == true })
	e.eval(`window.dgpviz.setSlide("lesson:paper/4")`, nil)
	next("the slide", func(m map[string]any) bool { return m["slide"] == "lesson:paper/4" })
	e.noErrors()
}
