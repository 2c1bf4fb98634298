package shards

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/relay"

	"github.com/nats-io/nats.go"
	"gonum.org/v1/gonum/mat"
)

// DefaultShards is how many shards a Coordinator splits the data into
// where its Options do not say: enough for a few workers to share evenly,
// few enough that a shard's fixed costs (its parameters' M³ work, a
// message each way) stay small beside its rows'.
const DefaultShards = 16

// Options configure a Coordinator.
type Options struct {
	// Shards is the number of shards: 0 is DefaultShards of whole chunks
	// of ChunkRows, fewer when the data have fewer chunks (one below
	// ChunkRows rows: a shard's fixed costs are not worth paying twice
	// on small data); a number given is that many shards, of smaller
	// chunks when the data have fewer chunks than that.
	Shards int
	// ChunkRows is the chunk of each shard's evaluation (default
	// engine.DefaultChunkRows; smaller for data of fewer chunks than
	// Shards). The sum of the shards equals one process's
	// engine.EvaluateChunked with this chunk up to the grouping of its
	// sums.
	ChunkRows int
	// WaitWorkers is how long an evaluation waits for a first worker
	// when none is heard from (default 30 s).
	WaitWorkers time.Duration
	// Timeout is how long a shard's request waits for its answer while
	// its worker still announces itself (default 10 minutes).
	Timeout time.Duration
	// MinBatch is the fewest rows of a minibatch that the workers
	// evaluate (default engine.DefaultChunkRows): a smaller one is
	// evaluated here, where the shards' fixed costs (their layers'
	// preparation, a message each way) would outweigh its rows.
	MinBatch int
	// X and Y, when set, are the data as this process holds them: a
	// model of other data (points a person edited on the page) is
	// evaluated here, not on the workers, which hold the file's.
	X, Y   *mat.Dense
	Logger *slog.Logger
}

// A Coordinator evaluates the bound of all the data as the sum of the
// shards its fit's workers evaluate: a train.Evaluator. Its
// EvaluateAll is safe for concurrent use (restarts of one fit share it),
// one evaluation at a time.
type Coordinator struct {
	nc   *nats.Conn
	fit  string
	data Data
	sum  [32]byte
	opt  Options
	sub  *nats.Subscription
	log  *slog.Logger

	eval sync.Mutex // one evaluation at a time
	ev   engine.Evaluator

	mu      sync.Mutex
	heard   map[string]time.Time // workers' last announcements
	opened  map[string]bool      // workers told of the data
	dead    map[string]time.Time // workers that failed, and when
	joined  chan struct{}        // closed and replaced when a worker is heard anew
	seq     uint64
	working int // workers that contributed to the last evaluation
	// sameX and sameY are matrices found equal to Options.X and Y.
	sameX, sameY *mat.Dense
	// listen is when the coordinator has heard every running worker's
	// announcement once: its first evaluation waits for it.
	listen time.Time
	// closed is closed by Close: an evaluation waiting for a worker or an
	// answer then ends at once, so that a server shuts down without
	// waiting out WaitWorkers or Timeout.
	closed    chan struct{}
	closeOnce sync.Once
}

// NewCoordinator returns the coordinator of the fit named fit, whose
// workers read data.
func NewCoordinator(nc *nats.Conn, fit string, data Data, opt Options) (*Coordinator, error) {
	if err := relay.CheckFitName(fit); err != nil {
		return nil, err
	}
	if _, err := decodeData(data.encode()); err != nil {
		return nil, err
	}
	sum, err := hex.DecodeString(data.SHA256)
	if err != nil || len(sum) != 32 {
		return nil, fmt.Errorf("the data's sha256 %q is not 64 hexadecimal digits", data.SHA256)
	}
	if opt.ChunkRows == 0 {
		opt.ChunkRows = engine.DefaultChunkRows
	}
	if opt.MinBatch == 0 {
		opt.MinBatch = engine.DefaultChunkRows
	}
	if opt.WaitWorkers == 0 {
		opt.WaitWorkers = 30 * time.Second
	}
	if opt.Timeout == 0 {
		opt.Timeout = 10 * time.Minute
	}
	if opt.Shards < 0 || opt.ChunkRows < 1 {
		return nil, fmt.Errorf("%d shards of chunks of %d rows: want at least 1 of each", opt.Shards, opt.ChunkRows)
	}
	c := &Coordinator{nc: nc, fit: fit, data: data, opt: opt, log: opt.Logger, sameX: opt.X, sameY: opt.Y,
		heard: map[string]time.Time{}, opened: map[string]bool{}, dead: map[string]time.Time{}, joined: make(chan struct{}),
		listen: time.Now().Add(2 * HelloEvery), closed: make(chan struct{})}
	copy(c.sum[:], sum)
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.sub, err = nc.Subscribe(relay.FitSubject(fit)+".hello", func(m *nats.Msg) {
		id := string(m.Data)
		if len(id) == 0 || len(id) > maxWorker || relay.CheckFitName(id) != nil {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if t, ok := c.dead[id]; ok && time.Since(t) < HelloTimeout {
			return // a worker that failed is heard again only after a pause
		}
		delete(c.dead, id)
		_, known := c.heard[id]
		c.heard[id] = time.Now()
		if !known {
			c.log.Info("a worker joined", "worker", id)
			close(c.joined)
			c.joined = make(chan struct{})
		}
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// ErrClosed is the error of an evaluation that Close ended.
var ErrClosed = errors.New("the fit on workers was stopped")

// Close stops listening to the workers and ends the evaluations waiting
// on them with ErrClosed. It may be called more than once.
func (c *Coordinator) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		err = c.sub.Unsubscribe()
	})
	return err
}

// Contributing returns the number of workers whose shards the last
// evaluation summed.
func (c *Coordinator) Contributing() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.working
}

