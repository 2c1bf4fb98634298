package share

import (
	"sync"
)

// Mailbox is a one-slot, latest-wins hand-over from a producer (the
// optimizer, the message figure's worker) to the connection's writer: put
// never blocks and replaces what the writer has not taken yet, so a slow
// client gets the newest state, never a backlog. The zero value is not
// usable; make one with NewMailbox.
type Mailbox[T any] struct {
	mu     sync.Mutex
	latest T
	full   bool
	notify chan struct{} // capacity 1: "something is waiting"
}

// NewMailbox returns an empty mailbox.
func NewMailbox[T any]() *Mailbox[T] { return &Mailbox[T]{notify: make(chan struct{}, 1)} }

// Ready receives when a value has been put since the last receive.
func (b *Mailbox[T]) Ready() <-chan struct{} { return b.notify }

// Put stores v and reports whether it replaced an untaken value.
func (b *Mailbox[T]) Put(v T) (dropped bool) {
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

// Take returns the waiting value and empties the slot (ok false: none).
func (b *Mailbox[T]) Take() (v T, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok = b.latest, b.full
	var zero T
	b.latest, b.full = zero, false
	return v, ok
}

// Has reports whether a value waits.
func (b *Mailbox[T]) Has() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.full
}

// Peek calls f with the waiting value, if any, without taking it.
func (b *Mailbox[T]) Peek(f func(T)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.full {
		f(b.latest)
	}
}
