package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/relay"

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

// TestServeWorkersEmbed: viz serve -nats-embed -workers-embed with a viz
// worker process, the very command it printed: a session over the
// websocket on a data file gets frames of a fit whose evaluations the
// worker made (it read the data, and the page's status counts it).
func TestServeWorkersEmbed(t *testing.T) {
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
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan error, 1)
	args := []string{"serve", "-addr", "127.0.0.1:0", "-data", data, "-log-level", "info",
		"-nats-embed", "127.0.0.1:0", "-nats-relay-creds", filepath.Join(dir, "relay.creds"),
		"-workers-embed", "lecture", "-workers-embed-creds", filepath.Join(dir, "worker.creds")}
	go func() { done <- run(ctx, args, &out, &errOut) }()
	page := regexp.MustCompile(`serving on (\S+)`)
	command := regexp.MustCompile(`\n  viz worker (.*)\n`)
	deadline := time.Now().Add(20 * time.Second)
	for page.FindStringSubmatch(out.String()) == nil {
		select {
		case err := <-done:
			t.Fatalf("viz serve exited: %v\n%s", err, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("viz serve printed no URL:\n%s\n%s", out.String(), errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	m := command.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("viz serve printed no viz worker command:\n%s", out.String())
	}
	var workerErr syncBuffer
	worker := vizCommand(append([]string{"worker"}, append(strings.Fields(m[1]), "-id", "one", "-workers", "1")...)...)
	worker.Stderr = &workerErr
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { worker.Process.Kill(); worker.Wait() }()

	url := page.FindStringSubmatch(out.String())[1]
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
	c.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("viz serve: %v", err)
	}
	if !strings.Contains(workerErr.String(), "read the fit's data") || !strings.Contains(workerErr.String(), "walk.csv") {
		t.Errorf("the worker did not read the session's data:\n%s", workerErr.String())
	}
	if !strings.Contains(errOut.String(), "fits of this data set run on the workers") {
		t.Errorf("the session's fit ran here:\n%s", errOut.String())
	}
}
