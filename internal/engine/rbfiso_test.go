package engine

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRBFIsoMatchesARD checks the isotropic RBF against the ARD RBF with
// all lengthscales equal: the same bound and, for the lengthscale, the sum
// of the ARD lengthscale gradients (the derivative of a tied parameter).
func TestRBFIsoMatchesARD(t *testing.T) {
	for ci, widths := range [][]int{{5, 2}, {6, 2, 6}, {2, 3, 1}} {
		rng := rand.New(rand.NewPCG(uint64(ci), 11))
		kernels := make([]string, len(widths)-1)
		for i := range kernels {
			kernels[i] = "rbfiso"
		}
		iso := RandomModel(rng, 12, widths, kernels, 4)
		ard := iso.Clone()
		for _, l := range ard.Layers {
			l.Kernel = l.Kernel.(*RBFIso).ARD()
		}
		ri, gi := mustEval(t, iso, Options{Gradient: true})
		ra, ga := mustEval(t, ard, Options{Gradient: true})
		if math.Abs(ri.Bound-ra.Bound) > 1e-10*math.Abs(ra.Bound) {
			t.Errorf("%v: bound iso %.15g, ARD %.15g", widths, ri.Bound, ra.Bound)
		}
		for li := range iso.Layers {
			ki, ka := gi.Layers[li].Kernel, ga.Layers[li].Kernel
			var sum float64
			for _, v := range ka[1:] {
				sum += v
			}
			if d := math.Abs(ki[0] - ka[0]); d > 1e-8*math.Max(1, math.Abs(ka[0])) {
				t.Errorf("%v layer %d: variance gradient iso %.12g, ARD %.12g", widths, li, ki[0], ka[0])
			}
			if d := math.Abs(ki[1] - sum); d > 1e-8*math.Max(1, math.Abs(sum)) {
				t.Errorf("%v layer %d: lengthscale gradient iso %.12g, Σ ARD %.12g", widths, li, ki[1], sum)
			}
		}
	}
}

func TestRBFIsoEvalAndParams(t *testing.T) {
	k := NewRBFIso(1.3, 0.7, 3)
	a, b := []float64{0.1, -0.4, 2}, []float64{0.5, 0.2, 1.1}
	// k(a,b) = 1.3·exp(−½·(0.16+0.36+0.81)/0.49), by hand.
	want := 1.3 * math.Exp(-0.5*1.33/0.49)
	if got := k.Eval(a, b); math.Abs(got-want) > 1e-15 {
		t.Errorf("Eval = %.17g, want %.17g", got, want)
	}
	if got := k.ARD().Eval(a, b); math.Abs(got-want) > 1e-15 {
		t.Errorf("ARD().Eval = %.17g, want %.17g", got, want)
	}
	c := k.Clone()
	c.SetParams([]float64{2, 3})
	if k.Variance() != 1.3 || k.Lengthscale() != 0.7 || c.Params()[1] != 3 || c.(*RBFIso).ARD().Lengthscales[2] != 3 {
		t.Errorf("Clone shares state or SetParams missed the tied lengthscales: %v %v", k.Params(), c.Params())
	}
	dst := make([]float64, 1)
	Cov(k, dst, a, b)
	if math.Abs(dst[0]-want) > 1e-15 {
		t.Errorf("Cov = %.17g, want %.17g", dst[0], want)
	}
}

// TestRBFIsoModelFile checks that a model with isotropic RBF layers goes
// through a model file unchanged, and that a file missing the lengthscale
// is refused.
func TestRBFIsoModelFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := RandomModel(rng, 8, []int{4, 2, 4}, []string{"rbfiso", "rbf"}, 3)
	var buf bytes.Buffer
	if err := WriteModel(&buf, m, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"type": "rbfiso"`) {
		t.Fatalf("no rbfiso kernel in the file:\n%s", buf.String())
	}
	mf, err := ReadModel(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := mf.Model.Layers[0].Kernel.(*RBFIso); !ok {
		t.Fatalf("read kernel %T, want *RBFIso", mf.Model.Layers[0].Kernel)
	}
	r1, _ := mustEval(t, m, Options{})
	r2, _ := mustEval(t, mf.Model, Options{})
	if r1.Bound != r2.Bound {
		t.Errorf("bound changed through the file: %v → %v", r1.Bound, r2.Bound)
	}
	bad := strings.Replace(buf.String(), `"lengthscale"`, `"lengthscalex"`, 1)
	if _, err := ReadModel(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "lengthscale") {
		t.Errorf("file without the lengthscale: err = %v", err)
	}
}