// live returns the workers heard from within HelloTimeout, in the order
// of their names.
func (c *Coordinator) live() ([]string, chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []string
	for id, t := range c.heard {
		if time.Since(t) < HelloTimeout {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, c.joined
}

// forget drops a worker that failed until it announces itself again
// after a pause.
func (c *Coordinator) forget(id string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.heard[id]; ok {
		c.log.Warn("a worker failed: its shards go to the others", "worker", id, "err", err)
	}
	delete(c.heard, id)
	delete(c.opened, id)
	c.dead[id] = time.Now()
}

// shards returns the chunk of the shards' evaluations, the shards'
// first rows and the end: whole chunks, shared as evenly as chunks allow.
// Data of fewer chunks than shards have smaller chunks, so that every
// shard has rows.
func (c *Coordinator) shards(n int) (chunk int, bounds []int) {
	s, chunk := min(c.opt.Shards, n), c.opt.ChunkRows
	if s == 0 {
		s = DefaultShards
	} else {
		chunk = min(chunk, (n+s-1)/s)
	}
	chunks := (n + chunk - 1) / chunk
	s = min(s, chunks)
	bounds = make([]int, s+1)
	for k := range bounds {
		bounds[k] = min(n, k*chunks/s*chunk)
	}
	bounds[s] = n
	return chunk, bounds
}

// sameData reports whether m's data are the workers' (Options.X, Y):
// the same matrices, or equal ones, which are remembered.
func (c *Coordinator) sameData(m *engine.Model) bool {
	if c.opt.X == nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.X == c.sameX && m.Y == c.sameY {
		return true
	}
	if !mat.Equal(m.X, c.opt.X) || !mat.Equal(m.Y, c.opt.Y) {
		return false
	}
	c.sameX, c.sameY = m.X, m.Y
	return true
}

// EvaluateAll evaluates the bound of all the data of m (which must be the
// fit's data, as the workers read them) as the sum of its shards, with
// the final layer's q(u) at its optimum when opt.OptimalFinalQ. A
// minibatch (opt.Rows) is evaluated here, as are the per-datum outputs,
// which a Result of the shards does not hold.
func (c *Coordinator) EvaluateAll(m *engine.Model, opt engine.Options) (*engine.Result, *engine.Gradient, error) {
	c.eval.Lock()
	defer c.eval.Unlock()
	if !c.sameData(m) || opt.Rows != nil && len(opt.Rows) < c.opt.MinBatch {
		return c.ev.EvaluateAll(m, opt)
	}
	if err := m.Validate(); err != nil {
		return nil, nil, err
	}
	if n, q := m.X.Dims(); n != c.data.Rows || q != c.data.Inputs {
		return nil, nil, fmt.Errorf("a model of %d rows of %d inputs, the fit's data %d and %d", n, q, c.data.Rows, c.data.Inputs)
	}
	chunk, bounds := c.shards(c.data.Rows)
	req := request{Chunk: chunk, Jitter: m.Jitter, Data: c.sum, Params: m.Params(nil)}
	for _, l := range m.Layers {
		mz, q, d := l.Dims()
		req.Layers = append(req.Layers, layerShape{Kernel: l.Kernel.Name(), M: mz, Q: q, D: d})
	}
	if opt.Rows != nil {
		return c.evaluateBatch(m, opt, &req, bounds)
	}
	model := m
	var q *engine.OptimalQ
	if opt.OptimalFinalQ {
		req.Kind = Stats
		reps, err := c.gather(&req, bounds)
		if err != nil {
			return nil, nil, err
		}
		sum := reps[0].Stats
		for _, r := range reps[1:] {
			if err := sum.Add(r.Stats); err != nil {
				return nil, nil, err
			}
		}
		if q, err = c.ev.SolveFinalQ(m, sum); err != nil {
			return nil, nil, err
		}
		mq := *m
		mq.Layers = slices.Clone(m.Layers)
		last := m.Layers[len(m.Layers)-1].Clone()
		q.Apply(last)
		mq.Layers[len(mq.Layers)-1] = last
		model = &mq
		req.Params = model.Params(req.Params[:0])
	}
	req.Kind, req.Gradient, req.NoCompensation = Part, opt.Gradient, opt.NoCompensation
	reps, err := c.gather(&req, bounds)
	if err != nil {
		return nil, nil, err
	}
	return sumParts(model, reps, opt, q)
}

// evaluateBatch evaluates a minibatch's estimate of the bound as the sum
// of its rows' parts on the shards that hold them, the KL in the first
// part: each shard evaluates the batch's rows within it, in the batch's
// order.
func (c *Coordinator) evaluateBatch(m *engine.Model, opt engine.Options, req *request, bounds []int) (*engine.Result, *engine.Gradient, error) {
	if opt.OptimalFinalQ {
		return nil, nil, errors.New("the final layer's optimal q(u) needs all the data, not a minibatch")
	}
	n := c.data.Rows
	per := make([][]int, len(bounds)-1)
	for _, r := range opt.Rows {
		if r < 0 || r >= n {
			return nil, nil, fmt.Errorf("minibatch row %d out of range 1…%d", r+1, n)
		}
		k, _ := slices.BinarySearch(bounds, r+1) // the shard whose range holds r
		per[k-1] = append(per[k-1], r)
	}
	var reqs []*request
	for k, rows := range per {
		if len(rows) == 0 {
			continue
		}
		r := *req
		r.Kind, r.Gradient, r.KL, r.NoCompensation = BatchPart, opt.Gradient, len(reqs) == 0, opt.NoCompensation
		r.Lo, r.Hi, r.Rows, r.Batch = bounds[k], bounds[k+1], rows, len(opt.Rows)
		reqs = append(reqs, &r)
	}
	if len(reqs) == 0 {
		return nil, nil, errors.New("empty minibatch")
	}
	reps, err := c.gatherAll(reqs)
	if err != nil {
		return nil, nil, err
	}
	return sumParts(m, reps, opt, nil)
}

// sumParts adds up the replies' parts, the KL in the first.
func sumParts(m *engine.Model, reps []*reply, opt engine.Options, q *engine.OptimalQ) (*engine.Result, *engine.Gradient, error) {
	parts := make([]engine.Part, len(reps))
	for k, r := range reps {
		parts[k] = engine.Part{Likelihood: r.Part.Likelihood, Layers: r.Part.Layers, KL: k == 0}
		if opt.Gradient {
			var err error
			if parts[k].Gradient, err = engine.GradientOf(m, r.Part.Gradient); err != nil {
				return nil, nil, err
			}
		}
	}
	return engine.SumParts(parts, opt, q)
}

// gather asks the live workers for every shard of the request, shard k
// of the first shard's worker k mod workers, and returns the replies in
// the shards' order. A shard whose worker fails goes to another; the
// engine's errors (a Kuu not positive definite, …) are the evaluation's.
func (c *Coordinator) gather(req *request, bounds []int) ([]*reply, error) {
	reqs := make([]*request, len(bounds)-1)
	for k := range reqs {
		r := *req
		r.Lo, r.Hi, r.KL = bounds[k], bounds[k+1], k == 0
		reqs[k] = &r
	}
	return c.gatherAll(reqs)
}

// gatherAll asks the live workers for the requests, the k-th of the
// k-th worker in turn, and returns the replies in the requests' order.
func (c *Coordinator) gatherAll(reqs []*request) ([]*reply, error) {
	c.mu.Lock()
	c.seq++
	for _, r := range reqs {
		r.Seq = c.seq
	}
	c.mu.Unlock()
	shards := len(reqs)
	out := make([]*reply, shards)
	type result struct {
		k      int
		worker string
		rep    *reply
		err    error
	}
	results := make(chan result, shards)
	ask := func(k int, worker string) {
		rep, err := c.ask(reqs[k], worker)
		results <- result{k, worker, rep, err}
	}
	workers, err := c.workers()
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for k := range shards {
		go ask(k, workers[k%len(workers)])
	}
	var fatal error
	failed := 0
	for pending := shards; pending > 0; pending-- {
		res := <-results
		switch {
		case res.err == nil:
			out[res.k] = res.rep
			used[res.worker] = true
			continue
		case fatal != nil:
			continue
		case isMath(res.err):
			fatal = res.err
			continue
		}
		c.forget(res.worker, res.err)
		if failed++; failed > maxFailures {
			fatal = fmt.Errorf("%d requests of one evaluation failed; the last: %w", failed, res.err)
			continue
		}
		workers, err := c.workers()
		if err != nil {
			fatal = fmt.Errorf("%w (the last worker's error: %v)", err, res.err)
			continue
		}
		pending++
		go ask(res.k, workers[res.k%len(workers)])
	}
	if fatal != nil {
		return nil, fatal
	}
	c.mu.Lock()
	c.working = len(used)
	c.mu.Unlock()
	return out, nil
}

// maxFailures is how many of an evaluation's requests may fail (their
// workers killed, or answering what cannot be read) before the
// evaluation does: a fit does not wait forever on workers that come back
// only to fail again.
const maxFailures = 8

// workers returns the live workers, waiting up to WaitWorkers for one.
func (c *Coordinator) workers() ([]string, error) {
	select {
	case <-time.After(time.Until(c.listen)):
	case <-c.closed:
		return nil, ErrClosed
	}
	deadline := time.Now().Add(c.opt.WaitWorkers)
	for {
		ids, joined := c.live()
		if len(ids) > 0 {
			return ids, nil
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return nil, fmt.Errorf("no worker of the fit %q is heard from (start one: viz worker -fit %s -nats URL -nats-creds FILE)", c.fit, c.fit)
		}
		select {
		case <-joined:
		case <-time.After(min(wait, HelloEvery)):
		case <-c.closed:
			return nil, ErrClosed
		}
	}
}

// isMath reports whether err is the engine's verdict on the parameters,
// which another worker would repeat: the optimizer's to handle.
func isMath(err error) bool {
	return errors.Is(err, engine.ErrNotPositiveDefinite) || errors.Is(err, engine.ErrNotFinite) || errors.Is(err, engine.ErrImprecise)
}

// ask sends req to worker, first the data's description if the worker
// has not had it, and waits for the answer while the worker announces
// itself.
func (c *Coordinator) ask(req *request, worker string) (*reply, error) {
	subject := relay.FitSubject(c.fit) + ".work." + worker
	for try := 0; ; try++ {
		c.mu.Lock()
		opened := c.opened[worker]
		c.mu.Unlock()
		if !opened {
			if err := c.open(subject, worker); err != nil {
				return nil, err
			}
		}
		b, err := c.request(subject, worker, req.encode())
		if err != nil {
			return nil, err
		}
		rep, err := decodeReply(b, req, worker)
		if err != nil {
			return nil, err
		}
		if rep.Err != nil && errors.Is(rep.Err, errNoData) && try == 0 {
			c.mu.Lock()
			delete(c.opened, worker)
			c.mu.Unlock()
			continue
		}
		if rep.Err != nil {
			return nil, rep.Err
		}
		return rep, nil
	}
}

// open tells a worker of the data, which it reads before it answers.
func (c *Coordinator) open(subject, worker string) error {
	b, err := c.request(subject, worker, c.data.encode())
	if err != nil {
		return err
	}
	d := &decoder{b: b}
	if string(d.take(4, "its magic")) != "DGPR" {
		return fmt.Errorf("worker %s sent a malformed reply to the data's description", worker)
	}
	d.u64("its number")
	d.row("its first row")
	d.row("its last row")
	if id := d.text("its worker", maxWorker); d.err == nil && id != worker {
		return fmt.Errorf("worker %s's reply names worker %q", worker, id)
	}
	if status := d.u8("its status"); d.err == nil && status == 1 {
		d.u8("its error's kind")
		return fmt.Errorf("worker %s cannot read the fit's data: %s", worker, d.text("its error", maxMessage))
	}
	if d.err != nil {
		return fmt.Errorf("worker %s sent a malformed reply to the data's description: %w", worker, d.err)
	}
	c.mu.Lock()
	c.opened[worker] = true
	c.mu.Unlock()
	return nil
}

// request sends b to the worker and waits for its answer: until
// Timeout, or until the worker stops announcing itself.
func (c *Coordinator) request(subject, worker string, b []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.opt.Timeout)
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		tick := time.NewTicker(HelloTimeout / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-c.closed:
				cancel()
				return
			case <-tick.C:
				c.mu.Lock()
				t, ok := c.heard[worker]
				c.mu.Unlock()
				if !ok || time.Since(t) > HelloTimeout {
					cancel()
					return
				}
			}
		}
	}()
	m, err := c.nc.RequestWithContext(ctx, subject, b)
	select {
	case <-c.closed:
		return nil, ErrClosed
	default:
	}
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return nil, fmt.Errorf("worker %s is gone", worker)
	case errors.Is(err, context.Canceled):
		return nil, fmt.Errorf("worker %s stopped announcing itself", worker)
	case errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("worker %s did not answer within %v", worker, c.opt.Timeout)
	case err != nil:
		return nil, fmt.Errorf("worker %s: %v", worker, err)
	}
	return m.Data, nil
}
