package admit

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// ErrBusy is the server refusing a model for want of memory now: a client
// may try again later (websocket close 1013).
var ErrBusy = errors.New("the server is busy")

// Ledger is a server's memory budget as it is reserved: what each holder —
// a session, parked state waiting for its page, an upload being read — is
// estimated to hold, and for which client. It has no lock of its own: its
// owner calls it with the lock it gave NewLedger held, which the ledger
// takes itself only on the goroutine that returns freed memory.
type Ledger struct {
	mu           sync.Locker
	limits       Limits
	held         map[any]holding
	returnMemory bool
	toFree       int64 // bytes of reservations ended since the last return
	freeing      bool  // a return is under way
}

type holding struct {
	client string
	bytes  int64
}

// NewLedger returns an empty ledger of the budgets of l, called under mu.
// With returnMemory, memory is given back to the system as soon as large
// reservations end (Release).
func NewLedger(l Limits, mu sync.Locker, returnMemory bool) *Ledger {
	return &Ledger{mu: mu, limits: l, held: map[any]holding{}, returnMemory: returnMemory}
}

// Held returns key's reservation.
func (g *Ledger) Held(key any) int64 { return g.held[key].bytes }

// Set makes key's reservation (of client) bytes without checking the
// budget: for a reservation that shrinks, or one given back as it was.
func (g *Ledger) Set(key any, client string, bytes int64) {
	if prev := g.held[key].bytes; prev > bytes {
		g.freed(prev - bytes)
	}
	g.held[key] = holding{client: client, bytes: bytes}
}

// Release ends key's reservation: its memory is free.
func (g *Ledger) Release(key any) {
	g.freed(g.held[key].bytes)
	delete(g.held, key)
}

// Forget ends key's reservation without counting its memory free: the
// holder that takes its place reserves it again (a resumed session).
func (g *Ledger) Forget(key any) { delete(g.held, key) }

// Reserve records that key, of client, now holds a configuration
// estimated at bytes, refusing (ErrBusy) when client's share or the
// server's budget would be exceeded.
//
// A page that is here now comes before parked state: when the budget is
// short, evict lets go of one piece of parked state — of client, or of
// anyone's for "" — and returns the bytes it freed, or false when there
// is none (Victim chooses which).
func (g *Ledger) Reserve(key any, client string, bytes int64, evict func(client string) (int64, bool)) error {
	if share := g.ClientShare(); share > 0 && client != "" && client != ServerClient {
		// One client's share first, making room from its own parked state.
		held := g.ClientHeld(client, key)
		for held+bytes > share {
			freed, ok := evict(client)
			if !ok {
				break
			}
			held -= freed
		}
		if held+bytes > share {
			return fmt.Errorf("%w: this model would need about %s of memory and your other sessions and uploads hold %s of the %s one client may use; close another tab, or try a smaller model", ErrBusy, MiB(bytes), MiB(held), MiB(share))
		}
	}
	if g.limits.ServerMemory > 0 {
		total := g.heldExcept(key)
		for total+bytes > g.limits.ServerMemory {
			freed, ok := evict("")
			if !ok {
				break
			}
			total -= freed
		}
		if total+bytes > g.limits.ServerMemory {
			return fmt.Errorf("%w: this model would need about %s of memory and the other sessions hold %s of its %s; try a smaller model or later", ErrBusy, MiB(bytes), MiB(total), MiB(g.limits.ServerMemory))
		}
	}
	g.Set(key, client, bytes)
	return nil
}

func (g *Ledger) heldExcept(key any) int64 {
	var total int64
	for other, h := range g.held {
		if other != key {
			total += h.bytes
		}
	}
	return total
}

// ClientShare is the memory one client may hold (0: no bound): half the
// server's budget, and at least what one session may use.
func (g *Ledger) ClientShare() int64 {
	if g.limits.ServerMemory <= 0 {
		return 0
	}
	return max(g.limits.ServerMemory/2, g.limits.SessionMemory)
}

// ClientHeld is what client's sessions, parked state and uploads hold but
// except's.
func (g *Ledger) ClientHeld(client string, except any) int64 {
	var total int64
	for other, h := range g.held {
		if other != except && h.client == client {
			total += h.bytes
		}
	}
	return total
}

// Parked is a piece of parked state, for Victim: whose, how large, since
// when.
type Parked struct {
	Client string
	Bytes  int64
	At     time.Time
}

// Victim returns the index of the parked state to let go first to make
// room for a page that is here, among client's ("": anyone's): the oldest
// of the client that holds the most parked bytes, so that one client's
// flood of uploads is what goes, not another's session. It returns -1
// when there is none.
func Victim(parked []Parked, client string) int {
	held := map[string]int64{}
	for _, p := range parked {
		held[p.Client] += p.Bytes
	}
	v := -1
	for i, p := range parked {
		if client != "" && p.Client != client {
			continue
		}
		if v < 0 {
			v = i
			continue
		}
		q := parked[v]
		if hp, hv := held[p.Client], held[q.Client]; hp > hv || hp == hv && p.At.Before(q.At) {
			v = i
		}
	}
	return v
}

// Returning memory to the system. Go gives freed heap back to the
// operating system slowly (a background scavenger): after the hardening
// campaign's upload bombs the server's RSS took 9 minutes to come down.
// When reservations of at least freeAfter have ended, the ledger collects
// and returns the memory at once (debug.FreeOSMemory, a full collection),
// at most every freeEvery, on a goroutine of its own.
const (
	freeAfter = 64 << 20
	freeEvery = 2 * time.Second
)

// freed notes that reservations of bytes have ended.
func (g *Ledger) freed(bytes int64) {
	if bytes <= 0 || !g.returnMemory {
		return
	}
	g.toFree += bytes
	if g.freeing || g.toFree < freeAfter {
		return
	}
	g.freeing, g.toFree = true, 0
	go func() {
		for {
			debug.FreeOSMemory()
			time.Sleep(freeEvery)
			g.mu.Lock()
			again := g.toFree >= freeAfter
			g.freeing, g.toFree = again, 0
			g.mu.Unlock()
			if !again {
				return
			}
		}
	}()
}
