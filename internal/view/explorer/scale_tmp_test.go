package explorer

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"dgpviz/internal/engine"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
)

func TestTmpScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TMPN"))
	if n == 0 {
		t.Skip()
	}
	ds := walkData(n*9/10, n/10, 30)
	d := view.NewData(1, ds)
	t0 := time.Now()
	m, err := train.Initialize(d.X, d.Y, train.RobotPreset(0).Init)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("init %v", time.Since(t0))
	t0 = time.Now()
	res, _, err := (&engine.Evaluator{Workers: 1}).Evaluate(m, engine.Options{NoOutputMessage: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("eval %v", time.Since(t0))
	s := &view.Snapshot{Model: m, Data: d, Eval: train.NewEvaluation(res), Version: 1, Iter: 1}
	v := New(view.NewEnv(context.Background(), 10))
	f := v.factsOf(d)
	t0 = time.Now()
	passAll(s, f)
	t.Logf("passAll %v", time.Since(t0))
	t0 = time.Now()
	analyzeSample(m, f)
	t.Logf("sample %v", time.Since(t0))
}

func TestTmpInit(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TMPN"))
	if n == 0 {
		t.Skip()
	}
	ds := walkData(n*9/10, n/10, 30)
	d := view.NewData(1, ds)
	v := New(view.NewEnv(context.Background(), 10))
	a, _ := v.Preset(d)
	t0 := time.Now()
	m, _, err := v.Init(context.Background(), d, a, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("init %v", time.Since(t0))
	t0 = time.Now()
	tr, err := train.NewTrainer(m, v.Optimizer(train.TrainerConfig{Workers: 2}))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("trainer %v", time.Since(t0))
	t0 = time.Now()
	tr.Step()
	t.Logf("step %v", time.Since(t0))
	_, ok := tr.LastEvaluation()
	t.Logf("last eval %v", ok)
}
