package slides

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// TestCaption: the caption line names the data, the iteration and the
// bound with a true minus sign, and leaves out a bound that is not a
// number.
func TestCaption(t *testing.T) {
	for _, tc := range []struct {
		c    Caption
		want string
	}{
		{Caption{Dataset: "step", Iter: 937, Bound: -0.7551}, "dgpviz · step · iteration 937 · bound −0.7551 nats"},
		{Caption{Dataset: "step", Iter: 0, Bound: math.NaN(), Note: "500 samples per input"}, "dgpviz · step · iteration 0 · 500 samples per input"},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}

// TestWrap: a line too long for the slide breaks between words into lines
// that each fit, with every word kept in order; a line that fits is kept.
func TestWrap(t *testing.T) {
	sty := plot.New().X.Tick.Label
	sty.Font.Size = vg.Points(6.5)
	long := strings.Repeat("propagation 0.0378 · compression 0.019 · W₁ 0.0017 ", 8)
	width := Width - 5*vg.Millimeter
	got := wrap(sty, long, width)
	lines := strings.Split(got, "\n")
	if len(lines) < 2 {
		t.Fatalf("%d lines, want the text broken", len(lines))
	}
	for _, l := range lines {
		if w := sty.Width(l); w > width {
			t.Errorf("line %q is %v wide, more than %v", l, w, width)
		}
	}
	if strings.Join(lines, " ") != strings.Join(strings.Fields(long), " ") {
		t.Errorf("words lost or reordered: %q", got)
	}
	if short := "iteration 20 · bound −46.74 nats"; wrap(sty, short, width) != short {
		t.Errorf("a short line was changed: %q", wrap(sty, short, width))
	}
}

// TestBoundAxis: after an edit that cost thousands of nats and the
// repair, the chart leaves the spike off and keeps the latest bound
// readable (its range at least a tenth of the chart's); while the repair
// is under way, the spike is the latest bound and stays on; a history
// without a spike loses nothing.
func TestBoundAxis(t *testing.T) {
	history := func(spikeAt, n int) (b, l []float64) {
		for k := range n {
			v := -50 + 49*float64(k)/float64(n-1) // rising towards −1
			if k >= spikeAt && k < spikeAt+5 {
				v = -5102 * (1 - float64(k-spikeAt)/5) // the edit, repaired in 5 points
			}
			b, l = append(b, v), append(l, v+40)
		}
		return b, l
	}
	b, l := history(60, 100)
	lo, hi, low := BoundAxis(b, l)
	if low != -5102 || lo < -200 || lo > -2 {
		t.Errorf("after the repair: axis [%.1f, %.1f], lowest %.1f; want the spike (−5102) off a chart that shows the last bounds", lo, hi, low)
	}
	if last := b[len(b)-1]; (l[len(l)-1]-last)/(hi-lo) < 0.1 {
		t.Errorf("the latest bound and likelihood span %.1f of a %.1f-nat chart", l[len(l)-1]-last, hi-lo)
	}
	b, l = history(95, 100)
	if lo, _, low := BoundAxis(b, l); lo > low {
		t.Errorf("during the repair the axis starts at %.1f, above the latest bound %.1f", lo, low)
	}
	b, l = history(1000, 100)
	if lo, _, low := BoundAxis(b, l); lo > low {
		t.Errorf("no spike: the axis starts at %.1f, above the lowest bound %.1f", lo, low)
	}
}
