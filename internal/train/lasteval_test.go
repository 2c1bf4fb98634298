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
	tr := stepTrainer(t)
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

// TestEvaluation: the trainer's evaluation of its model is the model's,
// made anew after an edit and the last step's after a step; making it
// changes none of the steps that follow.
func TestEvaluation(t *testing.T) {
	tr, plain := stepTrainer(t), stepTrainer(t)
	var ev engine.Evaluator
	ev.Workers = 1
	check := func(when string) *Evaluation {
		t.Helper()
		got, err := tr.Evaluation()
		if err != nil {
			t.Fatal(err)
		}
		res, _, err := ev.Evaluate(tr.Model(), engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Bound != res.Bound || len(got.Hidden) != len(res.Messages)-1 {
			t.Fatalf("%s: the evaluation's bound %v with %d hidden layers, the model's %v with %d", when, got.Bound, len(got.Hidden), res.Bound, len(res.Messages)-1)
		}
		for i := range got.Hidden {
			if got.Layers[i].Compression != res.Layers[i].Compression || !mat.Equal(got.Hidden[i].Mean, res.Messages[i].Mean) || !mat.Equal(got.Hidden[i].Var, res.Messages[i].Var) {
				t.Fatalf("%s: layer %d's evaluation differs from the model's", when, i+1)
			}
		}
		return got
	}
	step := func(tr *Trainer) StepInfo {
		t.Helper()
		info, err := tr.Step()
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	edit := func(tr *Trainer) {
		t.Helper()
		moved := tr.Model().CloneParams()
		z := moved.Layers[0].InducingInputs
		z.Set(0, 0, z.At(0, 0)+0.5)
		if err := tr.SetModel(moved); err != nil {
			t.Fatal(err)
		}
	}
	check("before any step")
	var info StepInfo
	for range 3 {
		info = step(tr)
		step(plain)
	}
	if got := check("after a step"); got.Bound != info.Bound {
		t.Errorf("after a step: %v, the step's %v", got.Bound, info.Bound)
	}
	edit(tr)
	edit(plain)
	if got := check("after an edit"); got.Bound == info.Bound {
		t.Errorf("after an edit the bound is the step's, %v", got.Bound)
	}
	for k := range 5 {
		if a, b := step(tr), step(plain); a.Bound != b.Bound {
			t.Fatalf("step %d after the edit: %v with the evaluation, %v without", k+1, a.Bound, b.Bound)
		}
	}
}

// stepTrainer is an L-BFGS trainer of the step data's two-layer model on
// one worker.
func stepTrainer(t *testing.T) *Trainer {
	t.Helper()
	x, y, _, _ := stepData()
	m, err := Initialize(x, y, InitConfig{Hidden: []int{1, 1}, Inducing: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(m, TrainerConfig{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
