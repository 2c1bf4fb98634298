package relay

import (
	"context"
	"dgpviz/internal/browsertest"
	"dgpviz/internal/wire"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// waitJS polls cond until it is true; the page may navigate meanwhile.
func waitJS(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		ok, err := chromedp.Run(c, chromedp.Evaluate[bool](`(() => { try { return !!(`+cond+`); } catch { return false; } })()`))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + " | " + (document.getElementById("banner")?.textContent ?? "") + " | " + (document.getElementById("toast")?.textContent ?? "") + " | " + JSON.stringify({f: window.dgpviz?.state.follower, it: window.dgpviz?.state.frame?.iter, r: window.dgpviz?.state.relays, e: window.dgpviz?.errors})`))
			t.Fatalf("waiting for %s: %v; page: %s", what, err, page)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBrowserRelayFailover: a page following through relay A goes on
// through relay B when A goes away (it opens B's page, which A's hello
// listed), with the bound history from the start; "Fork" there opens the
// presenter's page, on a session of its own at the presenter's iteration.
func TestBrowserRelayFailover(t *testing.T) {
	ctx := browsertest.Start(t, 1280, 900)
	w := newWorld(t)
	a, b := w.relay("relay A"), w.relay("relay B")
	eventually(t, "relay A hears of relay B", func() bool { return len(a.srv.relays()) == 2 })

	p := dialPeer(t, strings.Replace(w.pURL, "http", "ws", 1)+"ws?play=0&speed=0")
	key, _ := p.until("hello", isType("hello")).text["share_key"].(string)
	p.send(map[string]any{"op": "step", "n": 30})
	p.until("iteration 30", func(m wsMsg) bool {
		d, _ := wire.Decode(m.b)
		return m.typ == "frame" && d["iter"] == 30.0
	})
	if _, err := chromedp.Run(ctx, chromedp.Navigate(a.hs.URL+"/?follow="+key)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "frames through relay A", `window.dgpviz && window.dgpviz.state.follower && window.dgpviz.state.frame && window.dgpviz.state.frame.iter >= 30 && window.dgpviz.state.relays.length === 2`)

	a.stop()
	waitJS(t, ctx, "frames through relay B", `location.origin === `+"`"+b.hs.URL+"`"+` && window.dgpviz && window.dgpviz.state.frame && window.dgpviz.state.frame.iter >= 30 && window.dgpviz.state.history[0].iter === 0`)
	p.send(map[string]any{"op": "step", "n": 5})
	waitJS(t, ctx, "the presenter's next steps", `window.dgpviz.state.frame.iter >= 35`)

	if _, err := chromedp.Run(ctx, chromedp.Click(`[data-testid="fork"]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the fork on the presenter's server", `location.origin === `+"`"+strings.TrimSuffix(w.pURL, "/")+"`"+` && window.dgpviz && window.dgpviz.state.follower === false && window.dgpviz.state.frame && window.dgpviz.state.frame.iter >= 35`)
	if errs, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.dgpviz.errors`)); len(errs) > 0 {
		t.Errorf("page errors: %q", errs)
	}
}
