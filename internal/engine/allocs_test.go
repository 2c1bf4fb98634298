package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestAllocsDoNotGrowWithRows: an evaluation at hidden widths 12 — wider
// than the kernels' stack buffers of 8 dimensions, past which every datum
// allocated (8 to 10 times a datum) — allocates the same at 512 and
// 1,024 rows (both 16 chunks), with and without the gradient, with ΣΨ2
// summed in float64 and exactly (sumExact, on inducing inputs close
// enough to need it), and for the ARD and the isotropic kernel.
func TestAllocsDoNotGrowWithRows(t *testing.T) {
	if raceBuild {
		t.Skip("the race detector counts allocations of its own")
	}
	for _, kernel := range []string{"rbf", "rbfiso"} {
		for _, exact := range []bool{false, true} {
			big := RandomModel(rand.New(rand.NewPCG(5, 12)), 1024, []int{2, 12, 12, 4}, []string{"rbf", kernel, kernel}, 12)
			if exact {
				big.Jitter = 1e-8
				for _, l := range big.Layers[1:] {
					l.InducingInputs.Scale(0.01, l.InducingInputs)
					p := l.Kernel.Params()
					for i := 1; i < len(p); i++ {
						p[i] *= 10
					}
					l.Kernel.SetParams(p)
				}
			}
			// the same model on its first n rows
			model := func(n int) *Model {
				m := big.Clone()
				m.X = big.X.Slice(0, n, 0, 2).(*mat.Dense)
				m.Y = big.Y.Slice(0, n, 0, 4).(*mat.Dense)
				return m
			}
			for _, grad := range []bool{false, true} {
				name := fmt.Sprintf("%s/exact=%v/gradient=%v", kernel, exact, grad)
				allocs := func(n int) float64 {
					m := model(n)
					e := Evaluator{Workers: 1}
					eval := func() {
						if _, _, err := e.Evaluate(m, Options{Gradient: grad}); err != nil {
							t.Fatal(err)
						}
					}
					eval()
					if exact && !e.layers[1].compensate && !e.layers[2].compensate {
						t.Fatalf("%s: no layer sums ΣΨ2 exactly", name)
					}
					return testing.AllocsPerRun(2, eval)
				}
				few, many := allocs(512), allocs(1024)
				t.Logf("%s: %v allocations at 512 rows, %v at 1,024", name, few, many)
				// a few of the runtime's own either way; a datum's would be
				// thousands
				if many > few+8 {
					t.Errorf("%s: %v allocations at 512 rows, %v at 1,024: they grow with the rows", name, few, many)
				}
			}
		}
	}
}
