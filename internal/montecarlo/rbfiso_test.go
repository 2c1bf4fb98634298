package montecarlo

import (
	"testing"

	"dgpviz/internal/engine"
)

// TestLayerRBFIso checks that a layer with the isotropic RBF is sampled as
// the RBF with its one lengthscale (not the generic fallback): its function
// equals that of the same layer with the equivalent ARD kernel, and its
// kind is the RBF's.
func TestLayerRBFIso(t *testing.T) {
	m := engine.StepModel(12)
	ard := m.Layers[0]
	iso := *ard
	iso.Kernel = engine.NewRBFIso(1, 0.3, 1)
	la, li := mustLayer(t, ard, 1e-6), mustLayer(t, &iso, 1e-6)
	if li.kind != kindRBF {
		t.Fatalf("kind %v, want kindRBF", li.kind)
	}
	for _, x := range []float64{-0.9, 0, 0.37} {
		ma, va := make([]float64, 1), make([]float64, 1)
		mi, vi := make([]float64, 1), make([]float64, 1)
		ca, _ := la.FunctionAt([]float64{x}, ma, va)
		ci, _ := li.FunctionAt([]float64{x}, mi, vi)
		if ma[0] != mi[0] || va[0] != vi[0] || ca != ci {
			t.Errorf("x = %v: ARD (%v, %v, %v), isotropic (%v, %v, %v)", x, ma[0], va[0], ca, mi[0], vi[0], ci)
		}
	}
}
