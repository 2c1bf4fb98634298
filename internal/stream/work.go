package stream

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/turn"
	"dgpviz/internal/view"

	"gonum.org/v1/gonum/mat"
)

// viewSession is what a view's ops may use of a session (view.Session).
// Its methods run on the optimizer goroutine, during the op's Apply.
type viewSession struct{ s *session }

var _ view.Session = viewSession{}

func (v viewSession) Model() *engine.Model { return v.s.tr.Model() }
func (v viewSession) Data() *view.Data     { return v.s.data }
func (v viewSession) Arch() view.Arch      { return v.s.cfg.arch() }
func (v viewSession) Iter() int            { return v.s.tr.Iter() }

// Edit makes m the live model as an undoable edit.
func (v viewSession) Edit(label string, m *engine.Model) error {
	s := v.s
	before := s.editState(label)
	if err := s.applyModel(m); err != nil {
		return err
	}
	s.pushHistory(before)
	return nil
}

// EditData makes x, y the working data as an undoable edit (edits.go).
func (v viewSession) EditData(label string, x, y *mat.Dense, edited bool, fit func(m *engine.Model, x, y *mat.Dense) (*engine.Model, error)) error {
	return v.s.editData(label, x, y, edited, fit)
}

func (v viewSession) Go(name string, work func(ctx context.Context, send func([]byte))) error {
	return v.s.work.start(v.s, name, work)
}

// Latest returns the latest publication's snapshot and a channel closed
// when a newer one is published.
func (v viewSession) Latest() (*view.Snapshot, <-chan struct{}) {
	s := v.s
	s.changedMu.Lock()
	defer s.changedMu.Unlock()
	var snap *view.Snapshot
	if p := s.latest.Load(); p != nil {
		snap = p.snap
	}
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return snap, s.changed
}

// errRunning refuses background work whose last run has not finished.
var errRunning = errors.New("the last one is still running")

// The server's pool for expensive work. A session's optimizer is its own;
// everything else that takes seconds of CPU — a view's background work
// (the depth comparison, the fit's density, the message figure), a view's
// answers (the autoencoder's decode), model builds (a preset's restarts,
// a reset) and the explorer's baselines — runs as a job of the client that
// asked for it (ClientOf), and uses a core only in its turn: every
// optimizer iteration of a background fit, every figure, every answer is
// one turn (dgpviz/internal/turn). While sessions play, the pool hands out
// PoolTurns turns at once (half the cores), to the waiting clients in
// rotation, and a turn rests after it as long as it took (PoolShare), so
// that a client gets its share however many jobs it runs, and the rest of
// the machine stays with the live sessions; while none plays, it uses
// every core. A client may have maxClientJobs jobs at once; past
// that its requests are refused as busy (errClientBusy), and it takes
// nothing from others. A job's turns end with its context: a client that
// has gone waits for nothing and its iterations stop.

// maxClientJobs is how many jobs one client may have at once: one page's
// message figure, comparison, density and one question or build.
const maxClientJobs = 4

// Commands. Every command a page sends its optimizer costs a publication
// and a frame, and an edit an evaluation of the model: a client that sends
// them back to back (1,970 add_data in 12.7 s in the hardening campaign)
// takes the optimizers' cores from everyone else. A page sends at most one
// a drawn frame (a drag's moves are coalesced per animation frame), so a
// client's commands, all its sessions' together, are paced at
// commandBurst at once and one every commandEvery after that: past that
// the reader waits, and the client's next command with it.
const (
	commandBurst = 120
	commandEvery = time.Second / 60
)

