package engine

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// EvaluateChunked evaluates the bound on all the data, as Evaluate does,
// as the weighted sum Σ_c (n_c/N)·Evaluate(Rows: c) over disjoint
// consecutive chunks c of at most chunk rows: each chunk's evaluation is
// the minibatch estimate, scaled by N/n_c, so the weighted sum is the
// full bound and its gradient (up to rounding), while the per-datum work
// space is that of chunk rows. The per-datum penalties and the messages
// are the chunks' in the order of the rows. opt.Rows must be nil, and
// opt.OptimalFinalQ, which needs all the data at once, is not supported.
func (e *Evaluator) EvaluateChunked(m *Model, opt Options, chunk int) (*Result, *Gradient, error) {
	if opt.Rows != nil {
		return nil, nil, errors.New("a chunked evaluation covers all the data: it takes no rows")
	}
	if opt.OptimalFinalQ {
		return nil, nil, errors.New("the final layer's optimal q(u) needs all the data at once, not in chunks")
	}
	if chunk < 1 {
		return nil, nil, fmt.Errorf("chunk of %d rows, want ≥ 1", chunk)
	}
	if err := m.Validate(); err != nil {
		return nil, nil, err
	}
	n, _ := m.X.Dims()
	if chunk >= n {
		return e.Evaluate(m, opt)
	}
	var res *Result
	var grad *Gradient
	rows := make([]int, 0, chunk)
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		rows = rows[:0]
		for i := lo; i < hi; i++ {
			rows = append(rows, i)
		}
		o := opt
		o.Rows = rows
		r, g, err := e.Evaluate(m, o)
		if err != nil {
			return nil, nil, fmt.Errorf("rows %d…%d: %w", lo+1, hi, err)
		}
		w := float64(hi-lo) / float64(n)
		if res == nil {
			res = &Result{Layers: make([]LayerTerms, len(r.Layers)), Messages: make([]Message, len(r.Messages))}
			for i := range res.Layers {
				res.Layers[i].CompressionPerDatum = make([]float64, 0, n)
				res.Layers[i].PropagationPerDatum = make([]float64, 0, n)
			}
			for i, msg := range r.Messages {
				res.Messages[i] = Message{Mean: rowsLike(msg.Mean, n), Var: rowsLike(msg.Var, n)}
			}
		}
		res.Bound += w * r.Bound
		res.Likelihood += w * r.Likelihood
		for i, t := range r.Layers {
			a := &res.Layers[i]
			a.KL += w * t.KL
			a.Compression += w * t.Compression
			a.Propagation += w * t.Propagation
			a.CompressionPerDatum = append(a.CompressionPerDatum, t.CompressionPerDatum...)
			a.PropagationPerDatum = append(a.PropagationPerDatum, t.PropagationPerDatum...)
		}
		for i, msg := range r.Messages {
			copyRows(res.Messages[i].Mean, msg.Mean, lo)
			copyRows(res.Messages[i].Var, msg.Var, lo)
		}
		if g != nil {
			grad = addGradient(grad, g, w)
		}
	}
	return res, grad, nil
}

// rowsLike returns an n-row matrix with a's columns, or nil when a is nil.
func rowsLike(a *mat.Dense, n int) *mat.Dense {
	if a == nil || a.IsEmpty() {
		return nil
	}
	_, c := a.Dims()
	return mat.NewDense(n, c, nil)
}

// copyRows copies src into dst's rows from lo on (nothing when dst is nil).
func copyRows(dst, src *mat.Dense, lo int) {
	if dst == nil || src == nil {
		return
	}
	r, c := src.Dims()
	dst.Slice(lo, lo+r, 0, c).(*mat.Dense).Copy(src)
}

// addGradient returns acc + w·g, allocating acc when it is nil.
func addGradient(acc, g *Gradient, w float64) *Gradient {
	if acc == nil {
		acc = &Gradient{Layers: make([]LayerGradient, len(g.Layers))}
		for i, l := range g.Layers {
			a := LayerGradient{
				Kernel:         make([]float64, len(l.Kernel)),
				InducingInputs: mat.NewDense(l.InducingInputs.RawMatrix().Rows, l.InducingInputs.RawMatrix().Cols, nil),
				QMu:            mat.NewDense(l.QMu.RawMatrix().Rows, l.QMu.RawMatrix().Cols, nil),
				QSqrt:          make([]*mat.Dense, len(l.QSqrt)),
			}
			for k, s := range l.QSqrt {
				r, c := s.Dims()
				a.QSqrt[k] = mat.NewDense(r, c, nil)
			}
			acc.Layers[i] = a
		}
	}
	for i, l := range g.Layers {
		a := &acc.Layers[i]
		for k, v := range l.Kernel {
			a.Kernel[k] += w * v
		}
		a.NoiseVariance += w * l.NoiseVariance
		a.InducingInputs.Apply(func(r, c int, v float64) float64 { return v + w*l.InducingInputs.At(r, c) }, a.InducingInputs)
		a.QMu.Apply(func(r, c int, v float64) float64 { return v + w*l.QMu.At(r, c) }, a.QMu)
		for k, s := range l.QSqrt {
			a.QSqrt[k].Apply(func(r, c int, v float64) float64 { return v + w*s.At(r, c) }, a.QSqrt[k])
		}
	}
	return acc
}
