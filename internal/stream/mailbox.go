package stream

import "sync"

// mailbox is a one-slot, latest-wins hand-over from a producer (the
// optimizer, the message figure's worker) to the connection's writer: put
// never blocks and replaces what the writer has not taken yet, so a slow
// client gets the newest state, never a backlog. The zero value is not
// usable; make one with newMailbox.
type mailbox[T any] struct {
	mu     sync.Mutex
	latest T
	full   bool
	notify chan struct{} // capacity 1: "something is waiting"
}

func newMailbox[T any]() *mailbox[T] { return &mailbox[T]{notify: make(chan struct{}, 1)} }

// put stores v and reports whether it replaced an untaken value.
func (b *mailbox[T]) put(v T) (dropped bool) {
	b.mu.Lock()
	dropped = b.full
	b.latest, b.full = v, true
	b.mu.Unlock()
	select {
	case b.notify <- struct{}{}:
	default:
	}
	return dropped
}

// take returns the waiting value and empties the slot (ok false: none).
func (b *mailbox[T]) take() (v T, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok = b.latest, b.full
	var zero T
	b.latest, b.full = zero, false
	return v, ok
}

// has reports whether a value waits.
func (b *mailbox[T]) has() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.full
}

// peek calls f with the waiting value, if any, without taking it.
func (b *mailbox[T]) peek(f func(T)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.full {
		f(b.latest)
	}
}
