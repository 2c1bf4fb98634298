package train

import (
	"testing"

	"dgpviz/internal/engine"
)

// TestInducingWithin: the largest count a monotone budget admits, found
// with a logarithmic number of estimates, against a scan of every count;
// none when one inducing point is already too many.
func TestInducingWithin(t *testing.T) {
	widths := []int{560, 2, 560}
	bytes := func(k int) int64 {
		params := engine.ModelBytes(300, widths, k) - 8*300*(560+560)
		return EstimateIter(LBFGS{}, 300, widths, k, params).Evals
	}
	for _, budget := range []int64{bytes(1), bytes(7) + 1, bytes(20) - 1, bytes(64), 1 << 40} {
		calls := 0
		got, ok := InducingWithin(64, func(k int) bool { calls++; return bytes(k) <= budget })
		want := 0
		for k := 1; k <= 64; k++ {
			if bytes(k) <= budget {
				want = k
			}
		}
		if !ok || got != want {
			t.Errorf("budget %d bytes: %d, %v; want %d", budget, got, ok, want)
		}
		if calls > 8 { // fits(1), then ⌈log₂ 64⌉ + 1 bisections
			t.Errorf("budget %d bytes: %d estimates, want at most 8", budget, calls)
		}
	}
	if k, ok := InducingWithin(64, func(int) bool { return false }); ok {
		t.Errorf("nothing fits: %d, true", k)
	}
}
