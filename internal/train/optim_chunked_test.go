package train

import (
	"math/rand/v2"
	"testing"

	"dgpviz/internal/engine"
)

// TestTrainerEvaluatesInChunks: above engine.ChunkAbove rows the trainer's
// full-data evaluation is the chunked one, bit for bit, with the final
// q(u) at its optimum.
func TestTrainerEvaluatesInChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 1))
	m := engine.RandomModel(rng, engine.ChunkAbove+100, []int{1, 2, 1}, []string{"rbf", "rbf"}, 5)
	tr, err := NewTrainer(m, TrainerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Step(); err != nil {
		t.Fatal(err)
	}
	ev, ok := tr.LastEvaluation()
	if !ok {
		t.Fatal("no evaluation at the accepted point")
	}
	opt := engine.Options{OptimalFinalQ: true, NoOutputMessage: true}
	chunked, _, err := new(engine.Evaluator).EvaluateChunked(tr.Model(), opt, engine.DefaultChunkRows)
	if err != nil {
		t.Fatal(err)
	}
	all, _, err := new(engine.Evaluator).Evaluate(tr.Model(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Bound != chunked.Bound {
		t.Errorf("the trainer's bound %v, the chunked evaluation's %v (all at once: %v)", ev.Bound, chunked.Bound, all.Bound)
	}
}
