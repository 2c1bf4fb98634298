package stream

import (
	"math"
	"testing"
	"time"

	"dgpviz/internal/stream/streamtest"
	"dgpviz/internal/train"
	"dgpviz/internal/view/explorer"
)

// TestStochasticSession: a session on more than train.StochasticRows rows,
// asked for the default L-BFGS, fits by SVI (train.ChooseMethod); its
// frames say so, carry the minibatch estimate and the epochs, and show the
// last full-data check's model: the bound of a frame is the check's
// (bound_iter, a multiple of the check interval, behind iter between
// checks), and it rises from check to check. The first picture comes
// before any evaluation on every row: without a bound, with the sample's
// hidden means.
func TestStochasticSession(t *testing.T) {
	n := train.StochasticRows + 1000
	e := newEnv(t, func(o *Options) {
		o.Limits.MaxRows = n
		if err := o.Catalog.Add(streamtest.WideData(n, 4), o.Limits.MaxRows); err != nil {
			t.Fatal(err)
		}
	})
	c := e.Dial(t, "data=wide&hidden=2&m=8&opt=lbfgs&speed=0")
	every := train.TrainerConfig{Method: train.SVI{}, BatchSize: train.DefaultStochasticBatch, Window: train.DefaultWindow}.CheckEvery(n)
	type check struct {
		iter  int
		bound float64
	}
	var checks []check
	estimates, lastEpochs, ahead, unbounded := 0, 0.0, false, false
	c.Until("three checks after the start", 120*time.Second, func(m streamtest.Msg) bool {
		if m.Type() != "frame" {
			return false
		}
		f := m.Frame
		if got := streamtest.Get(f, "optimizer", "method"); got != "svi" || streamtest.Get(f, "optimizer", "stochastic") != true {
			t.Fatalf("optimizer %v, stochastic %v on %d rows: want svi", got, streamtest.Get(f, "optimizer", "stochastic"), n)
		}
		iter, bi, b := int(streamtest.Num(streamtest.Get(f, "iter"))), int(streamtest.Num(streamtest.Get(f, "bound_iter"))), streamtest.Num(streamtest.Get(f, "bound"))
		if streamtest.Get(f, "bound") == nil && iter == 0 && !unbounded {
			// the first picture, before the start's evaluation on every
			// row: the sample's hidden means, predicted by the explorer
			unbounded = true
			if got, want := len(streamtest.Floats(streamtest.Get(f, "layers", 0, "mean"))), 2*explorer.SampleRows; got != want {
				t.Fatalf("the first frame, without a bound: hidden layer 1 has %d means, want the sample's %d", got, want)
			}
			return false
		}
		ep, est := streamtest.Num(streamtest.Get(f, "optimizer", "epochs")), streamtest.Get(f, "optimizer", "estimate")
		if bi%every != 0 || bi > iter || math.IsNaN(b) {
			t.Fatalf("frame at iteration %d shows the model of iteration %d (bound %v): want a check's, every %d", iter, bi, b, every)
		}
		if ep < lastEpochs || iter > 0 && math.Abs(ep-float64(iter*train.DefaultStochasticBatch)/float64(n)) > 1e-9 {
			t.Fatalf("epochs %v at iteration %d (before: %v): want %d rows a step over %d", ep, iter, lastEpochs, train.DefaultStochasticBatch, n)
		}
		lastEpochs = ep
		if est != nil {
			estimates++
			ahead = ahead || bi < iter
		}
		if len(checks) == 0 || checks[len(checks)-1].iter != bi {
			checks = append(checks, check{bi, b})
		}
		return len(checks) >= 4
	})
	if !unbounded {
		t.Error("the first frame came with a bound: want it before the evaluation on every row")
	}
	if estimates == 0 || !ahead {
		t.Errorf("%d frames with a minibatch estimate, model behind the steps %v: want frames between checks", estimates, ahead)
	}
	for i := 1; i < len(checks); i++ {
		if !(checks[i].bound > checks[i-1].bound) {
			t.Errorf("check at iteration %d: bound %.6g, at %d: %.6g; want a rise (a kept check beats the best)", checks[i].iter, checks[i].bound, checks[i-1].iter, checks[i-1].bound)
		}
	}
	t.Logf("checks (iteration, bound): %v; %.2f epochs", checks, lastEpochs)
}
