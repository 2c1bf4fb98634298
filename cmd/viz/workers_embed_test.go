package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"dgpviz/internal/browsertest"
	"dgpviz/internal/dataset"
	"dgpviz/internal/relay"

	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"
	"github.com/nats-io/nats.go"
)

// TestWorkersEmbedCredentials: viz serve -nats-embed -workers-embed FIT
// writes the workers' credentials (0600, a key of their own), prints the
// viz worker command, and the NATS server lets those credentials serve
// FIT and nothing else: not another fit, not a shared session's stream.
func TestWorkersEmbedCredentials(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	relayPath, workerPath := filepath.Join(dir, "relay.creds"), filepath.Join(dir, "worker.creds")
	if _, _, err := (&shareFlags{}).start("127.0.0.1:8080", &shardFlags{embed: "walk"}, log, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), "-workers-embed needs -nats-embed") {
		t.Errorf("-workers-embed without -nats-embed: %v", err)
	}
	same := &shardFlags{embed: "walk", embedCreds: relayPath}
	if _, _, err := (&shareFlags{embed: "127.0.0.1:0", relayCreds: relayPath}).start("127.0.0.1:8080", same, log, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), "keys of their own") {
		t.Errorf("one file for relays and workers: %v", err)
	}
	bad := &shardFlags{embed: "walk.>"}
	if _, _, err := (&shareFlags{embed: "127.0.0.1:0", relayCreds: relayPath}).start("127.0.0.1:8080", bad, log, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), "-workers-embed") {
		t.Errorf("-workers-embed walk.>: %v", err)
	}

	fit := &shardFlags{embed: "walk", embedCreds: workerPath}
	var out strings.Builder
	_, stop, err := (&shareFlags{embed: "127.0.0.1:0", relayCreds: relayPath}).start("127.0.0.1:8080", fit, log, &out)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	url := fit.embedded.ns.ClientURL()
	if want := "viz worker -nats " + url + " -nats-creds " + workerPath + " -fit walk"; !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "written to "+workerPath) {
		t.Errorf("printed %q, want the path and %q", out.String(), want)
	}
	st, err := os.Stat(workerPath)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the workers' credentials: %v, %v; want mode 0600", st, err)
	}
	wc, err := relay.ReadCredentials(workerPath)
	if err != nil {
		t.Fatal(err)
	}
	if rc, err := relay.ReadCredentials(relayPath); err != nil || rc.PublicKey() == wc.PublicKey() {
		t.Fatalf("the relays' credentials %v (%v) are the workers'", rc, err)
	}

	nc, err := relay.Connect(url, relay.ConnectOptions{Name: "a test's worker", Credentials: wc})
	if err != nil {
		t.Fatalf("the workers' credentials refused: %v", err)
	}
	defer nc.Close()
	// allowed reports whether NATS lets nc do what op does on subject.
	allowed := func(op string, subject string) bool {
		t.Helper()
		var err error
		var sub *nats.Subscription
		if op == "publish" {
			err = nc.Publish(subject, []byte("x"))
		} else {
			sub, err = nc.SubscribeSync(subject)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.FlushTimeout(5 * time.Second); err != nil {
			t.Fatal(err)
		}
		if sub != nil {
			sub.Unsubscribe()
		}
		// The server's refusal, if any, came before its pong.
		e := nc.LastError()
		return !(errors.Is(e, nats.ErrPermissionViolation) && strings.Contains(e.Error(), subject))
	}
	for _, tc := range []struct {
		op, subject string
		want        bool
	}{
		{"publish", "dgpviz.fit.walk.hello", true},
		{"subscribe", "dgpviz.fit.walk.work.w1", true},
		{"publish", "dgpviz.share.KEY.frame", false},
		{"publish", "dgpviz.share.KEY.setup", false},
		{"subscribe", "dgpviz.share.KEY.frame", false},
		{"publish", "dgpviz.session.KEY.join", false},
		{"publish", "dgpviz.fit.other.hello", false},
		{"subscribe", "dgpviz.fit.other.work.w1", false},
		{"publish", "dgpviz.fit.walk.work.w1", false}, // a worker cannot ask others for work
	} {
		if got := allowed(tc.op, tc.subject); got != tc.want {
			t.Errorf("the workers' credentials: %s %s allowed %v, want %v", tc.op, tc.subject, got, tc.want)
		}
	}
}

