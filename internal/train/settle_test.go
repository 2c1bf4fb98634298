package train

import "testing"

// TestSettler: the bound settles when it rose by less than settleNats over
// the last SettleWindow iterations, unsettles when it rises unsettleBy
// times faster, and a reset (an edit) starts afresh.
func TestSettler(t *testing.T) {
	var s Settler
	run := func(n int, perIter float64, b *float64) {
		for k := 0; k < n; k++ {
			*b += perIter
			s.Add(*b)
		}
	}
	b := -100.0
	run(300, 0.5, &b) // a fit under way: 50 nats per window
	if s.Settled() {
		t.Fatal("settled while the bound rises 50 nats per window")
	}
	run(SettleWindow-1, 0.0001, &b) // 0.01 per window, but the window still holds the rise
	if s.Settled() {
		t.Fatal("settled before a whole window of slow iterations")
	}
	run(2, 0.0001, &b)
	if !s.Settled() {
		t.Fatal("not settled after a window of 0.01 nats")
	}
	run(50, 0.002, &b) // 0.2 per window: below the unsettling rise (4 × 0.05)
	if !s.Settled() {
		t.Fatal("unsettled by a rise below the hysteresis")
	}
	run(150, 0.01, &b) // 1 nat per window
	if s.Settled() {
		t.Fatal("still settled while the bound rises 1 nat per window")
	}
	s.Reset()
	if s.Settled() {
		t.Fatal("settled after a reset")
	}
	// a large bound settles at a proportionally larger rise
	b = -50000
	run(2*SettleWindow+1, 0.004, &b) // 0.4 nats per window < 0.05·(1 + 10)
	if !s.Settled() {
		t.Fatal("a bound of −50000 rising 0.4 nats per window is not settled")
	}
}
