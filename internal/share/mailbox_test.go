package share

import (
	"sync"
	"testing"
)

// TestMailboxLatestWins checks the hand-over: the newest value wins, a
// replaced value is reported as dropped, take empties the slot, peek does
// not, and a producer never blocks on a consumer that does not take.
func TestMailboxLatestWins(t *testing.T) {
	b := NewMailbox[int]()
	if _, ok := b.Take(); ok {
		t.Fatal("a new mailbox is not empty")
	}
	if b.Put(1) {
		t.Error("the first put reported a drop")
	}
	if !b.Put(2) {
		t.Error("replacing an untaken value was not reported")
	}
	var peeked int
	b.Peek(func(v int) { peeked = v })
	if v, ok := b.Take(); !ok || v != 2 || peeked != 2 {
		t.Errorf("take %v %v, peek %v; want 2", v, ok, peeked)
	}
	if _, ok := b.Take(); ok {
		t.Error("take did not empty the slot")
	}
	// The zero value of T is a value like any other.
	b.Put(0)
	if v, ok := b.Take(); !ok || v != 0 {
		t.Errorf("a put 0 was taken as %v %v", v, ok)
	}
	// Many producers, one consumer: nothing blocks, the last put is taken.
	var wg sync.WaitGroup
	for p := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				b.Put(p*1000 + i)
			}
		}()
	}
	wg.Wait()
	<-b.Ready()
	if _, ok := b.Take(); !ok {
		t.Error("nothing to take after 8000 puts")
	}
}