// waitCommand waits until client may send its optimizers another command;
// false when ctx ended first.
func (s *Server) waitCommand(ctx context.Context, client string) bool {
	for {
		ok, wait := s.commandRate.Take(client, time.Now())
		if ok {
			return true
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

// serverClient is the pool's name for the server's own work (the
// explorer's baselines).
const serverClient = "the server"

// errClientBusy refuses work of a client that already has maxClientJobs
// jobs (close 1013 at connect).
var errClientBusy = errors.New("busy: the server is still working on your earlier requests; try again when one of them has finished")

// DefaultPoolTurns is the number of cores the pool uses at once while
// sessions play: half the machine's, at least one; the other half stays
// with the live sessions. While none plays it uses them all.
func DefaultPoolTurns() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// DefaultPoolShare is the share of each of its cores that the pool uses:
// small enough that one client's expensive work leaves playing sessions at
// least 80 % of their frame rate (docs/measurements.md, "Hardening").
const DefaultPoolShare = 0.35

// pool shares turns among clients' jobs.
type pool struct {
	share float64 // of each of its cores that the pool uses: a turn of d is followed by a rest of d·(1/share − 1)
	// rest reports whether turns rest now: while live sessions play,
	// whose frames the pool's work would take cores from. Nil: always.
	rest func() bool
	// turns is how many turns are out at once while sessions play; idle
	// how many while none does (all cores: a lecturer's Frey build alone
	// on the server runs its restarts side by side).
	turns, idle int
	mu          sync.Mutex
	inUse       int                    // turns handed out or resting
	clients     map[string]*poolClient // clients with jobs
	ring        []*poolClient          // clients waiting for a turn, in the order they are served
	stats       PoolStats
}

type poolClient struct {
	key     string
	jobs    int
	waiting []chan struct{} // closed when the turn is given; first come, first served
	inRing  bool
}

// PoolStats counts the pool's work, for tests and the load test.
type PoolStats struct {
	Jobs    int64 // jobs admitted
	Refused int64 // jobs refused as busy
	Turns   int64 // turns given
	Clients int   // clients with jobs now
}

func newPool(turns int, share float64) *pool {
	if turns < 1 {
		turns = DefaultPoolTurns()
	}
	if !(share > 0 && share <= 1) {
		share = DefaultPoolShare
	}
	return &pool{turns: turns, idle: max(turns, runtime.GOMAXPROCS(0)), share: share, clients: map[string]*poolClient{}}
}

// capacity is how many turns may be out now. p.mu is held.
func (p *pool) capacity() int {
	if p.rest != nil && !p.rest() {
		return p.idle
	}
	return p.turns
}

// job is one piece of a client's expensive work.
type job struct {
	p    *pool
	c    *poolClient
	once sync.Once
}

// admit starts a job of client, or refuses it when the client already has
// maxClientJobs.
func (p *pool) admit(client string) (*job, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.clients[client]
	if c == nil {
		c = &poolClient{key: client}
		p.clients[client] = c
	}
	if c.jobs >= maxClientJobs && client != serverClient {
		p.stats.Refused++
		return nil, errClientBusy
	}
	c.jobs++
	p.stats.Jobs++
	return &job{p: p, c: c}, nil
}

// end ends the job (once).
func (j *job) end() {
	j.once.Do(func() {
		p := j.p
		p.mu.Lock()
		defer p.mu.Unlock()
		if j.c.jobs--; j.c.jobs == 0 && len(j.c.waiting) == 0 {
			delete(p.clients, j.c.key)
		}
	})
}

// context returns parent under which the job's work takes its turns.
func (j *job) context(parent context.Context) context.Context {
	return turn.With(parent, j.take)
}

// take waits for a turn for the job, of a piece of work that uses cores
// cores (its rest is as long as that many turns'); ctx's end gives up
// waiting.
func (j *job) take(ctx context.Context, cores int) (func(), error) {
	p, c := j.p, j.c
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.inUse < p.capacity() && len(p.ring) == 0 {
		p.inUse++
		p.stats.Turns++
		p.mu.Unlock()
		return p.giveBack(time.Now(), cores), nil
	}
	ready := make(chan struct{})
	c.waiting = append(c.waiting, ready)
	if !c.inRing {
		c.inRing = true
		p.ring = append(p.ring, c)
	}
	p.mu.Unlock()
	select {
	case <-ready:
		return p.giveBack(time.Now(), cores), nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	select {
	case <-ready: // given meanwhile: pass it on
		p.mu.Unlock()
		p.pass()
	default:
		c.waiting = slices.DeleteFunc(c.waiting, func(w chan struct{}) bool { return w == ready })
		if len(c.waiting) == 0 && c.inRing {
			c.inRing = false
			p.ring = slices.DeleteFunc(p.ring, func(x *poolClient) bool { return x == c })
		}
		if c.jobs == 0 && len(c.waiting) == 0 {
			delete(p.clients, c.key)
		}
		p.mu.Unlock()
	}
	return nil, ctx.Err()
}

// giveBack returns the function that ends a turn taken at start by work
// on cores cores (once): after the turn's rest (pool.share; none while no
// session plays), the turn goes to the next waiting client in rotation,
// or back to the pool.
func (p *pool) giveBack(start time.Time, cores int) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			rest := time.Duration(float64(time.Since(start)) * (float64(cores)/p.share - 1))
			if rest < 50*time.Microsecond || p.rest != nil && !p.rest() {
				p.pass()
				return
			}
			time.AfterFunc(rest, p.pass)
		})
	}
}

