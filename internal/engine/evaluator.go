package engine

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// ErrNotPositiveDefinite is wrapped by evaluation errors when a layer's
// Kuu cannot be factorised even with the model's jitter. An optimizer can
// recover by raising the jitter or reverting the step.
var ErrNotPositiveDefinite = errors.New("engine: Kuu is not positive definite")

// Evaluator evaluates the bound and its gradient. It keeps workspace
// between calls so that repeated evaluations of same-shaped models (an
// optimizer's loop) allocate little. An Evaluator is not safe for
// concurrent use; make one per goroutine.
type Evaluator struct {
	// Workers is the number of goroutines over data chunks; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int

	layers []*layerWork
}

// Evaluate is a convenience wrapper that uses a fresh Evaluator.
func Evaluate(m *Model, opt Options) (*Result, *Gradient, error) {
	var e Evaluator
	return e.Evaluate(m, opt)
}

// Evaluate computes the bound for model m and, if opt.Gradient, its
// gradient. It validates the model first.
func (e *Evaluator) Evaluate(m *Model, opt Options) (*Result, *Gradient, error) {
	if err := m.Validate(); err != nil {
		return nil, nil, err
	}
	nAll, _ := m.X.Dims()
	rows := opt.Rows
	scale := 1.0
	if rows != nil {
		if len(rows) == 0 {
			return nil, nil, fmt.Errorf("engine: empty minibatch")
		}
		for _, r := range rows {
			if r < 0 || r >= nAll {
				return nil, nil, fmt.Errorf("engine: minibatch row %d out of range [0,%d)", r, nAll)
			}
		}
		scale = float64(nAll) / float64(len(rows))
	}
	x := gatherRows(m.X, rows)
	y := gatherRows(m.Y, rows)
	n := len(x.rows)

	for len(e.layers) < len(m.Layers) {
		e.layers = append(e.layers, &layerWork{})
	}
	works := e.layers[:len(m.Layers)]
	res := &Result{Layers: make([]LayerTerms, len(m.Layers)), Messages: make([]Message, len(m.Layers))}

	// What depends on the parameters alone. With several workers, the
	// layers above the first are prepared while the first runs forward.
	errs := make([]error, len(m.Layers))
	prepare := func(i int) {
		errs[i] = works[i].prepare(m.Layers[i], m.Jitter, scale, opt.Gradient)
	}
	paramWork := 0
	for _, l := range m.Layers {
		paramWork += paramWorkOf(l)
	}
	var above sync.WaitGroup
	for i := 1; i < len(m.Layers); i++ {
		if e.workers() > 1 && paramWork >= minParallelWork {
			above.Go(func() { prepare(i) })
		} else {
			prepare(i)
		}
	}
	prepare(0)
	defer above.Wait() // on early returns

	// Forward: messages and penalties, and the Ψ2 part of the gradient,
	// whose upstream gradient is known before the data loop.
	var in, inVar []float64 = x.data, nil
	for i := range m.Layers {
		w := works[i]
		if i == 1 {
			above.Wait()
		}
		if errs[i] != nil {
			return nil, nil, fmt.Errorf("engine: layer %d: %w", i, errs[i])
		}
		last := i == len(m.Layers)-1
		e.forward(w, n, in, inVar, opt.Gradient, !last || opt.OutputVariance, false)
		t := LayerTerms{
			KL:                  w.kl,
			CompressionPerDatum: append([]float64(nil), w.comp[:n]...),
			PropagationPerDatum: append([]float64(nil), w.prop[:n]...),
		}
		for j := 0; j < n; j++ {
			t.Compression += w.comp[j]
			t.Propagation += w.prop[j]
		}
		t.Compression *= scale
		t.Propagation *= scale
		res.Layers[i] = t
		msg := Message{Mean: mat.NewDense(n, w.d, append([]float64(nil), w.mean...))}
		if w.vr != nil {
			msg.Var = mat.NewDense(n, w.d, append([]float64(nil), w.vr...))
		}
		res.Messages[i] = msg
		in, inVar = w.mean, w.vr
	}

	// Likelihood of the last layer.
	last := works[len(works)-1]
	lik, gMean := likelihood(last, y.data, n, scale, opt.Gradient)
	res.Likelihood = lik
	res.Bound = lik
	for _, t := range res.Layers {
		res.Bound -= t.KL + t.Compression + t.Propagation
	}
	if math.IsNaN(res.Bound) || math.IsInf(res.Bound, 0) {
		return res, nil, fmt.Errorf("engine: bound is not finite (%v)", res.Bound)
	}
	if !opt.Gradient {
		return res, nil, nil
	}

	// Backward. A layer's parameter gradient is not needed by the layers
	// below, so with several workers it runs beside them.
	grad := &Gradient{Layers: make([]LayerGradient, len(m.Layers))}
	gVar := []float64(nil)
	var tails sync.WaitGroup
	for i := len(m.Layers) - 1; i >= 0; i-- {
		w := works[i]
		params := e.backward(w, n, gMean, gVar, i == len(m.Layers)-1, res.Layers[i])
		if e.workers() > 1 && paramWorkOf(m.Layers[i]) >= minParallelWork {
			tails.Go(func() { grad.Layers[i] = params() })
		} else {
			grad.Layers[i] = params()
		}
		gMean, gVar = w.dIn, w.dInVar
	}
	tails.Wait()
	return res, grad, nil
}

// paramWorkOf estimates the multiply-adds of a layer's work that depends
// on its parameters alone (prepare, and the parameter gradient's chain).
func paramWorkOf(l *Layer) int {
	m, _, d := l.Dims()
	return m * m * (m + m*d)
}

// rowSet is a contiguous copy of selected rows.
type rowSet struct {
	rows []int
	data []float64
}

func gatherRows(a *mat.Dense, rows []int) rowSet {
	n, c := a.Dims()
	if rows == nil {
		rows = make([]int, n)
		for i := range rows {
			rows[i] = i
		}
	}
	out := rowSet{rows: rows, data: make([]float64, len(rows)*c)}
	raw := a.RawMatrix()
	for k, r := range rows {
		copy(out.data[k*c:(k+1)*c], raw.Data[r*raw.Stride:r*raw.Stride+c])
	}
	return out
}