// serveOnWorkers runs viz serve -nats-embed -workers-embed on a walk of
// 300 rows with args, until t ends, and returns its page's URL, the
// arguments of the viz worker command it printed, its log, and what stops
// it (before the workers: a session's evaluation waits for them).
func serveOnWorkers(t *testing.T, args ...string) (url string, worker []string, log *syncBuffer, stop func()) {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "walk.csv")
	f, err := os.Create(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := dataset.WriteWalkCSV(f, 300, 5); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	log = &syncBuffer{}
	done := make(chan error, 1)
	args = append([]string{"serve", "-addr", "127.0.0.1:0", "-data", data, "-log-level", "info",
		"-nats-embed", "127.0.0.1:0", "-nats-relay-creds", filepath.Join(dir, "relay.creds"),
		"-workers-embed", "lecture", "-workers-embed-creds", filepath.Join(dir, "worker.creds")}, args...)
	go func() { done <- run(ctx, args, &out, log) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("viz serve: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("viz serve did not stop within 10 s")
			}
		})
	}
	t.Cleanup(stop)
	page := regexp.MustCompile(`serving on (\S+)`)
	deadline := time.Now().Add(20 * time.Second)
	for page.FindStringSubmatch(out.String()) == nil {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("viz serve exited: %v\n%s", err, log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("viz serve printed no URL:\n%s\n%s", out.String(), log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	m := regexp.MustCompile(`\n  viz worker (.*)\n`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("viz serve printed no viz worker command:\n%s", out.String())
	}
	return page.FindStringSubmatch(out.String())[1], append([]string{"worker"}, strings.Fields(m[1])...), log, stop
}

// TestServeWorkersEmbed: viz serve -nats-embed -workers-embed with a viz
// worker process, the very command it printed: a session over the
// websocket on a data file gets frames of a fit whose evaluations the
// worker made (it read the data, and the frames count it).
func TestServeWorkersEmbed(t *testing.T) {
	url, command, errOut, stop := serveOnWorkers(t)
	var workerErr syncBuffer
	worker := vizCommand(append(command, "-id", "one", "-workers", "1")...)
	worker.Stderr = &workerErr
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stop(); worker.Process.Kill(); worker.Wait() }()

	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(url, "http")+"ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Frames whose optimizer says the worker made the last evaluation.
	frames := 0
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	for frames < 3 {
		mt, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("after %d frames on the worker: %v\nserve: %s\nworker: %s", frames, err, errOut.String(), workerErr.String())
		}
		if mt == websocket.BinaryMessage && strings.Contains(string(b), `"iter"`) && strings.Contains(string(b), `"workers":1}`) {
			frames++
		}
	}
	if !strings.Contains(workerErr.String(), "read the fit's data") || !strings.Contains(workerErr.String(), "walk.csv") {
		t.Errorf("the worker did not read the session's data:\n%s", workerErr.String())
	}
	if !strings.Contains(errOut.String(), "fits of this data set run on the workers") {
		t.Errorf("the session's fit ran here:\n%s", errOut.String())
	}
}

// TestBrowserServeWorkers: the page of a session on two workers (viz
// worker, run in this process) says so in its status, ", 2 workers", and
// its tooltip what they do; a screenshot at 1280 × 720.
func TestBrowserServeWorkers(t *testing.T) {
	ctx := browsertest.Start(t, 1280, 720)
	url, command, _, stop := serveOnWorkers(t, "-workers-nats-shards", "4") // shards for both workers
	wctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); cancel(); wg.Wait() }()
	for _, id := range []string{"one", "two"} {
		wg.Go(func() { run(wctx, append(command, "-id", id, "-workers", "1", "-quiet"), io.Discard, io.Discard) })
	}
	if _, err := chromedp.Run(ctx, chromedp.Navigate(url+"?play=1&speed=10")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.dgpviz?.state.frame?.optimizer.workers === 2`))
		if err == nil && ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no frame of 2 workers within 60 s (%v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a few frames more: the status is redrawn with each
	st, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => { const s = document.getElementById("status"); return [s.textContent, s.title]; })()`))
	if err != nil {
		t.Fatal(err)
	}
	status, title := st[0], st[1]
	if !regexp.MustCompile(`^(optimising|converged|stopped|ready).*, 2 workers$`).MatchString(status) {
		t.Errorf("status %q: want the optimizer's state, then \", 2 workers\"", status)
	}
	if !strings.Contains(title, "on 2 worker processes (viz worker)") {
		t.Errorf("status tooltip %q: want what the workers do", title)
	}
	for name, sel := range map[string]string{"workers-readout-1280x720.png": ".readout", "workers-page-1280x720.png": ""} {
		act := chromedp.FullScreenshot(100)
		if sel != "" {
			act = chromedp.Screenshot(sel)
		}
		png, err := chromedp.Run(ctx, act)
		if err != nil {
			t.Fatal(err)
		}
		dir := os.Getenv("DGPVIZ_ARTIFACTS") // as web's browser tests keep theirs
		if dir == "" {
			dir = filepath.Join(os.TempDir(), "dgpviz-artifacts")
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
	}
}

// TestReachableURL: the viz worker command names a server listening on
// every address by this machine's name.
func TestReachableURL(t *testing.T) {
	name, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	for in, want := range map[string]string{
		"nats://127.0.0.1:4222": "nats://127.0.0.1:4222",
		"tls://10.0.0.2:4222":   "tls://10.0.0.2:4222",
		"nats://0.0.0.0:4222":   "nats://" + name + ":4222",
		"tls://[::]:4222":       "tls://" + name + ":4222",
	} {
		if got := reachableURL(in); got != want {
			t.Errorf("reachableURL(%q) = %q, want %q", in, got, want)
		}
	}
}
