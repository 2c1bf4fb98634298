package web

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserTicks checks the axes' round numbers (niceTicks in
// static/plot.js): about n of them, steps of 1, 2, 2.5 or 5 × 10^k, and at
// least two inside the range, so that every axis shows a scale. The last
// two cases are the robot view's latent axes in presentation mode, where
// the step that makes at most n ticks (5) left only 0 inside the range.
// Their labels (tickLabel) in exponent form keep the step's digits.
func TestBrowserTicks(t *testing.T) {
	e := newE2E(t)
	e.run(chromedp.Navigate(e.base + "/"))
	e.waitFor("the page", `window.dgpviz !== undefined`)
	for _, c := range []struct {
		lo, hi float64
		n      int
		want   []float64
	}{
		{0, 1, 5, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{0, 590.9, 10, []float64{0, 100, 200, 300, 400, 500}},
		{-5329, -4000, 4, []float64{-5000, -4500, -4000}},
		{-1, 1, 2, []float64{-1, 0, 1}},
		{-4.25, 4.25, 3, []float64{-2.5, 0, 2.5}},
		{-4.5, 2.2, 2, []float64{-2.5, 0}},
	} {
		got := evalAs[[]float64](e, fmt.Sprintf(`import("/static/plot.js").then((m) => m.niceTicks(%v, %v, %d))`, c.lo, c.hi, c.n))
		ok := len(got) == len(c.want)
		for i := 0; ok && i < len(got); i++ {
			ok = math.Abs(got[i]-c.want[i]) < 1e-9*math.Max(1, math.Abs(c.want[i]))
		}
		if !ok {
			t.Errorf("niceTicks(%v, %v, %d) = %v, want %v", c.lo, c.hi, c.n, got, c.want)
		}
	}
	// Tick labels in exponent form keep the step's digits: evenly spaced
	// ticks read evenly spaced.
	if got := evalAs[[]string](e, `import("/static/plot.js").then(({ tickLabel }) => [-1.08e6, -1.105e6, -1.13e6, 2e-4, 2.5e-4].map((v, i) => tickLabel(v, i < 3 ? 25000 : 5e-5)))`); !slices.Equal(got, []string{"−1.080e6", "−1.105e6", "−1.130e6", "2.0e−4", "2.5e−4"}) {
		t.Errorf("tick labels %q, want −1.080e6, −1.105e6, −1.130e6, 2.0e−4, 2.5e−4", got)
	}
}

// TestBrowserColumnDecimals checks the tables' one precision a column
// (columnDecimals and fixed in static/plot.js): the largest value's four
// significant digits, trailing zeros kept, and more decimals (at most
// extra more) where values that differ would read the same.
func TestBrowserColumnDecimals(t *testing.T) {
	e := newE2E(t)
	e.run(chromedp.Navigate(e.base + "/"))
	e.waitFor("the page", `window.dgpviz !== undefined`)
	for _, c := range []struct {
		values string
		want   []string
	}{
		{"[3.969, 3.97]", []string{"3.969", "3.970"}},
		{"[-15.65, 3.134, -1.639]", []string{"-15.65", "3.13", "-1.64"}},
		{"[-15.6512, -15.6548, null]", []string{"-15.651", "-15.655", "–"}},
		{"[1.599, 4.006]", []string{"1.599", "4.006"}},
		{"[-1104352.4, -1104351.9]", []string{"-1,104,352.4", "-1,104,351.9"}},
		{"[0, 0]", []string{"0", "0"}},
		{"[-15.6512341, -15.6512342]", []string{"-15.65123", "-15.65123"}}, // at most 3 decimals more
		{"[4.000431, 4.000437], 3, 0", []string{"4.00", "4.00"}},           // times: none more
	} {
		got := evalAs[[]string](e, fmt.Sprintf(`import("/static/plot.js").then(({ columnDecimals, fixed }) => { const [v, ...opt] = [%s], d = columnDecimals(v, ...opt); return v.map((x) => fixed(x, d)); })`, c.values))
		if !slices.Equal(got, c.want) {
			t.Errorf("column %s reads %q, want %q", c.values, got, c.want)
		}
	}
}
