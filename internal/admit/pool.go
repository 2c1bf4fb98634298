package admit

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"time"

	"dgpviz/internal/turn"
)

// The server's pool for expensive work. A session's optimizer is its own;
// everything else that takes seconds of CPU — a view's background work
// (the depth comparison, the fit's density, the message figure), a view's
// answers (the autoencoder's decode), model builds (a preset's restarts,
// a reset) and the explorer's baselines — runs as a job of the client that
// asked for it (ClientOf), and uses a core only in its turn: every
// optimizer iteration of a background fit, every figure, every answer is
// one turn (dgpviz/internal/turn). While sessions play, the pool hands out
// its turns at once (half the cores: DefaultPoolTurns), to the waiting clients in
// rotation, and a turn rests after it as long as it took (DefaultPoolShare), so
// that a client gets its share however many jobs it runs, and the rest of
// the machine stays with the live sessions; while none plays, it uses
// every core. A client may have MaxClientJobs jobs at once; past
// that its requests are refused as busy (ErrClientBusy), and it takes
// nothing from others. A job's turns end with its context: a client that
// has gone waits for nothing and its iterations stop.

// MaxClientJobs is how many jobs one client may have at once: one page's
// message figure, comparison, density and one question or build.
const MaxClientJobs = 4

// ServerClient is the pool's name for the server's own work (the
// explorer's baselines).
const ServerClient = "the server"

// ErrClientBusy refuses work of a client that already has MaxClientJobs
// jobs (close 1013 at connect).
var ErrClientBusy = errors.New("busy: the server is still working on your earlier requests; try again when one of them has finished")

// DefaultPoolTurns is the number of cores the pool uses at once while
// sessions play: half the machine's, at least one; the other half stays
// with the live sessions. While none plays it uses them all.
func DefaultPoolTurns() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// DefaultPoolShare is the share of each of its cores that the pool uses:
// small enough that one client's expensive work leaves playing sessions at
// least 80 % of their frame rate (docs/measurements.md, "Hardening").
const DefaultPoolShare = 0.35

// Pool shares turns among clients' jobs.
type Pool struct {
	share float64 // of each of its cores that the pool uses: a turn of d is followed by a rest of d·(1/share − 1)
	// Rest reports whether turns rest now: while live sessions play,
	// whose frames the pool's work would take cores from. Nil: always.
	Rest func() bool
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

// NewPool returns a pool that hands out turns turns at once while
// sessions play (0: DefaultPoolTurns), each followed by a rest that keeps
// its cores' use to share (0: DefaultPoolShare).
func NewPool(turns int, share float64) *Pool {
	if turns < 1 {
		turns = DefaultPoolTurns()
	}
	if !(share > 0 && share <= 1) {
		share = DefaultPoolShare
	}
	return &Pool{turns: turns, idle: max(turns, runtime.GOMAXPROCS(0)), share: share, clients: map[string]*poolClient{}}
}

// capacity is how many turns may be out now. p.mu is held.
func (p *Pool) capacity() int {
	if p.Rest != nil && !p.Rest() {
		return p.idle
	}
	return p.turns
}

// Job is one piece of a client's expensive work.
type Job struct {
	p    *Pool
	c    *poolClient
	once sync.Once
}

// Admit starts a job of client, or refuses it when the client already has
// MaxClientJobs.
func (p *Pool) Admit(client string) (*Job, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.clients[client]
	if c == nil {
		c = &poolClient{key: client}
		p.clients[client] = c
	}
	if c.jobs >= MaxClientJobs && client != ServerClient {
		p.stats.Refused++
		return nil, ErrClientBusy
	}
	c.jobs++
	p.stats.Jobs++
	return &Job{p: p, c: c}, nil
}

// End ends the job (once).
func (j *Job) End() {
	j.once.Do(func() {
		p := j.p
		p.mu.Lock()
		defer p.mu.Unlock()
		if j.c.jobs--; j.c.jobs == 0 && len(j.c.waiting) == 0 {
			delete(p.clients, j.c.key)
		}
	})
}

// Context returns parent under which the job's work takes its turns.
func (j *Job) Context(parent context.Context) context.Context {
	return turn.With(parent, j.take)
}

// take waits for a turn for the job, of a piece of work that uses cores
// cores (its rest is as long as that many turns'); ctx's end gives up
// waiting.
func (j *Job) take(ctx context.Context, cores int) (func(), error) {
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
func (p *Pool) giveBack(start time.Time, cores int) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			rest := time.Duration(float64(time.Since(start)) * (float64(cores)/p.share - 1))
			if rest < 50*time.Microsecond || p.Rest != nil && !p.Rest() {
				p.pass()
				return
			}
			time.AfterFunc(rest, p.pass)
		})
	}
}

// pass gives a turn back: to the next waiting clients in rotation, as
// many as the pool's capacity now allows, or to the pool.
func (p *Pool) pass() {
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

func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.stats
	st.Clients = len(p.clients)
	return st
}
