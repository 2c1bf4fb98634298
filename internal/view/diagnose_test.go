package view

import (
	"math"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/modelfile"
	"dgpviz/internal/train"
)

func evaluation(t testing.TB, m *engine.Model) *train.Evaluation {
	t.Helper()
	var ev engine.Evaluator
	r, _, err := ev.Evaluate(m, engine.Options{NoOutputMessage: true})
	if err != nil {
		t.Fatal(err)
	}
	return train.NewEvaluation(r)
}

// runToEnd optimises m until the optimizer stops or max iterations,
// calling each (when not nil) with the model and evaluation after every
// iteration.
func runToEnd(t testing.TB, m *engine.Model, max int, each func(*engine.Model, *train.Evaluation)) *engine.Model {
	t.Helper()
	tr, err := train.NewTrainer(m, train.TrainerConfig{Method: train.LBFGS{}, Seed: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < max; i++ {
		info, err := tr.Step()
		if err != nil {
			t.Fatal(err)
		}
		if each != nil {
			if ev, ok := tr.LastEvaluation(); ok {
				each(tr.Model(), ev)
			}
		}
		if info.Status.Terminated() {
			break
		}
	}
	return tr.Model()
}

// TestDiagnoseCollapse: the naïve edit that the issue found collapsing the
// step demo (an inducing input of layer 3 moved by a tenth of its range with
// q(u) kept, costing 10⁵ nats) ends, after the optimizer has run, at the
// bound of a constant prediction, log N(y | 0, I) = −42.57 nats for the 30
// standardised points, and Diagnose names a collapsed layer; the fitted
// model, the model right after a projected move, and every iteration of a
// fit from the initialisation are not diagnosed as collapsed.
func TestDiagnoseCollapse(t *testing.T) {
	mf, err := modelfile.ReadFile("../engine/testdata/step3_fitted.json")
	if err != nil {
		t.Fatal(err)
	}
	fitted := mf.Model
	if c := Diagnose(fitted, evaluation(t, fitted)); c != nil {
		t.Fatalf("the fitted model is diagnosed as collapsed: %+v", c)
	}
	z := fitted.Layers[2].InducingInputs.RawMatrix().Data
	lo, hi := z[0], z[0]
	for _, v := range z {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	moved, err := engine.MoveInducing(fitted, 2, 5, []float64{z[5] + 0.1*(hi-lo)})
	if err != nil {
		t.Fatal(err)
	}
	if c := Diagnose(moved, evaluation(t, moved)); c != nil {
		t.Errorf("a projected move is diagnosed as collapsed: %+v", c)
	}
	naive, err := engine.MoveInducingKeepU(fitted, 2, 5, []float64{z[5] + 0.1*(hi-lo)})
	if err != nil {
		t.Fatal(err)
	}
	end := runToEnd(t, naive, 3000, nil)
	ev := evaluation(t, end)
	// The bound of y ~ N(0, 1) on standardised data: −n/2·log 2π − Σy²/2
	// with Σy² = n (the population variance is 1).
	n, _ := end.Y.Dims()
	constant := -float64(n)/2*math.Log(2*math.Pi) - float64(n)/2
	c := Diagnose(end, ev)
	t.Logf("after the naïve edit the optimizer stopped at %.3f nats (a constant prediction: %.3f; the fit: %.3f); diagnosis %+v", ev.Bound, constant, evaluation(t, fitted).Bound, c)
	switch {
	case math.Abs(ev.Bound-constant) < 0.5 && c == nil:
		t.Errorf("the model at the constant prediction's bound %.3f is not diagnosed as collapsed", ev.Bound)
	case ev.Bound > evaluation(t, fitted).Bound-1 && c != nil:
		t.Errorf("the model the optimizer repaired (bound %.3f) is diagnosed as collapsed: %+v", ev.Bound, c)
	}

	// A layer made to pass nothing on — its inducing outputs zero and its
	// noise a million times its function's variance — is named, whichever
	// layer it is.
	for li := range fitted.Layers {
		m := fitted.CloneParams()
		m.Layers[li].QMu.Zero()
		m.Layers[li].NoiseVariance = 1e6
		c := Diagnose(m, evaluation(t, m))
		if c == nil || c.Layer != li {
			t.Errorf("layer %d silenced: diagnosis %+v, want layer %d", li+1, c, li)
		}
	}

	// No false alarm along a fit from the initialisation.
	d := NewData(1, dataset.Step())
	m, err := train.Initialize(d.X, d.Y, train.InitConfig{Hidden: []int{1, 1}, Inducing: 12, Seed: 1, Perturb: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	alarms := 0
	runToEnd(t, m, 300, func(m *engine.Model, ev *train.Evaluation) {
		if c := Diagnose(m, ev); c != nil {
			alarms++
		}
	})
	if alarms > 0 {
		t.Errorf("%d of 300 iterations from the initialisation diagnosed as collapsed", alarms)
	}
}
