package stream

import (
	"encoding/binary"
	"math"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
)

// TestGridMatchesFunctionAt checks the batched grid against
// engine.LayerPosterior.FunctionAt point by point.
func TestGridMatchesFunctionAt(t *testing.T) {
	snap := snapshotFor(t, dataset.Step(), InitLike{Hidden: []int{1, 1}, Inducing: 12}, 10)
	m := snap.model
	var f framer
	var e encoder
	e.forceF32 = true
	res, _, err := f.ev.Evaluate(m, engine.Options{OutputVariance: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range m.Layers {
		g := f.grid(&e, m, i, res)
		p, err := engine.NewLayerPosterior(l, m.Jitter)
		if err != nil {
			t.Fatal(err)
		}
		f32 := func(r Ref) []float64 { return sectionValues(&e, r) }
		xs, mean, varU, varCond := f32(g.X), f32(g.Mean), f32(g.VarU), f32(g.VarCond)
		for j, x := range xs {
			mu, vu := make([]float64, 1), make([]float64, 1)
			vc := p.FunctionAt([]float64{x}, nil, mu, vu)
			for _, c := range [][2]float64{{mean[j], mu[0]}, {varU[j], vu[0]}, {varCond[j], vc}} {
				if math.Abs(c[0]-c[1]) > 1e-4*(1+math.Abs(c[1])) {
					t.Fatalf("layer %d, x %v: grid %v, FunctionAt %v", i, x, c[0], c[1])
				}
			}
		}
	}
}

// sectionValues decodes one f32 section of e (for tests).
func sectionValues(e *encoder, r Ref) []float64 {
	s := e.secs[r.I]
	out := make([]float64, s.N)
	for i := range out {
		out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(e.payload[s.O+4*i:])))
	}
	return out
}
