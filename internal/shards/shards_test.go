package shards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/relay"
	"dgpviz/internal/train"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"gonum.org/v1/gonum/mat"
)

// cluster is an in-process NATS server with the users of one fit — its
// coordinator and its workers — and the walk's data in a file.
type cluster struct {
	t           testing.TB
	ns          *server.Server
	url         string
	fit         string
	coordinator *relay.Credentials
	worker      *relay.Credentials
	data        Data
	x, y        *mat.Dense
}

func newCluster(t testing.TB, rows int) *cluster {
	t.Helper()
	c := &cluster{t: t, fit: "test-fit", coordinator: newCreds(t), worker: newCreds(t)}
	ns, err := relay.StartNATS("127.0.0.1:0", relay.ServerOptions{Users: []relay.User{
		{Key: c.coordinator.PublicKey(), Role: relay.Coordinator, Fit: c.fit},
		{Key: c.worker.PublicKey(), Role: relay.Worker, Fit: c.fit},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	c.ns, c.url = ns, ns.ClientURL()
	path := filepath.Join(t.TempDir(), "walk.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := dataset.WriteWalkCSV(f, rows, 3); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ds, err := dataset.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.data, err = DataOf(path, ds, dataset.FitNormalizer(ds.X), dataset.FitNormalizer(ds.Y)); err != nil {
		t.Fatal(err)
	}
	if c.x, c.y, err = c.data.Load(); err != nil {
		t.Fatal(err)
	}
	return c
}

func newCreds(t testing.TB) *relay.Credentials {
	t.Helper()
	c, err := relay.NewCredentials()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *cluster) connect(name string, creds *relay.Credentials) *nats.Conn {
	c.t.Helper()
	nc, err := relay.Connect(c.url, relay.ConnectOptions{Name: name, Credentials: creds})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(nc.Close)
	return nc
}

// testWorker is a worker on a connection of its own, in a goroutine.
type testWorker struct {
	nc     *nats.Conn
	cancel context.CancelFunc
	done   chan struct{}
}

// startWorker starts the worker id; kill stops it as a killed process
// stops: its connection closes, whatever it is doing.
func (c *cluster) startWorker(id string) *testWorker {
	c.t.Helper()
	nc := c.connect("worker "+id, c.worker)
	ctx, cancel := context.WithCancel(context.Background())
	w := &testWorker{nc: nc, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		(&Worker{Fit: c.fit, ID: id, Engine: 1}).Serve(ctx, nc)
	}()
	c.t.Cleanup(w.kill)
	return w
}

func (w *testWorker) kill() {
	w.cancel()
	w.nc.Close()
	<-w.done
}

func (c *cluster) coordinate(opt Options) *Coordinator {
	c.t.Helper()
	if os.Getenv("SHARDS_LOG") != "" {
		opt.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	co, err := NewCoordinator(c.connect("coordinator", c.coordinator), c.fit, c.data, opt)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { co.Close() })
	return co
}

// waitWorkers waits until the coordinator hears n workers.
func waitWorkers(t testing.TB, co *Coordinator, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ids, _ := co.live()
		if len(ids) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the coordinator hears %d workers, want %d", len(ids), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// model returns a two-layer model of the walk's data (1 input → 2 → 30
// outputs), initialised as viz fit initialises one.
func (c *cluster) model() *engine.Model {
	c.t.Helper()
	m, err := train.Initialize(c.x, c.y, train.InitConfig{Hidden: []int{2}, Inducing: 8, Seed: 1})
	if err != nil {
		c.t.Fatal(err)
	}
	return m
}

// TestShardsEqualOneProcess: with 1, 2 and 4 workers, the bound, its
// terms, the optimal final q(u) and the gradient summed from the shards
// are one process's chunked evaluation with the same chunks, to 1e-12
// relative (the bound and terms relative to the bound, the gradient and
// q(u) to their largest entry: engine.TestEvaluateRangeSums), and the
// same bits for every number of workers.
func TestShardsEqualOneProcess(t *testing.T) {
	c := newCluster(t, 480)
	m := c.model()
	const chunk = 50
	var ev engine.Evaluator
	for _, optQ := range []bool{false, true} {
		opt := engine.Options{Gradient: true, NoOutputMessage: true, OptimalFinalQ: optQ}
		want, wg, err := ev.EvaluateChunked(m, opt, chunk)
		if err != nil {
			t.Fatal(err)
		}
		var first []float64
		var firstBound float64
		var workers []*testWorker
		for _, n := range []int{1, 2, 4} {
			for len(workers) < n {
				workers = append(workers, c.startWorker(fmt.Sprintf("w%d", len(workers)+1)))
			}
			co := c.coordinate(Options{Shards: 4, ChunkRows: chunk})
			waitWorkers(t, co, n)
			got, gg, err := co.EvaluateAll(m, opt)
			if err != nil {
				t.Fatal(err)
			}
			if co.Contributing() != n {
				t.Errorf("%d workers: %d contributed", n, co.Contributing())
			}
			name := fmt.Sprintf("optimal q %v, %d workers", optQ, n)
			compareSums(t, name, want, got, wg, gg, 1e-12)
			flat := gg.Flatten(nil)
			if first == nil {
				first, firstBound = flat, got.Bound
			} else if got.Bound != firstBound || !equalBits(flat, first) {
				t.Errorf("%s: not the bits of 1 worker's (bound %.17g, 1 worker's %.17g)", name, got.Bound, firstBound)
			}
			co.Close()
		}
		for _, w := range workers {
			w.kill()
		}
	}
}

func equalBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// compareSums fails t where got differs from want beyond tol: the bound
// and terms relative to the bound, the final q(u) and the gradient
// relative to their largest entries.
func compareSums(t *testing.T, name string, want, got *engine.Result, wg, gg *engine.Gradient, tol float64) {
	t.Helper()
	scale := math.Abs(want.Bound)
	check := func(what string, a, b float64) {
		t.Helper()
		if math.Abs(a-b) > tol*scale {
			t.Errorf("%s: %s sharded %.17g, one process %.17g", name, what, b, a)
		}
	}
	check("bound", want.Bound, got.Bound)
	check("likelihood", want.Likelihood, got.Likelihood)
	for i, l := range want.Layers {
		check(fmt.Sprintf("layer %d's KL", i+1), l.KL, got.Layers[i].KL)
		check(fmt.Sprintf("layer %d's compression", i+1), l.Compression, got.Layers[i].Compression)
		check(fmt.Sprintf("layer %d's propagation", i+1), l.Propagation, got.Layers[i].Propagation)
	}
	vec := func(what string, a, b []float64) {
		t.Helper()
		var big, diff float64
		for i := range a {
			big = max(big, math.Abs(a[i]))
			diff = max(diff, math.Abs(a[i]-b[i]))
		}
		if len(a) != len(b) || diff > tol*big {
			t.Errorf("%s: %s differs by %.3g of its largest entry", name, what, diff/big)
		}
	}
	if (want.FinalQ == nil) != (got.FinalQ == nil) {
		t.Fatalf("%s: the final q(u) is nil in one result only", name)
	}
	if want.FinalQ != nil {
		vec("the final q_mu", want.FinalQ.Mu.RawMatrix().Data, got.FinalQ.Mu.RawMatrix().Data)
		vec("the final q_sqrt", want.FinalQ.Sqrt.RawMatrix().Data, got.FinalQ.Sqrt.RawMatrix().Data)
	}
	vec("the gradient", wg.Flatten(nil), gg.Flatten(nil))
}

// fit runs iters L-BFGS iterations of the model on the coordinator's
// evaluations, calling each after every iteration, and returns the
// model's parameters.
func fit(t *testing.T, m *engine.Model, ev train.Evaluator, iters int, each func(iter int)) []float64 {
	t.Helper()
	tr, err := train.NewTrainer(m, train.TrainerConfig{Evaluator: ev})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Start(); err != nil {
		t.Fatal(err)
	}
	for i := range iters {
		info, err := tr.Step()
		if err != nil {
			t.Fatal(err)
		}
		if info.Status != train.NotTerminated {
			t.Fatalf("iteration %d: %v", i+1, info.Status)
		}
		if each != nil {
			each(i + 1)
		}
	}
	return tr.Model().Params(nil)
}

// TestShardedFit: a fit on 3 workers, one of which is killed after the
// third iteration and one that joins after the sixth, ends at the model
// of the same fit on 1 worker, bit for bit (the shards, not the workers,
// fix the sums); the killed worker's shards were taken over and the late
// one was used from the next iteration. Against one process's fit with
// the same chunks, the model agrees to the rounding the iterations
// amplify: 1e-8 relative after 10 iterations (5.6e-10 measured; each
// evaluation differs by the grouping of its sums, ~1e-15).
func TestShardedFit(t *testing.T) {
	c := newCluster(t, 400)
	const iters, chunk = 10, 50
	want := fit(t, c.model(), chunked{chunk}, iters, nil)

	w1 := c.startWorker("a")
	co := c.coordinate(Options{Shards: 4, ChunkRows: chunk})
	waitWorkers(t, co, 1)
	one := fit(t, c.model(), co, iters, nil)
	co.Close()

	c.startWorker("b")
	w3 := c.startWorker("c")
	co = c.coordinate(Options{Shards: 4, ChunkRows: chunk})
	waitWorkers(t, co, 3)
	var counts []int
	got := fit(t, c.model(), co, iters, func(iter int) {
		counts = append(counts, co.Contributing())
		switch iter {
		case 3:
			w3.kill()
		case 6:
			c.startWorker("d")
			waitWorkers(t, co, 3)
		}
	})
	_ = w1
	if !equalBits(got, one) {
		t.Errorf("the fit on workers that come and go does not end at the 1-worker fit's model")
	}
	if counts[1] != 3 || counts[4] != 2 || counts[8] != 3 {
		t.Errorf("workers contributing after each iteration %v: want 3 before the kill, 2 after it, 3 after the late one joined", counts)
	}
	var worst float64
	for i := range want {
		worst = max(worst, math.Abs(want[i]-got[i])/max(1, math.Abs(want[i])))
	}
	t.Logf("the largest difference from one process's parameters: %.3g", worst)
	for i := range want {
		if math.Abs(want[i]-got[i]) > 1e-8*max(1, math.Abs(want[i])) {
			t.Errorf("parameter %d: sharded %.17g, one process %.17g", i, got[i], want[i])
			break
		}
	}
}

// chunked is one process's evaluation of all the data in chunks.
type chunked struct{ rows int }

func (c chunked) EvaluateAll(m *engine.Model, opt engine.Options) (*engine.Result, *engine.Gradient, error) {
	var ev engine.Evaluator
	return ev.EvaluateChunked(m, opt, c.rows)
}

// TestShardBounds: shards are whole chunks that cover the rows once; by
// default 16 of chunks of 8192 rows, one on small data; a number of
// shards given splits small data into smaller chunks.
func TestShardBounds(t *testing.T) {
	for _, tc := range []struct {
		shards, n, chunk int
		want             []int
	}{
		{0, 240, engine.DefaultChunkRows, []int{0, 240}},
		{0, 3 * engine.DefaultChunkRows, engine.DefaultChunkRows, []int{0, 8192, 16384, 24576}},
		{4, 400, 100, []int{0, 100, 200, 300, 400}},
		{4, 3, 1, []int{0, 1, 2, 3}},
		{3, 1000, 334, []int{0, 334, 668, 1000}},
	} {
		c := &Coordinator{opt: Options{Shards: tc.shards, ChunkRows: engine.DefaultChunkRows}}
		chunk, got := c.shards(tc.n)
		if chunk != tc.chunk || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%d shards of %d rows: chunk %d, %v; want %d, %v", tc.shards, tc.n, chunk, got, tc.chunk, tc.want)
		}
	}
	c := &Coordinator{opt: Options{ChunkRows: engine.DefaultChunkRows}}
	_, got := c.shards(1000000)
	if len(got) != DefaultShards+1 || got[len(got)-1] != 1000000 {
		t.Fatalf("a million rows: %v", got)
	}
	for k := 1; k < len(got)-1; k++ {
		if got[k]%engine.DefaultChunkRows != 0 || got[k] <= got[k-1] {
			t.Errorf("a million rows: shard %d starts at row %d", k+1, got[k])
		}
	}
}

// TestShardedMinibatch: a minibatch's estimate of the bound, its rows
// evaluated by the shards that hold them, is one process's estimate to
// 1e-12 (engine.TestEvaluateBatchParts), the same bits on 1 and 3
// workers; a stochastic fit's steps on workers reach the one process's
// point to the rounding they amplify.
func TestShardedMinibatch(t *testing.T) {
	c := newCluster(t, 400)
	m := c.model()
	batch := []int{355, 3, 77, 10, 199, 0, 42, 120, 64, 65, 11, 180, 290, 300}
	opt := engine.Options{Rows: batch, Gradient: true, NoOutputMessage: true}
	var ev engine.Evaluator
	want, wg, err := ev.EvaluateAll(m, opt)
	if err != nil {
		t.Fatal(err)
	}
	var first []float64
	for _, n := range []int{1, 3} {
		var ws []*testWorker
		for k := range n {
			ws = append(ws, c.startWorker(fmt.Sprintf("m%d", k)))
		}
		co := c.coordinate(Options{Shards: 4, ChunkRows: 50, MinBatch: len(batch), WaitWorkers: 100 * time.Millisecond})
		waitWorkers(t, co, n)
		got, gg, err := co.EvaluateAll(m, opt)
		if err != nil {
			t.Fatal(err)
		}
		compareSums(t, fmt.Sprintf("%d workers", n), want, got, wg, gg, 1e-12)
		if flat := gg.Flatten(nil); first == nil {
			first = flat
		} else if !equalBits(first, flat) {
			t.Errorf("%d workers: not the bits of 1 worker's", n)
		}
		if co.Contributing() != n {
			t.Errorf("%d workers: %d contributed to the minibatch", n, co.Contributing())
		}
		for _, w := range ws {
			w.kill()
		}
		// A smaller minibatch is evaluated here: without workers.
		small := opt
		small.Rows = batch[:len(batch)-1]
		if _, _, err := co.EvaluateAll(m, small); err != nil {
			t.Errorf("a minibatch below MinBatch, without workers: %v", err)
		}
		co.Close()
	}
	n := c.data.Rows
	if _, _, err := (&Coordinator{data: c.data}).evaluateBatch(m, engine.Options{Rows: []int{n}}, &request{}, []int{0, n}); err == nil {
		t.Errorf("row %d of %d: no error", n+1, n)
	}
}

// TestDataFromURL: a worker given the data's URL downloads the file into
// the data folder, checks its sha256, and reads the fit's data from it;
// a URL whose file is another is refused, and so is a URL that is not
// http or https.
func TestDataFromURL(t *testing.T) {
	c := newCluster(t, 100)
	_, path := dataset.SpecFile(c.data.Spec)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, path) }))
	defer hs.Close()
	dir := t.TempDir()
	t.Setenv(dataset.DataDirEnv, dir)
	d := c.data
	d.Spec, d.URL = "/nowhere/walk.csv", hs.URL+"/walk.csv"
	d2, err := decodeData(d.encode())
	if err != nil {
		t.Fatal(err)
	}
	x, y, err := d2.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(x, c.x) || !mat.Equal(y, c.y) {
		t.Error("the downloaded data are not the fit's")
	}
	if _, err := os.Stat(filepath.Join(dir, "shards", d.SHA256+".csv")); err != nil {
		t.Errorf("the download is not kept by its sha256: %v", err)
	}
	d.SHA256 = strings.Repeat("0", 64) // the file the URL serves is another
	if _, _, err := d.Load(); err == nil {
		t.Error("a file of another sha256: no error")
	}
	d.URL = "file:///etc/passwd"
	if _, err := decodeData(d.encode()); err == nil {
		t.Error("a file: URL: no error")
	}
}

// TestCloseEndsWait: an evaluation waiting for a worker (none is
// running) ends with ErrClosed as soon as the coordinator is closed, not
// after WaitWorkers, so that viz serve shuts down at once when its
// workers are gone.
func TestCloseEndsWait(t *testing.T) {
	c := newCluster(t, 300)
	co := c.coordinate(Options{WaitWorkers: time.Minute})
	m := c.model()
	done := make(chan error, 1)
	go func() {
		_, _, err := co.EvaluateAll(m, engine.Options{NoOutputMessage: true})
		done <- err
	}()
	time.Sleep(3 * HelloEvery) // past the first evaluation's listening
	start := time.Now()
	co.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("the waiting evaluation ended with %v, want ErrClosed", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("it ended %v after Close", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting evaluation had not ended 30 s after Close (WaitWorkers is a minute)")
	}
	if err := co.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}
