package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestParallelEqualsSerial: chunks are reduced in a fixed order, so any
// number of workers gives the same bits.
func TestParallelEqualsSerial(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	m := RandomModel(rng, 300, []int{1, 3, 2, 4}, []string{"rbf", "rbf", "rbf"}, 12)
	var want []float64
	var wantBound float64
	for _, workers := range []int{1, 2, 3, 8} {
		e := Evaluator{Workers: workers}
		r, g, err := e.Evaluate(m, Options{Gradient: true, OutputVariance: true})
		if err != nil {
			t.Fatal(err)
		}
		got := g.Flatten(nil)
		if want == nil {
			want, wantBound = got, r.Bound
			continue
		}
		if r.Bound != wantBound {
			t.Errorf("workers=%d: bound %v, serial %v", workers, r.Bound, wantBound)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("workers=%d: gradient[%d] %v, serial %v", workers, i, got[i], want[i])
				break
			}
		}
	}
}

// TestEvaluatorReuse: an Evaluator reused across models of different
// shapes gives what a fresh one gives.
func TestEvaluatorReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	a := RandomModel(rng, 40, []int{1, 2, 1}, []string{"rbf", "rbf"}, 6)
	b := RandomModel(rng, 70, []int{2, 3, 2, 1}, []string{"rbf", "linear", "rbf"}, 4)
	var e Evaluator
	for _, m := range []*Model{a, b, a, b} {
		r1, g1, err := e.Evaluate(m, Options{Gradient: true})
		if err != nil {
			t.Fatal(err)
		}
		r2, g2 := mustEval(t, m, Options{Gradient: true})
		if r1.Bound != r2.Bound {
			t.Errorf("reused evaluator bound %v, fresh %v", r1.Bound, r2.Bound)
		}
		f1, f2 := g1.Flatten(nil), g2.Flatten(nil)
		for i := range f1 {
			if f1[i] != f2[i] {
				t.Fatalf("gradient[%d]: reused %v, fresh %v", i, f1[i], f2[i])
			}
		}
	}
}

// TestMinibatch: a minibatch bound is the sub-model's data terms scaled by
// N/|batch| minus the unscaled KL; the full index set gives the full bound.
func TestMinibatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	m := RandomModel(rng, 50, []int{1, 2, 1}, []string{"rbf", "rbf"}, 6)
	full, gFull := mustEval(t, m, Options{Gradient: true})
	all := make([]int, 50)
	for i := range all {
		all[i] = 49 - i
	}
	rev, gRev := mustEval(t, m, Options{Rows: all, Gradient: true})
	if math.Abs(rev.Bound-full.Bound) > 1e-9*math.Abs(full.Bound) {
		t.Errorf("all rows reversed: bound %v, full %v", rev.Bound, full.Bound)
	}
	a, b := gFull.Flatten(nil), gRev.Flatten(nil)
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9*math.Max(1, math.Abs(a[i])) {
			t.Fatalf("gradient[%d]: %v vs %v", i, a[i], b[i])
		}
	}

	rows := []int{3, 17, 4, 40, 22}
	batch, _ := mustEval(t, m, Options{Rows: rows})
	sub := m.Clone()
	sub.X = mat.NewDense(len(rows), 1, nil)
	sub.Y = mat.NewDense(len(rows), 1, nil)
	for i, r := range rows {
		sub.X.Set(i, 0, m.X.At(r, 0))
		sub.Y.Set(i, 0, m.Y.At(r, 0))
	}
	subRes, _ := mustEval(t, sub, Options{})
	var kl float64
	for _, l := range subRes.Layers {
		kl += l.KL
	}
	scale := 50.0 / float64(len(rows))
	want := scale*(subRes.Bound+kl) - kl
	if math.Abs(batch.Bound-want) > 1e-9*math.Abs(want) {
		t.Errorf("minibatch bound %v, scaled sub-model %v", batch.Bound, want)
	}
	if _, _, err := Evaluate(m, Options{Rows: []int{0, 50}}); err == nil {
		t.Error("row 50 of 50 accepted")
	}
	if _, _, err := Evaluate(m, Options{Rows: []int{}}); err == nil {
		t.Error("empty minibatch accepted")
	}
}

