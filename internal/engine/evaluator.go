package engine

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"
)

// ErrNotPositiveDefinite is wrapped by evaluation errors when a layer's
// Kuu cannot be factorised even with the model's jitter. An optimizer can
// recover by raising the jitter or reverting the step.
var ErrNotPositiveDefinite = errors.New("engine: Kuu is not positive definite")

// chunkSize is the number of data per parallel work item. Chunks are
// reduced in order, so results do not depend on the number of workers.
const chunkSize = 32

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

	// Forward: messages and penalties, and the Ψ2 part of the gradient,
	// whose upstream gradient is known before the data loop.
	var in, inVar []float64 = x.data, nil
	for i, l := range m.Layers {
		w := works[i]
		if err := w.prepare(l, m.Jitter, scale, opt.Gradient); err != nil {
			return nil, nil, fmt.Errorf("engine: layer %d: %w", i, err)
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

	grad := &Gradient{Layers: make([]LayerGradient, len(m.Layers))}
	gVar := []float64(nil)
	for i := len(m.Layers) - 1; i >= 0; i-- {
		w := works[i]
		grad.Layers[i] = e.backward(w, m.Layers[i], n, gMean, gVar, i == len(m.Layers)-1, res.Layers[i])
		gMean, gVar = w.dIn, w.dInVar
	}
	return res, grad, nil
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
	for k, r := range rows {
		for j := 0; j < c; j++ {
			out.data[k*c+j] = a.At(r, j)
		}
	}
	return out
}

func (e *Evaluator) workers() int {
	if e.Workers > 0 {
		return e.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// parallel calls fn(chunk, lo, hi) for every chunk of [0, n) on up to
// Workers goroutines.
func (e *Evaluator) parallel(n int, fn func(chunk, lo, hi int)) {
	chunks := numChunks(n)
	workers := min(e.workers(), chunks)
	if workers <= 1 {
		for c := 0; c < chunks; c++ {
			fn(c, c*chunkSize, min(n, (c+1)*chunkSize))
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				fn(c, c*chunkSize, min(n, (c+1)*chunkSize))
			}
		}()
	}
	wg.Wait()
}

func numChunks(n int) int { return (n + chunkSize - 1) / chunkSize }
