package stream

import (
	"sync"
	"testing"
	"time"
)

// TestMailboxLatestWins checks the hand-over: the newest value wins, a
// replaced value is reported as dropped, take empties the slot, peek does
// not, and a producer never blocks on a consumer that does not take.
func TestMailboxLatestWins(t *testing.T) {
	b := newMailbox[int]()
	if _, ok := b.take(); ok {
		t.Fatal("a new mailbox is not empty")
	}
	if b.put(1) {
		t.Error("the first put reported a drop")
	}
	if !b.put(2) {
		t.Error("replacing an untaken value was not reported")
	}
	var peeked int
	b.peek(func(v int) { peeked = v })
	if v, ok := b.take(); !ok || v != 2 || peeked != 2 {
		t.Errorf("take %v %v, peek %v; want 2", v, ok, peeked)
	}
	if _, ok := b.take(); ok {
		t.Error("take did not empty the slot")
	}
	// The zero value of T is a value like any other.
	b.put(0)
	if v, ok := b.take(); !ok || v != 0 {
		t.Errorf("a put 0 was taken as %v %v", v, ok)
	}
	// Many producers, one consumer: nothing blocks, the last put is taken.
	var wg sync.WaitGroup
	for p := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				b.put(p*1000 + i)
			}
		}()
	}
	wg.Wait()
	<-b.notify
	if _, ok := b.take(); !ok {
		t.Error("nothing to take after 8000 puts")
	}
}

// TestFrameGap: frames come at most 60 per second, later when they are
// expensive, but never less than MinFrameRate per second, however slow a
// busy machine makes them look.
func TestFrameGap(t *testing.T) {
	for _, c := range []struct {
		cost     time.Duration
		min, max time.Duration
	}{
		{200 * time.Microsecond, FrameInterval, FrameInterval},               // the step demo's frame
		{3 * time.Millisecond, 30 * time.Millisecond, 45 * time.Millisecond}, // 3 ms / 0.08 = 37.5 ms
		{2 * time.Second, time.Second / MinFrameRate, time.Second / MinFrameRate},
	} {
		p := newPacer(newDrawGate())
		p.sent(1, time.Now(), c.cost, 0)
		if g := p.gap; g < c.min || g > c.max {
			t.Errorf("frame cost %v: gap %v, want %v…%v", c.cost, g, c.min, c.max)
		}
	}
}
