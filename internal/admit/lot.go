package admit

import (
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"time"

	"dgpviz/internal/modelfile"
)

// Parked state is work waiting for its page under a token, for a grace
// period: a disconnected session waiting to be resumed, an upload or a
// fork waiting for the page that opens it. Its memory stays reserved in
// the ledger while it waits, and a page that is here comes first: to make
// room for one, parked state is let go (Lot.Reserve, Victim). A client
// makes parked state — uploads and forks — at ParkBurst at once and then
// one every ParkEvery, reads one upload at a time, and keeps at most
// MaxParkedPerClient pieces (its oldest goes first).
const (
	ParkBurst          = 4
	ParkEvery          = 15 * time.Second
	MaxParkedPerClient = 8
)

// ErrTooOften refuses parked state (an upload, a fork) of a client that
// asks faster than the limits allow (HTTP 429).
var ErrTooOften = errors.New("too many uploads and forks from your address")

// Lot is a server's parked state of type T by token, with the ledger that
// holds its memory and the uploads being read into it. Like the Ledger it
// has no lock of its own: its owner calls it with the ledger's lock held,
// except BeginUpload, ReserveBuild and an Upload's methods, which take it,
// as does the lot when a piece's grace period ends.
type Lot[T any] struct {
	*reserver
	grace  time.Duration
	end    func(v T)
	log    *slog.Logger
	spaces map[string]*space[T]
}

type space[T any] struct {
	value  T
	key    any // its reservation in the ledger
	client string
	what   string // what waits, for the log
	at     time.Time
	timer  *time.Timer
}

// reserver is what uploads need of a lot: the ledger, with parked state
// to let go of to make room.
type reserver struct {
	ledger    *Ledger
	rate      *ClientRate
	uploading map[string]bool // clients whose upload is being read
	letGo     func(client string, except any) (int64, bool)
}

// NewLot returns an empty lot of the memory in ledger, that keeps parked
// state for grace and lets clients make it at rate. end ends what a piece
// holds (a private data set, a share) when the lot lets it go unresumed:
// its grace period ended, or it made room.
func NewLot[T any](ledger *Ledger, grace time.Duration, rate *ClientRate, log *slog.Logger, end func(v T)) *Lot[T] {
	l := &Lot[T]{reserver: &reserver{ledger: ledger, rate: rate, uploading: map[string]bool{}}, grace: grace, end: end, log: log, spaces: map[string]*space[T]{}}
	l.letGo = l.letVictim
	return l
}

// Add parks v under token for the grace period, its memory reserved under
// key for client; what says what it is, for the log. A client with
// MaxParkedPerClient pieces first lets its oldest go.
func (l *Lot[T]) Add(token string, key any, client, what string, v T) {
	for l.clientParked(client) >= MaxParkedPerClient {
		oldest := ""
		for t, p := range l.spaces {
			if p.client == client && (oldest == "" || p.at.Before(l.spaces[oldest].at)) {
				oldest = t
			}
		}
		l.let(oldest, "its client parked more")
	}
	p := &space[T]{value: v, key: key, client: client, what: what, at: time.Now()}
	p.timer = time.AfterFunc(l.grace, func() { l.expire(token, p) })
	l.spaces[token] = p
}

func (l *Lot[T]) clientParked(client string) int {
	n := 0
	for _, p := range l.spaces {
		if p.client == client {
			n++
		}
	}
	return n
}

// Take takes the state parked under token (ok false: none, or it has
// gone), and ends its reservation: the page that takes it reserves its
// own.
func (l *Lot[T]) Take(token string) (v T, ok bool) {
	p := l.spaces[token]
	if p == nil {
		return v, false
	}
	delete(l.spaces, token)
	l.ledger.Forget(p.key)
	p.timer.Stop()
	return p.value, true
}

// Len returns how much state is parked.
func (l *Lot[T]) Len() int { return len(l.spaces) }

// All returns the parked state by token.
func (l *Lot[T]) All() iter.Seq2[string, T] {
	return func(yield func(string, T) bool) {
		for token, p := range l.spaces {
			if !yield(token, p.value) {
				return
			}
		}
	}
}

// Close empties the lot for a shutdown, leaving the reservations as they
// are, and returns what was parked: nothing will resume it now.
func (l *Lot[T]) Close() []T {
	var vs []T
	for token, p := range l.spaces {
		p.timer.Stop()
		delete(l.spaces, token)
		vs = append(vs, p.value)
	}
	return vs
}

// let lets the state under token go before its time, and returns the
// bytes its reservation held.
func (l *Lot[T]) let(token, why string) int64 {
	p := l.spaces[token]
	p.timer.Stop()
	freed := l.ledger.Held(p.key)
	l.forget(token, p)
	l.log.Info("let parked state go", "kind", p.what, "why", why, "parked", time.Since(p.at).Round(time.Second), "MiB", freed>>20)
	return freed
}

