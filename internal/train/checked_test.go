package train

import (
	"math"
	"testing"

	"dgpviz/internal/dataset"
)

// TestSVICheckedAndStart: Checked is the best checked model, whose bound,
// computed again from its parameters, is the check's; the model goes on
// stepping away from it; and a Start before the first Step changes
// nothing of the fit but where its first evaluation is made.
func TestSVICheckedAndStart(t *testing.T) {
	xa, ya := walkData(300, 3, 3)
	nx, ny := dataset.FitNormalizer(xa), dataset.FitNormalizer(ya)
	fit := func(start bool) (*Trainer, []StepInfo) {
		m, err := Initialize(nx.Apply(xa), ny.Apply(ya), InitConfig{Inducing: 8, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := NewTrainer(m, TrainerConfig{Method: SVI{}, BatchSize: 50, Seed: 1, Window: 10, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, ok := tr.Checked(); ok {
			t.Fatal("Checked before the first step: want none")
		}
		if start {
			if err := tr.Start(); err != nil {
				t.Fatal(err)
			}
			if ev, ok := tr.LastEvaluation(); !ok || math.IsNaN(ev.Bound) {
				t.Fatalf("after Start: LastEvaluation %v, %v; want the start's", ev, ok)
			}
		}
		var infos []StepInfo
		for range 35 {
			info, err := tr.Step()
			if err != nil {
				t.Fatal(err)
			}
			infos = append(infos, info)
		}
		return tr, infos
	}
	tr, infos := fit(true)
	_, plain := fit(false)
	for i := range infos {
		if infos[i].Bound != plain[i].Bound || infos[i].Estimate != plain[i].Estimate {
			t.Fatalf("step %d with Start: bound %v (estimate %v), without: %v (%v)", i+1, infos[i].Bound, infos[i].Estimate, plain[i].Bound, plain[i].Estimate)
		}
	}
	m, res, iter, ok := tr.Checked()
	if !ok {
		t.Fatal("no checked point after 35 steps of 50 rows (checks every 10)")
	}
	if iter%10 != 0 || iter > 35 {
		t.Errorf("checked at iteration %d: want a multiple of the check interval 10", iter)
	}
	best := math.Inf(-1)
	for _, s := range infos {
		if !s.Estimate && s.Iter <= 30 {
			best = math.Max(best, s.Bound)
		}
	}
	got, err := boundNow(m)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-res.Bound) > 1e-9*math.Abs(got) || res.Bound != best {
		t.Errorf("checked model's bound %.10g, the check's %.10g, the best check's step bound %.10g: want all equal", got, res.Bound, best)
	}
	if now, _ := boundNow(tr.Model()); now == got {
		t.Errorf("the trainer's model after 5 more minibatch steps has the checked bound %.10g: want it moved on", now)
	}
}
