package share

import (
	"sync"
)

// Outbox hands the view's binary messages to the writer: one slot per
// name, latest wins, so a slow client gets the newest figure, never a
// backlog. Messages of different names go in the order they were first
// put.
type Outbox struct {
	mu     sync.Mutex
	names  []string
	slots  map[string][]byte
	notify chan struct{} // capacity 1: something waits
}

// NewOutbox returns an empty outbox.
func NewOutbox() *Outbox {
	return &Outbox{slots: map[string][]byte{}, notify: make(chan struct{}, 1)}
}

// Ready receives when a message has been put since the last receive.
func (o *Outbox) Ready() <-chan struct{} { return o.notify }

// Put queues b under name, replacing a message of that name not yet taken.
func (o *Outbox) Put(name string, b []byte) {
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

// Take returns every waiting message and empties the slots.
func (o *Outbox) Take() [][]byte {
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
