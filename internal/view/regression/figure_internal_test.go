package regression

import (
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/montecarlo"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
)

// BenchmarkMCMessage is one live update of the message figure: four inputs
// × 20,000 samples on the demo's second layer after 50 iterations, encoded.
func BenchmarkMCMessage(b *testing.B) {
	d := view.NewData(1, dataset.Step())
	m, err := train.Initialize(d.X, d.Y, train.InitConfig{Hidden: []int{1, 1}, Inducing: 12, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	tr, err := train.NewTrainer(m, train.TrainerConfig{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	for range 50 {
		tr.Step()
	}
	snap := &view.Snapshot{Model: tr.Model().Clone(), Data: d, Iter: tr.Iter()}
	ps, err := montecarlo.InputSets(snap.Model, 1)
	if err != nil {
		b.Fatal(err)
	}
	req := &figureRequest{layer: 1, inputs: ps[montecarlo.InputSetPaper], samples: FigureDefaultSamples}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := figureMessage(snap, req, 1); err != nil {
			b.Fatal(err)
		}
	}
}
