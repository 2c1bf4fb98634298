package stream

import (
	"dgpviz/internal/admit"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// estimateNow is what s holds with configuration c on n rows of its data:
// with the models of its restarts, when it keeps them.
func (s *session) estimateNow(c admit.Config, n, q, d int) admit.Estimate {
	k := 0
	if s.restarts != nil {
		k = len(s.restarts.List)
	}
	return admit.EstimateIn(c, s.view, s.data.Set, n, q, d, k)
}

// grow checks that s may hold configuration c on n rows of its data and
// reserves it, before the memory is taken: every way a session grows
// (data edits, undo and redo of them) asks here first.
func (s *session) grow(c admit.Config, n, q, d int) error {
	e := s.estimateNow(c, n, q, d)
	if err := admit.CheckBudget(e, s.srv.limits); err != nil {
		return err
	}
	return s.srv.reserve(s, e.Bytes)
}

// reservation returns ss's reservation.
func (s *Server) reservation(ss *session) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reserved[ss]
}

// setReservation makes ss's reservation bytes without checking the
// budget: for a reservation that shrinks, or one given back as it was.
func (s *Server) setReservation(ss *session, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev := s.reserved[ss]; prev > bytes {
		s.freed(prev - bytes)
	}
	s.reserved[ss] = bytes
}

// reserve records that session ss now holds a configuration estimated at
// bytes, refusing when all sessions together would exceed the server's
// memory budget. A session's reservation ends when it closes (release).
//
// A page that is here now comes before parked state: when the budget is
// short, parked state is let go to make room — disconnected sessions
// waiting to be resumed, uploads and forks waiting for their page — first
// that of the client that has the most parked, its oldest first, so that
// one client's flood of uploads is what goes, not another's session.
func (s *Server) reserve(ss *session, bytes int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if share := s.clientShare(); share > 0 && ss.client != "" && ss.client != admit.ServerClient {
		// One client's share first, making room from its own parked state.
		held := s.clientReserved(ss.client, ss)
		for held+bytes > share {
			freed, ok := s.evictParkedOf(ss, ss.client)
			if !ok {
				break
			}
			held -= freed
		}
		if held+bytes > share {
			return fmt.Errorf("%w: this model would need about %s of memory and your other sessions and uploads hold %s of the %s one client may use; close another tab, or try a smaller model", ErrBusy, admit.MiB(bytes), admit.MiB(held), admit.MiB(share))
		}
	}
	if s.limits.ServerMemory > 0 {
		total := s.reservedExcept(ss)
		for total+bytes > s.limits.ServerMemory {
			freed, ok := s.evictParked(ss)
			if !ok {
				break
			}
			total -= freed
		}
		if total+bytes > s.limits.ServerMemory {
			return fmt.Errorf("%w: this model would need about %s of memory and the other sessions hold %s of its %s; try a smaller model or later", ErrBusy, admit.MiB(bytes), admit.MiB(total), admit.MiB(s.limits.ServerMemory))
		}
	}
	if prev := s.reserved[ss]; prev > bytes {
		s.freed(prev - bytes)
	}
	s.reserved[ss] = bytes
	return nil
}

// ErrBusy is the server refusing a model for want of memory now: a client
// may try again later (websocket close 1013).
var ErrBusy = errors.New("the server is busy")

// busyCloseText is the close reason of a session refused with ErrBusy (a
// close frame's reason holds 123 bytes; the error message before it has
// the numbers).
const busyCloseText = "the server is busy: not enough memory for this model now; try a smaller model or later"

func (s *Server) reservedExcept(ss *session) int64 {
	var total int64
	for other, b := range s.reserved {
		if other != ss {
			total += b
		}
	}
	return total
}

// clientShare is the memory one client may hold (0: no bound): half the
// server's budget, and at least what one session may use.
func (s *Server) clientShare() int64 {
	if s.limits.ServerMemory <= 0 {
		return 0
	}
	return max(s.limits.ServerMemory/2, s.limits.SessionMemory)
}

// clientReserved is what client's sessions, parked state and uploads hold
// but ss. s.mu is held.
func (s *Server) clientReserved(client string, ss *session) int64 {
	var total int64
	for other, b := range s.reserved {
		if other != ss && other.client == client {
			total += b
		}
	}
	return total
}

// evictParked lets go of one piece of parked state to make room for ss
// (never ss's own): the oldest of the client that holds the most parked
// bytes. It returns the bytes freed, or false when there was none. s.mu
// is held.
func (s *Server) evictParked(ss *session) (int64, bool) { return s.evictParkedOf(ss, "") }

// evictParkedOf is evictParked among client's parked state ("": anyone's).
func (s *Server) evictParkedOf(ss *session, client string) (int64, bool) {
	held := map[string]int64{}
	for _, p := range s.parked {
		if p.owner != ss {
			held[p.client] += s.reserved[p.owner]
		}
	}
	var victim string
	for token, p := range s.parked {
		if p.owner == ss || client != "" && p.client != client {
			continue
		}
		if victim == "" {
			victim = token
			continue
		}
		v := s.parked[victim]
		if hp, hv := held[p.client], held[v.client]; hp > hv || hp == hv && p.parkedAt.Before(v.parkedAt) {
			victim = token
		}
	}
	if victim == "" {
		return 0, false
	}
	return s.let(victim, "to make room for a page that is here"), true
}

func (s *Server) release(ss *session) {
	s.mu.Lock()
	s.freed(s.reserved[ss])
	delete(s.reserved, ss)
	s.mu.Unlock()
}

// Returning memory to the system. Go gives freed heap back to the
// operating system slowly (a background scavenger): after the hardening
// campaign's upload bombs the server's RSS took 9 minutes to come down.
// When reservations of at least freeAfter have ended, the server collects
// and returns the memory at once (debug.FreeOSMemory, a full collection),
// at most every freeEvery, on a goroutine of its own.
const (
	freeAfter = 64 << 20
	freeEvery = 2 * time.Second
)

// freed notes that reservations of bytes have ended. s.mu is held.
func (s *Server) freed(bytes int64) {
	if bytes <= 0 || !s.returnMemory {
		return
	}
	s.toFree += bytes
	if s.freeing || s.toFree < freeAfter {
		return
	}
	s.freeing, s.toFree = true, 0
	go func() {
		for {
			debug.FreeOSMemory()
			time.Sleep(freeEvery)
			s.mu.Lock()
			again := s.toFree >= freeAfter
			s.freeing, s.toFree = again, 0
			s.mu.Unlock()
			if !again {
				return
			}
		}
	}()
}
