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