// TestPredictMatchesEvaluate: predicting at the training inputs gives the
// messages of Evaluate.
func TestPredictMatchesEvaluate(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	m := RandomModel(rng, 20, []int{1, 2, 2}, []string{"rbf", "rbf"}, 5)
	res, _ := mustEval(t, m, Options{OutputVariance: true})
	var e Evaluator
	msgs, err := e.Predict(m, m.X)
	if err != nil {
		t.Fatal(err)
	}
	for i := range msgs {
		if !mat.Equal(msgs[i].Mean, res.Messages[i].Mean) || !mat.Equal(msgs[i].Var, res.Messages[i].Var) {
			t.Errorf("layer %d: Predict differs from Evaluate", i)
		}
	}
	// The layer function at a certain input agrees with layer 1's message.
	post, err := NewLayerPosterior(m.Layers[0], m.Jitter)
	if err != nil {
		t.Fatal(err)
	}
	mean, varU := make([]float64, 2), make([]float64, 2)
	post.FunctionAt(m.X.RawRowView(4), nil, mean, varU)
	for k := 0; k < 2; k++ {
		if math.Abs(mean[k]-res.Messages[0].Mean.At(4, k)) > 1e-12 ||
			math.Abs(varU[k]+m.Layers[0].NoiseVariance-res.Messages[0].Var.At(4, k)) > 1e-12 {
			t.Errorf("FunctionAt output %d: mean %v var %v; message %v %v", k, mean[k], varU[k], res.Messages[0].Mean.At(4, k), res.Messages[0].Var.At(4, k))
		}
	}
	first, err := e.PredictLayers(m, m.X, 1)
	if err != nil || len(first) != 1 || !mat.Equal(first[0].Mean, msgs[0].Mean) || !mat.Equal(first[0].Var, msgs[0].Var) {
		t.Errorf("PredictLayers(1) differs from Predict's first layer (err %v)", err)
	}
	if _, err := e.PredictLayers(m, m.X, 3); err == nil {
		t.Error("PredictLayers accepted 3 layers of 2")
	}
	bad := mat.NewDense(1, 2, nil)
	if _, err := e.Predict(m, bad); err == nil {
		t.Error("Predict accepted inputs of the wrong width")
	}
}

// TestProductsTN checks productsTN against the definition c = alpha·aᵀ·b +
// beta·c, for narrow products (split by rows of c) and wide ones (split by
// columns, summed over the data in blocks), and that 1 and 3 workers give
// the same bits. The tolerance is the dot products' rounding bound,
// k·ε·Σ|a||b| per element.
func TestProductsTN(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	for _, c := range []struct{ m, k, cols int }{{15, 1965, 560}, {7, 300, 257}, {15, 40, 30}, {5, 129, 300}} {
		a, b := make([]float64, c.k*c.m), make([]float64, c.k*c.cols)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		c0 := make([]float64, c.m*c.cols)
		for i := range c0 {
			c0[i] = rng.NormFloat64()
		}
		const alpha, beta = 0.7, -1.5
		var first []float64
		for _, workers := range []int{1, 3} {
			e := Evaluator{Workers: workers}
			got := append([]float64(nil), c0...)
			e.productsTN(c.m, c.k, tnProduct{c: got, cols: c.cols, a: a, b: b, alpha: alpha, beta: beta})
			if first == nil {
				first = got
			} else {
				for i := range got {
					if got[i] != first[i] {
						t.Fatalf("%v: %d workers: c[%d] = %v, 1 worker %v", c, workers, i, got[i], first[i])
					}
				}
			}
			for i := range c.m {
				for j := range c.cols {
					var s, mag float64
					for l := range c.k {
						s += a[l*c.m+i] * b[l*c.cols+j]
						mag += math.Abs(a[l*c.m+i] * b[l*c.cols+j])
					}
					want := alpha*s + beta*c0[i*c.cols+j]
					tol := float64(c.k)*0x1p-52*(mag+math.Abs(beta*c0[i*c.cols+j])) + 1e-300
					if d := math.Abs(got[i*c.cols+j] - want); d > tol {
						t.Fatalf("%v: c[%d,%d] = %v, want %v (diff %g > %g)", c, i, j, got[i*c.cols+j], want, d, tol)
					}
				}
			}
		}
	}
}
