package train

import (
	"math/rand/v2"
	"strings"
	"testing"

	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// finalQIsOptimal reports whether the model's final q(u) is its optimum
// at the model's other parameters, bit for bit (the trainer evaluated it
// there, and an evaluation is deterministic).
func finalQIsOptimal(t *testing.T, m *engine.Model) bool {
	t.Helper()
	ev := engine.Evaluator{Workers: 1}
	q, err := ev.OptimalFinalQ(m)
	if err != nil {
		t.Fatal(err)
	}
	l := m.Layers[len(m.Layers)-1]
	if !mat.Equal(l.QMu, q.Mu) {
		return false
	}
	for _, s := range l.QSqrt {
		if !mat.Equal(s, q.Sqrt) {
			return false
		}
	}
	return true
}

// TestTrainerKeepsFinalQOptimal: by default the final layer's q(u) is no
// parameter of the optimizer's, and after every step the model holds it
// at its optimum, so that a model file, the live page and LastEvaluation
// all see the optimum; with ExplicitFinalQ, or minibatches, it is a
// parameter as before.
func TestTrainerKeepsFinalQOptimal(t *testing.T) {
	x, y, _, _ := stepData()
	m, err := Initialize(x, y, InitConfig{Hidden: []int{1, 1}, Inducing: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	mz, _, d := m.Layers[2].Dims()
	finalQ := mz*d + d*mz*(mz+1)/2
	total := len(m.ParamLayout())

	tr, err := NewTrainer(m.Clone(), TrainerConfig{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !tr.OptimalFinalQ() || len(tr.free) != total-finalQ {
		t.Fatalf("optimal final q(u) %v with %d free parameters, want true with %d", tr.OptimalFinalQ(), len(tr.free), total-finalQ)
	}
	if finalQIsOptimal(t, tr.Model()) {
		t.Fatal("the initial model's final q(u) is already the optimum: the test shows nothing")
	}
	for range 30 {
		info, err := tr.Step()
		if err != nil {
			t.Fatal(err)
		}
		if !finalQIsOptimal(t, tr.Model()) {
			t.Fatalf("iteration %d: the model's final q(u) is not the optimum at its other parameters", info.Iter)
		}
		if b := boundOf(t, tr.Model()); b != info.Bound {
			t.Fatalf("iteration %d: step's bound %.17g, the model's %.17g", info.Iter, info.Bound, b)
		}
	}

	explicit, err := NewTrainer(m.Clone(), TrainerConfig{Workers: 1, ExplicitFinalQ: true})
	if err != nil {
		t.Fatal(err)
	}
	if explicit.OptimalFinalQ() || len(explicit.free) != total {
		t.Errorf("ExplicitFinalQ: optimal %v with %d free parameters, want false with %d", explicit.OptimalFinalQ(), len(explicit.free), total)
	}
	for range 5 {
		if _, err := explicit.Step(); err != nil {
			t.Fatal(err)
		}
	}
	if finalQIsOptimal(t, explicit.Model()) {
		t.Error("ExplicitFinalQ: the final q(u) is the optimum after 5 steps")
	}
	for _, cfg := range []TrainerConfig{
		{Method: Adam{}, BatchSize: 10},
		{Frozen: map[engine.Group]bool{engine.GroupQSqrt: true}},
	} {
		tr, err := NewTrainer(m.Clone(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if tr.OptimalFinalQ() {
			t.Errorf("%+v: the final q(u) kept at its optimum", cfg)
		}
	}
	// Full-batch Adam keeps it too; switching to minibatches rebuilds.
	tr, err = NewTrainer(m.Clone(), TrainerConfig{Method: Adam{}})
	if err != nil {
		t.Fatal(err)
	}
	if !tr.OptimalFinalQ() {
		t.Error("full-batch Adam: the final q(u) not kept at its optimum")
	}
	if err := tr.SetConfig(TrainerConfig{Method: Adam{}, BatchSize: 10}); err != nil {
		t.Fatal(err)
	}
	if tr.OptimalFinalQ() || len(tr.free) != total {
		t.Errorf("after switching to minibatches: optimal %v with %d free parameters", tr.OptimalFinalQ(), len(tr.free))
	}
}

// TestTrainerFinalQEdit: a person drags the final layer's q(u) (a pull) or
// its inducing input (a move) in the live page, which hands the edited
// model to SetModel. The optimizer carries on from it without error: no
// evaluation is left over from before the edit, the first step returns
// q(u) to its optimum at the edited model's other parameters, and from
// then on the bound, the model and LastEvaluation agree.
func TestTrainerFinalQEdit(t *testing.T) {
	m := fittedStep3(t)
	tr, err := NewTrainer(m.Clone(), TrainerConfig{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := tr.Step(); err != nil {
			t.Fatal(err)
		}
	}
	last := len(m.Layers) - 1
	cur := tr.Model().Clone()
	pulled, err := engine.PullInducing(cur, last, 3, []float64{cur.Layers[last].QMu.At(3, 0) + 0.5})
	if err != nil {
		t.Fatal(err)
	}
	z := cur.Layers[last].InducingInputs.At(4, 0)
	moved, err := engine.MoveInducing(cur, last, 4, []float64{z + 0.05})
	if err != nil {
		t.Fatal(err)
	}
	for _, edit := range []struct {
		name string
		m    *engine.Model
	}{{"pull", pulled}, {"move", moved}} {
		if finalQIsOptimal(t, edit.m) {
			t.Fatalf("%s: the edit left the final q(u) at its optimum: the test shows nothing", edit.name)
		}
		// The bound the optimizer starts from: the edited model's other
		// parameters with q(u) at its optimum.
		ev := engine.Evaluator{Workers: 1}
		start, _, err := ev.Evaluate(edit.m, engine.Options{OptimalFinalQ: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.SetModel(edit.m.Clone()); err != nil {
			t.Fatal(err)
		}
		if _, ok := tr.LastEvaluation(); ok {
			t.Fatalf("%s: an evaluation from before the edit", edit.name)
		}
		for k := range 3 {
			info, err := tr.Step()
			if err != nil {
				t.Fatalf("%s: step %d: %v", edit.name, k+1, err)
			}
			if info.Event != "" {
				t.Errorf("%s: step %d: event %q", edit.name, k+1, info.Event)
			}
			if !finalQIsOptimal(t, tr.Model()) {
				t.Fatalf("%s: step %d: the final q(u) is not at its optimum", edit.name, k+1)
			}
			if info.Bound < start.Bound {
				t.Errorf("%s: step %d: bound %.10g below the edited model's with the optimal q(u), %.10g", edit.name, k+1, info.Bound, start.Bound)
			}
			le, ok := tr.LastEvaluation()
			if !ok || le.Bound != info.Bound || le.Bound != boundOf(t, tr.Model()) {
				t.Fatalf("%s: step %d: last evaluation %v (ok %v), step %v, model %v", edit.name, k+1, le, ok, info.Bound, boundOf(t, tr.Model()))
			}
		}
	}
}

// TestTrainerRevertKeepsFinalQ: when a step fails and the trainer reverts
// to the last good parameters, the final q(u) reverts with them (it was
// computed there) rather than staying at the failed trial's.
func TestTrainerRevertKeepsFinalQ(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 3))
	m := engine.RandomModel(rng, 15, []int{1, 2, 1}, []string{"rbf", "rbf"}, 4)
	// Full-batch Adam with a step of 1e3 in log-parameters: certain failures.
	tr, err := NewTrainer(m, TrainerConfig{Method: Adam{}, LearningRate: 1e3, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	reverts := 0
	for range 30 {
		s, err := tr.Step()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(s.Event, "reverted") {
			reverts++
		}
		if err := tr.Model().Validate(); err != nil {
			t.Fatalf("iteration %d: model left invalid: %v", s.Iter, err)
		}
		if !finalQIsOptimal(t, tr.Model()) {
			t.Fatalf("iteration %d (%q): the final q(u) is not the optimum at the model's parameters", s.Iter, s.Event)
		}
		if b := boundOf(t, tr.Model()); b != s.Bound {
			t.Fatalf("iteration %d (%q): step's bound %.17g, the model's %.17g", s.Iter, s.Event, s.Bound, b)
		}
	}
	if reverts == 0 {
		t.Error("no step was reverted: the test shows nothing")
	}

	// L-BFGS at an optimum: a line search whose trials were evaluated but
	// gave no decrease reverts to the last good point (and resets its
	// memory, or stops there); the model's q(u) must be that point's, not
	// the last trial's.
	// With 10 correction pairs this model stalls so near its optimum.
	defer func(k int) { lbfgsMemory = k }(lbfgsMemory)
	lbfgsMemory = 10
	m = engine.RandomModel(rand.New(rand.NewPCG(5, 5)), 20, []int{1, 1}, []string{"rbf"}, 5)
	tr, err = NewTrainer(m, TrainerConfig{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	stalls := 0
	prev := boundOf(t, m)
	for range 200 {
		s, err := tr.Step()
		if err != nil {
			t.Fatal(err)
		}
		if s.Bound <= prev {
			stalls++
		}
		prev = s.Bound
		if !finalQIsOptimal(t, tr.Model()) {
			t.Fatalf("iteration %d: after a step without decrease the final q(u) is not the model's optimum", s.Iter)
		}
		if s.Status.Terminated() {
			break
		}
	}
	if stalls == 0 {
		t.Error("no line search ended without a decrease: the test shows nothing")
	}
}
