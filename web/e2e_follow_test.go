package web

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"
)

// TestBrowserFollow: the presenter's "Share live" gives a link and the
// page counts who follows it; a page that opens such a link follows the
// session read-only (the presenter's frames, the follow bar), and "Fork"
// gives it a session of its own at the presenter's iteration, which it
// steers without moving the presenter's. A follower is not offered the
// restarts' "use" buttons, which it could not use; its fork is. (One browser tab plays each role
// in turn; the other end is a websocket client.)
func TestBrowserFollow(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: not in the short tier")
	}
	e := newE2E(t)
	ws := "ws" + strings.TrimPrefix(e.base, "http") + "/ws?"

	// The page presents; a websocket client follows.
	e.openPaused()
	e.run(chromedp.Click(`[data-testid="share"]`))
	link := evalAs[string](e, `document.querySelector('[data-testid="share-link"]').value`)
	_, key, ok := strings.Cut(link, "/?follow=")
	if !ok || key == "" {
		t.Fatalf("share link %q", link)
	}
	// The whole link is in view (students copy it off the projector), in
	// the window, at a projector's 1024 px and at 1920.
	for _, w := range []int64{1024, 1920} {
		e.run(chromedp.EmulateViewport(w, 768))
		e.settle()
		if cut := evalAs[string](e, `(() => {
		  const i = document.querySelector('[data-testid="share-link"]'), d = document.querySelector('[data-testid="share-dialog"]').getBoundingClientRect();
		  return (i.scrollWidth > i.clientWidth + 1 ? "the link is cut: " + i.scrollWidth + " px in " + i.clientWidth + "; " : "") + (d.left < 0 || d.right > innerWidth ? "the dialog leaves the window" : "");
		})()`); cut != "" {
			t.Errorf("share dialog at %d px: %s", w, cut)
		}
	}
	e.run(chromedp.EmulateViewport(1400, 1500))
	f, _, err := websocket.DefaultDialer.Dial(ws+"follow="+key, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			if _, _, err := f.ReadMessage(); err != nil {
				return
			}
		}
	}()
	e.eval(`window.dgpviz.send({op: "step", n: 3})`, nil)
	e.waitFor("one watcher", `document.getElementById("followers").textContent === "1" && !document.getElementById("followers-box").hidden`)
	f.Close()

	// A websocket client presents; the page follows, then forks.
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
	go func() {
		for {
			if _, _, err := p.ReadMessage(); err != nil {
				return
			}
		}
	}()
	p.WriteJSON(map[string]any{"id": 1, "op": "step", "n": 20})
	e.run(chromedp.Navigate(e.base + "/?follow=" + hello.ShareKey))
	e.waitFor("the presenter's frames", `window.dgpviz && window.dgpviz.state.follower === true && window.dgpviz.state.frame && window.dgpviz.state.frame.iter >= 20`)
	e.waitFor("the follow bar", `!document.querySelector('[data-testid="follow-bar"]').hidden`)
	e.screenshot("follower", "")
	if shown := evalAs[[]bool](e, restartsUse); shown[0] || shown[1] {
		t.Errorf("a follower's restarts table shows its use buttons (button, column: %v)", shown)
	}
	e.run(chromedp.Click(`[data-testid="fork"]`))
	e.waitFor("its own session", `window.dgpviz.state.follower === false && window.dgpviz.state.frame && window.dgpviz.state.frame.iter >= 20 && document.querySelector('[data-testid="follow-bar"]').hidden && !location.search.includes("follow=")`)
	e.eval(`window.dgpviz.send({op: "step", n: 10})`, nil)
	// Its copy's setup clears the frame until the copy's first one.
	e.waitFor("its own iterations", `window.dgpviz.state.frame?.iter >= 30`)
	if shown := evalAs[[]bool](e, restartsUse); !shown[0] || !shown[1] {
		t.Errorf("a fork's restarts table hides its use buttons (button, column: %v)", shown)
	}
	e.noErrors()
}

// restartsUse draws two restarts in a copy of the explorer's restarts
// table (the step data have none) and says whether restart 2's "use"
// button and its column's header are shown.
const restartsUse = `import("/static/views/explorer/restarts.js").then(({ createRestarts }) => {
  const root = document.createElement("div");
  root.append(document.querySelector('[data-testid="explorer-restarts"]').cloneNode(true));
  document.body.append(root);
  createRestarts(root, () => {}).draw({ chosen: 1, live: 1, list: [
    { restart: 1, start: "pca", iters: 10, bound: -5, score: 0.9 }, { restart: 2, start: "linear", iters: 10, bound: -6, score: 0.8 }] });
  const shown = (sel) => root.querySelector(sel).getClientRects().length > 0;
  const out = [shown('[data-testid="explorer-restart-use-2"]'), shown("th.restart-use")];
  root.remove();
  return out;
})`