// expire forgets p if it was not taken in time.
func (l *Lot[T]) expire(token string, p *space[T]) {
	l.ledger.mu.Lock()
	defer l.ledger.mu.Unlock()
	if l.spaces[token] == p {
		l.forget(token, p)
	}
}

func (l *Lot[T]) forget(token string, p *space[T]) {
	delete(l.spaces, token)
	l.ledger.Release(p.key)
	l.end(p.value)
}

// letVictim lets go of the parked state Victim chooses among client's
// ("": anyone's), never except's own, and returns the bytes it freed.
func (l *Lot[T]) letVictim(client string, except any) (int64, bool) {
	var cands []Parked
	var tokens []string
	for token, p := range l.spaces {
		if p.key != except {
			cands = append(cands, Parked{Client: p.client, Bytes: l.ledger.Held(p.key), At: p.at})
			tokens = append(tokens, token)
		}
	}
	i := Victim(cands, client)
	if i < 0 {
		return 0, false
	}
	return l.let(tokens[i], "to make room for a page that is here"), true
}

// Reserve records that key, of client, now holds a configuration
// estimated at bytes (Ledger.Reserve), letting go of parked state to make
// room — but never key's own.
func (r *reserver) Reserve(key any, client string, bytes int64) error {
	return r.ledger.Reserve(key, client, bytes, func(c string) (int64, bool) { return r.letGo(c, key) })
}

// ReserveBuild reserves, for key of client, what building a model of
// estimate e takes beside what key holds now (e.Build: the new model is
// built beside the old one, and a preset's restarts fit side by side),
// and returns settle, which makes key's reservation e.Bytes once the
// model is built (ok) or gives back what it held before. Both take the
// ledger's lock.
func (r *reserver) ReserveBuild(key any, client string, e Estimate) (settle func(ok bool), err error) {
	r.ledger.mu.Lock()
	defer r.ledger.mu.Unlock()
	prev := r.ledger.Held(key)
	if err := r.Reserve(key, client, prev+e.Build); err != nil {
		return nil, err
	}
	return func(ok bool) {
		r.ledger.mu.Lock()
		defer r.ledger.mu.Unlock()
		if ok {
			r.ledger.Set(key, client, e.Bytes)
		} else {
			r.ledger.Set(key, client, prev)
		}
	}, nil
}

// TakePark spends one of client's parked-state allowances.
func (r *reserver) TakePark(client string) error {
	if ok, wait := r.rate.Take(client, time.Now()); !ok {
		return fmt.Errorf("%w: try again in %d s", ErrTooOften, int(wait.Seconds())+1)
	}
	return nil
}

// Upload is one upload being read: its memory is reserved in the ledger
// until End.
type Upload struct {
	r      *reserver
	client string
	ended  bool
}

// BeginUpload starts reading an upload of client: it spends one of the
// client's parked-state allowances and reserves bytes of the server's
// memory budget for reading (what the reader holds is charged as it
// grows, Upload.ModelReadOptions). Errors: ErrBusy (no memory now) or a
// refusal for people that says when to try again (ErrTooOften).
func (r *reserver) BeginUpload(client string, bytes int64) (*Upload, error) {
	if err := r.TakePark(client); err != nil {
		return nil, err
	}
	r.ledger.mu.Lock()
	defer r.ledger.mu.Unlock()
	if r.uploading[client] {
		return nil, fmt.Errorf("%w: an upload from your address is still being read; send the next when it is done", ErrTooOften)
	}
	u := &Upload{r: r, client: client}
	if err := r.Reserve(u, client, bytes); err != nil {
		return nil, err
	}
	r.uploading[client] = true
	return u, nil
}

// End ends the upload's reservation (once).
func (u *Upload) End() {
	u.r.ledger.mu.Lock()
	defer u.r.ledger.mu.Unlock()
	if u.ended {
		return
	}
	u.ended = true
	u.r.ledger.Release(u)
	delete(u.r.uploading, u.client)
}

// ModelReadOptions are the server's limits for reading an uploaded model
// file (modelfile.ReadWith): a file beyond them is refused while it is
// read, before it takes the memory; what it holds is bounded by the memory
// budget of one session and reserved in the server's as it grows.
func (u *Upload) ModelReadOptions() modelfile.ReadOptions {
	l := u.r.ledger.limits
	return modelfile.ReadOptions{MaxRows: l.MaxRows, MaxLayers: l.MaxLayers, MaxWidth: l.MaxWidth, MaxInducing: l.MaxInducing,
		Budget: func(bytes int64) error {
			if l.SessionMemory > 0 && bytes > l.SessionMemory {
				return fmt.Errorf("the model file needs more memory than a session may use (%s): the server's -session-memory raises the limit", MiB(l.SessionMemory))
			}
			u.r.ledger.mu.Lock()
			defer u.r.ledger.mu.Unlock()
			return u.r.Reserve(u, u.client, bytes)
		}}
}
