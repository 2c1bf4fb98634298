// Package browsertest starts headless Chromium for the browser tests of
// the packages that cannot share web's (relay's and cmd/viz's: web's
// test helpers would import them back): one place that finds the
// browser, skips without one, and fails on CI without one.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Find returns the Chromium to run: $CHROME_PATH, else the first of the
// usual names on the PATH, else "".
func Find() string {
	if p := os.Getenv("CHROME_PATH"); p != "" {
		return p
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// Require returns the Chromium to run, skipping t in the short tier or
// when there is none, and failing it when there is none and CI is set.
func Require(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("browser tests are not in the short tier (-short)")
	}
	exe := Find()
	if exe == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no Chromium found and CI is set: install it (apt-get install chromium) or set CHROME_PATH")
		}
		t.Skip("no Chromium found (apt-get install chromium, or set CHROME_PATH); browser test skipped")
	}
	return exe
}

// Start starts headless Chromium for t with a window of w×h pixels and
// returns its context, bounded by 120 s; the browser stops when t ends.
func Start(t testing.TB, w, h int) context.Context {
	t.Helper()
	exe := Require(t)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(w, h))
	bctx, cancelC := chromedp.NewContext(actx)
	// The first call starts the browser; it must not have a timeout.
	if err := chromedp.Do(bctx); err != nil {
		cancelC()
		cancelA()
		t.Fatalf("starting %s: %v", exe, err)
	}
	ctx, cancelT := context.WithTimeout(bctx, 120*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	return ctx
}
