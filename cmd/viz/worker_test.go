package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/relay"
)

// signalWriter is a writer that closes seen when what it is written
// matches a pattern.
type signalWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	re   *regexp.Regexp
	seen chan struct{}
	once sync.Once
}

func (w *signalWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	if w.re.Match(w.buf.Bytes()) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(b), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestWorkerProcesses: viz fit -nats on two viz worker processes, one of
// them killed (SIGKILL) once the fit has begun, ends at the bound of the
// same fit in one process, to the rounding its iterations amplify; its
// progress says how many workers contribute.
func TestWorkerProcesses(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "walk.csv")
	f, err := os.Create(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := dataset.WriteWalkCSV(f, 400, 5); err != nil {
		t.Fatal(err)
	}
	f.Close()
	creds := map[relay.Role]string{}
	var users []relay.User
	for _, r := range []relay.Role{relay.Coordinator, relay.Worker} {
		c, err := relay.NewCredentials()
		if err != nil {
			t.Fatal(err)
		}
		creds[r] = filepath.Join(dir, r.String()+".creds")
		if err := relay.WriteCredentials(creds[r], c, "a test's "+r.String()); err != nil {
			t.Fatal(err)
		}
		users = append(users, relay.User{Key: c.PublicKey(), Role: r, Fit: "walk"})
	}
	ns, err := relay.StartNATS("127.0.0.1:0", relay.ServerOptions{Users: users})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Shutdown()
	url := ns.ClientURL()

	var workers []*os.Process
	for _, id := range []string{"one", "two"} {
		cmd := vizCommand("worker", "-nats", url, "-nats-creds", creds[relay.Worker], "-fit", "walk", "-id", id, "-workers", "1", "-quiet")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		workers = append(workers, cmd.Process)
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	args := []string{"fit", "-data", data, "-hidden", "2", "-inducing", "8", "-fit", "full", "-iters", "25", "-tol-abs", "0", "-tol", "0", "-tol-datum", "0", "-out", filepath.Join(dir, "m.json")}
	var one bytes.Buffer
	if err := run(context.Background(), args, &bytes.Buffer{}, &one); err != nil {
		t.Fatalf("the fit in one process: %v\n%s", err, one.String())
	}
	progress := &signalWriter{re: regexp.MustCompile(`iteration \d+: bound .*2 workers\)`), seen: make(chan struct{})}
	go func() {
		select {
		case <-progress.seen:
			workers[0].Signal(syscall.SIGKILL)
		case <-time.After(time.Minute):
		}
	}()
	sharded := append(args, "-nats", url, "-nats-creds", creds[relay.Coordinator], "-nats-fit", "walk", "-nats-shards", "4")
	if err := run(context.Background(), sharded, &bytes.Buffer{}, progress); err != nil {
		t.Fatalf("the fit on workers: %v\n%s", err, progress.String())
	}
	select {
	case <-progress.seen:
	default:
		t.Fatalf("no progress line says 2 workers contribute:\n%s", progress.String())
	}
	want, got := finalBound(t, one.String()), finalBound(t, progress.String())
	// The shards' chunks of 100 rows round otherwise than one process's
	// evaluation of the 360 rows at once (1e-10 of the bound,
	// engine.TestEvaluateRangeSums), and 25 L-BFGS iterations amplify
	// that to ~1e-8.
	if d := (got - want) / want; d > 1e-6 || d < -1e-6 {
		t.Errorf("the fit on workers ends at the bound %.12g, in one process %.12g", got, want)
	}
	// The killed worker's shards went to the other.
	if !strings.Contains(progress.String(), "worker one stopped") && !strings.Contains(progress.String(), "worker one is gone") {
		t.Errorf("the killed worker was not noticed:\n%s", progress.String())
	}
}

// finalBound reads viz fit's last line's bound.
func finalBound(t *testing.T, out string) float64 {
	t.Helper()
	m := regexp.MustCompile(`viz fit: bound (\S+) `).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no final bound in:\n%s", out)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
