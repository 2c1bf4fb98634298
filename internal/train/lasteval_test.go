package train

import (
	"testing"

	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// TestLastEvaluation: after each L-BFGS step the trainer's last
// evaluation is the model's (the bound, the terms and the hidden layers'
// messages equal a fresh evaluation to the last bit); after an edit
// (SetModel) there is none until the next step.
func TestLastEvaluation(t *testing.T) {
	x, y, _, _ := stepData()
	m, err := Initialize(x, y, InitConfig{Hidden: []int{1, 1}, Inducing: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(m, TrainerConfig{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tr.LastEvaluation(); ok {
		t.Fatal("an evaluation before any step")
	}
	var ev engine.Evaluator
	ev.Workers = 1
	seen := 0
	for range 30 {
		info, err := tr.Step()
		if err != nil {
			t.Fatal(err)
		}
		le, ok := tr.LastEvaluation()
		if !ok {
			continue
		}
		seen++
		res, _, err := ev.Evaluate(tr.Model(), engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if le.Bound != res.Bound || le.Bound != info.Bound || le.Likelihood != res.Likelihood {
			t.Fatalf("iteration %d: last evaluation's bound %v, the model's %v, the step's %v", info.Iter, le.Bound, res.Bound, info.Bound)
		}
		for i := range le.Hidden {
			if le.Layers[i].Compression != res.Layers[i].Compression || !mat.Equal(le.Hidden[i].Mean, res.Messages[i].Mean) || !mat.Equal(le.Hidden[i].Var, res.Messages[i].Var) {
				t.Fatalf("iteration %d: layer %d's last evaluation differs from the model's", info.Iter, i)
			}
		}
	}
	if seen < 20 {
		t.Errorf("only %d of 30 steps left an evaluation of the accepted model", seen)
	}
	if err := tr.SetModel(tr.Model().CloneParams()); err != nil {
		t.Fatal(err)
	}
	if _, ok := tr.LastEvaluation(); ok {
		t.Error("an evaluation after SetModel")
	}
}