// pass gives a turn back: to the next waiting clients in rotation, as
// many as the pool's capacity now allows, or to the pool.
func (p *pool) pass() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inUse--
	for len(p.ring) > 0 && p.inUse < p.capacity() {
		c := p.ring[0]
		p.ring = p.ring[1:]
		ready := c.waiting[0]
		c.waiting = c.waiting[1:]
		if len(c.waiting) > 0 {
			p.ring = append(p.ring, c)
		} else {
			c.inRing = false
		}
		p.inUse++
		p.stats.Turns++
		close(ready)
	}
}

func (p *pool) snapshot() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.stats
	st.Clients = len(p.clients)
	return st
}

// workSet is a session's background work for its view, one run per name
// at a time. A new view (another data set) cancels its predecessor's.
type workSet struct {
	mu      sync.Mutex
	running map[string]bool
	ctx     context.Context // the current view's work; nil until the first start
	cancel  context.CancelFunc
}

// start runs work in the background under s; its messages go to the
// writer through s.viewOut, latest wins per name.
func (w *workSet) start(s *session, name string, work func(ctx context.Context, send func([]byte))) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running[name] {
		return errRunning
	}
	j, err := s.srv.pool.admit(s.client) // a job of the server's pool
	if err != nil {
		return err
	}
	if w.running == nil {
		w.running = map[string]bool{}
	}
	if w.ctx == nil {
		w.ctx, w.cancel = context.WithCancel(s.ctx)
	}
	w.running[name] = true
	ctx := j.context(w.ctx)
	go func() {
		defer func() {
			j.end()
			w.mu.Lock()
			delete(w.running, name)
			w.mu.Unlock()
		}()
		defer s.recoverPanic(name)
		work(ctx, func(b []byte) { s.viewOut.put(name, b) })
	}()
	return nil
}

// stop cancels the running work: the view it belongs to has gone.
func (w *workSet) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel != nil {
		w.cancel()
	}
	w.ctx, w.cancel = nil, nil
}

// outbox hands the view's binary messages to the writer: one slot per
// name, latest wins, so a slow client gets the newest figure, never a
// backlog. Messages of different names go in the order they were first
// put.
type outbox struct {
	mu     sync.Mutex
	names  []string
	slots  map[string][]byte
	notify chan struct{} // capacity 1: something waits
}

func newOutbox() *outbox {
	return &outbox{slots: map[string][]byte{}, notify: make(chan struct{}, 1)}
}

func (o *outbox) put(name string, b []byte) {
	o.mu.Lock()
	if _, ok := o.slots[name]; !ok {
		o.names = append(o.names, name)
	}
	o.slots[name] = b
	o.mu.Unlock()
	select {
	case o.notify <- struct{}{}:
	default:
	}
}

// take returns every waiting message and empties the slots.
func (o *outbox) take() [][]byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([][]byte, 0, len(o.names))
	for _, n := range o.names {
		out = append(out, o.slots[n])
	}
	o.names = o.names[:0]
	clear(o.slots)
	return out
}
