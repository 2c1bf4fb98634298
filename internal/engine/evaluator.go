package engine

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"dgpviz/internal/linalg"

	"gonum.org/v1/gonum/mat"
)

// ErrNotPositiveDefinite is wrapped by evaluation errors when a layer's
// Kuu cannot be factorised even with the model's jitter. An optimizer can
// recover by raising the jitter or reverting the step.
var ErrNotPositiveDefinite = errors.New("Kuu is not positive definite")

// ErrNotFinite is wrapped by evaluation errors when the bound or its
// gradient is not finite: a noise variance so small that 1/s² overflows,
// say. The trainer treats such a point as infinitely bad.
var ErrNotFinite = errors.New("not finite")

// ErrImprecise is wrapped by Result.Precise's error when a term that is
// never negative (a layer's KL, compression or propagation) came out
// negative beyond rounding: the float64 sums it was formed from cancelled
// (a layer whose Kuu is all but singular under a huge lengthscale and
// variance, say), so the bound there is not a bound. An optimizer must
// treat such a point as a failed evaluation, or it climbs into the error.
var ErrImprecise = errors.New("the bound lost its precision")

// impreciseBelow is how far below zero a layer's KL, compression or
// propagation total may round before Precise reports it: fitted models'
// totals round by far less than a nat, and an optimizer can gain at most
// this much per term from the rounding.
const impreciseBelow = -1.0

// Precise returns nil, or an error wrapping ErrImprecise that names the
// first layer (counted from 1) and term that came out negative beyond
// rounding.
func (r *Result) Precise() error {
	for i, l := range r.Layers {
		for _, t := range [...]struct {
			name string
			v    float64
		}{{"KL", l.KL}, {"compression", l.Compression}, {"propagation", l.Propagation}} {
			if t.v < impreciseBelow {
				return fmt.Errorf("layer %d's %s is %.4g nats, yet never negative: %w", i+1, t.name, t.v, ErrImprecise)
			}
		}
	}
	return nil
}

// notFiniteError names what was not finite, and wraps ErrNotFinite.
type notFiniteError struct {
	what string
	v    float64
}

func (e notFiniteError) Error() string {
	return fmt.Sprintf("%s is not finite (%v)", e.what, e.v)
}
func (e notFiniteError) Is(target error) bool { return target == ErrNotFinite }

// checkGradient returns a notFiniteError naming the first layer and
// parameter group whose gradient is not finite.
func checkGradient(g *Gradient) error {
	for i, l := range g.Layers {
		groups := []struct {
			name string
			v    []float64
		}{{"kernel", l.Kernel}, {"noise", []float64{l.NoiseVariance}}, {"inducing", l.InducingInputs.RawMatrix().Data}, {"q_mu", l.QMu.RawMatrix().Data}}
		for _, s := range l.QSqrt {
			groups = append(groups, struct {
				name string
				v    []float64
			}{"q_sqrt", s.RawMatrix().Data})
		}
		for _, gr := range groups {
			for _, v := range gr.v {
				if v-v != 0 { // NaN or ±Inf
					return notFiniteError{fmt.Sprintf("the gradient of layer %d's %s", i+1, gr.name), v}
				}
			}
		}
	}
	return nil
}

// Evaluator evaluates the bound and its gradient. It keeps workspace
// between calls so that repeated evaluations of same-shaped models (an
// optimizer's loop) allocate little. An Evaluator is not safe for
// concurrent use; make one per goroutine.
type Evaluator struct {
	// Workers is the number of goroutines over data chunks; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int

	layers     []*layerWork
	x, y       []float64 // the evaluated rows of the data (read only: they may be the model's)
	xbuf, ybuf []float64 // storage of x and y when they are gathered
	team       *team     // helpers for the parallel regions, or nil
	lik        likRows   // the last layer's likelihood, computed in its forward pass
}

// startTeam makes sure that the helpers of an evaluation over n data are
// running, when it has more than one worker and chunk.
func (e *Evaluator) startTeam(n int) {
	if e.workers() <= 1 || numChunks(n) <= 1 {
		e.team = nil
		return
	}
	if e.team == nil || e.team.helpers != e.workers()-1 {
		e.team = newTeam(e.workers() - 1)
	}
	e.team.ensure()
}

// Evaluate is a convenience wrapper that uses a fresh Evaluator.
func Evaluate(m *Model, opt Options) (*Result, *Gradient, error) {
	var e Evaluator
	return e.Evaluate(m, opt)
}

// Evaluate computes the bound for model m and, if opt.Gradient, its
// gradient. It validates the model first.
func (e *Evaluator) Evaluate(m *Model, opt Options) (*Result, *Gradient, error) {
	// The helpers start first: waking a thread takes longer than the
	// validation.
	if m.X != nil {
		n, _ := m.X.Dims()
		if opt.Rows != nil {
			n = len(opt.Rows)
		}
		e.startTeam(n)
	}
	if err := m.validate(opt.Rows); err != nil {
		return nil, nil, err
	}
	nAll, _ := m.X.Dims()
	rows := opt.Rows
	scale := 1.0
	if rows != nil {
		if len(rows) == 0 {
			return nil, nil, fmt.Errorf("empty minibatch")
		}
		for _, r := range rows {
			if r < 0 || r >= nAll {
				return nil, nil, fmt.Errorf("minibatch row %d out of range 1…%d", r+1, nAll)
			}
		}
		scale = float64(nAll) / float64(len(rows))
		if opt.OptimalFinalQ {
			return nil, nil, fmt.Errorf("the final layer's optimal q(u) needs all the data, not a minibatch")
		}
	}
	e.x, e.xbuf = dataRows(e.xbuf, m.X, rows)
	e.y, e.ybuf = dataRows(e.ybuf, m.Y, rows)
	n := nAll
	if rows != nil {
		n = len(rows)
	}
	return e.evaluate(m, opt, n, scale, nil)
}

// chunkPart is where evaluate writes one chunk of a chunked evaluation
// (EvaluateChunked): the per-datum outputs into dst's full-size arrays
// from row at on. The first chunk prepares the layers and carries the
// KL's gradient; the others keep what it prepared (the parameters are
// the same) and leave the KL out, so that the chunks' gradients sum to
// the full one.
type chunkPart struct {
	dst   *Result
	at    int
	first bool
	// noKL leaves the KL's part out of the gradient of the first chunk
	// too: a range of the rows that another range's evaluation gives the
	// KL (EvaluateRange).
	noKL bool
	// grad, when not nil, is the gradient of the chunks before, to which
	// this chunk's is added.
	grad *Gradient
}

// evaluate evaluates the bound (and gradient) of the n rows in e.x and
// e.y, their data terms scaled by scale, for a valid model; part, when not
// nil, says where the per-datum outputs go (else into the Result).
func (e *Evaluator) evaluate(m *Model, opt Options, n int, scale float64, part *chunkPart) (*Result, *Gradient, error) {
	for len(e.layers) < len(m.Layers) {
		e.layers = append(e.layers, &layerWork{})
	}
	works := e.layers[:len(m.Layers)]
	res := &Result{Layers: make([]LayerTerms, len(m.Layers)), Messages: make([]Message, len(m.Layers))}

	// What depends on the parameters alone: the first layer's now, the
	// others' as side tasks of the first layer's forward pass, largest
	// first.
	errs := make([]error, len(m.Layers))
	var side []func()
	if part == nil || part.first {
		prepare := func(i int) func() {
			return func() {
				works[i].uncertain = i > 0
				works[i].noKLGrad = part != nil && part.noKL
				errs[i] = works[i].prepare(m.Layers[i], m.Jitter, scale, opt.Gradient)
				works[i].compensate = works[i].compensate && !opt.NoCompensation
			}
		}
		prepare(0)()
		above := make([]int, 0, len(m.Layers)-1)
		for i := 1; i < len(m.Layers); i++ {
			above = append(above, i)
		}
		slices.SortStableFunc(above, func(a, b int) int { return paramWorkOf(m.Layers[b]) - paramWorkOf(m.Layers[a]) })
		for _, i := range above {
			side = append(side, prepare(i))
		}
	} else {
		for _, w := range works {
			w.noKLGrad = true
		}
	}

	// Forward: messages and penalties, and the Ψ2 part of the gradient,
	// whose upstream gradient is known before the data loop.
	var in, inVar []float64 = e.x, nil
	for i := range m.Layers {
		w := works[i]
		if errs[i] != nil {
			return nil, nil, fmt.Errorf("layer %d: %w", i+1, errs[i])
		}
		last := i == len(m.Layers)-1
		var lik *likRows
		if last {
			e.lik.y = e.y
			lik = &e.lik
		}
		if last && opt.OptimalFinalQ {
			q, l, err := e.optimalFinalQ(w, m.Layers[i], n, in, inVar, side...)
			side = nil
			if err != nil {
				return nil, nil, fmt.Errorf("layer %d: %w", i+1, err)
			}
			res.FinalQ = q
			w.prepareQ(l, opt.Gradient)
		}
		e.forward(w, n, in, inVar, opt.Gradient, !last || opt.OutputVariance, fwdBound, lik, side...)
		side = nil
		t := LayerTerms{KL: w.kl, Compression: scale * w.compSum, Propagation: scale * w.propSum}
		keepMessage := !last || !opt.NoOutputMessage
		if part == nil {
			t.CompressionPerDatum = append([]float64(nil), w.comp[:n]...)
			t.PropagationPerDatum = append([]float64(nil), w.prop[:n]...)
			if keepMessage {
				msg := Message{Mean: mat.NewDense(n, w.d, append([]float64(nil), w.mean...))}
				if w.vr != nil {
					msg.Var = mat.NewDense(n, w.d, append([]float64(nil), w.vr...))
				}
				res.Messages[i] = msg
			}
		} else {
			dt, at := &part.dst.Layers[i], part.at
			copy(dt.CompressionPerDatum[at:at+n], w.comp[:n])
			copy(dt.PropagationPerDatum[at:at+n], w.prop[:n])
			if msg := part.dst.Messages[i]; keepMessage {
				copy(msg.Mean.RawMatrix().Data[at*w.d:(at+n)*w.d], w.mean[:n*w.d])
				if msg.Var != nil {
					copy(msg.Var.RawMatrix().Data[at*w.d:(at+n)*w.d], w.vr[:n*w.d])
				}
			}
		}
		res.Layers[i] = t
		in, inVar = w.mean, w.vr
	}

	// Likelihood of the last layer.
	last := works[len(works)-1]
	lik, gMean := likelihood(last, e.y, n, scale, opt.Gradient, &e.lik)
	res.Likelihood = lik
	res.Bound = lik
	for _, t := range res.Layers {
		res.Bound -= t.KL + t.Compression + t.Propagation
	}
	if math.IsNaN(res.Bound) || math.IsInf(res.Bound, 0) {
		return res, nil, notFiniteError{"the bound", res.Bound}
	}
	if !opt.Gradient {
		return res, nil, nil
	}

	// Backward. A layer's parameter gradient, which the layers below do
	// not need, is a side task of the next layer's backward pass.
	grad := &Gradient{Layers: make([]LayerGradient, len(m.Layers))}
	gVar := []float64(nil)
	for i, w := range works {
		w.gradInto = nil
		if part != nil && part.grad != nil {
			w.gradInto = &part.grad.Layers[i]
		}
	}
	for i := len(m.Layers) - 1; i >= 0; i-- {
		w := works[i]
		params := e.backward(w, n, gMean, gVar, i == len(m.Layers)-1, res.Layers[i], side...)
		side = []func(){func() { grad.Layers[i] = params() }}
		gMean, gVar = w.dIn, w.dInVar
	}
	side[0]()
	if opt.OptimalFinalQ {
		zeroFinalQ(grad)
	}
	if err := checkGradient(grad); err != nil {
		return res, nil, err
	}
	return res, grad, nil
}

// zeroFinalQ zeroes the gradient w.r.t. the final layer's q(u), on which
// the bound at its optimum does not depend (Options.OptimalFinalQ).
func zeroFinalQ(grad *Gradient) {
	g := grad.Layers[len(grad.Layers)-1]
	g.QMu.Zero()
	for _, s := range g.QSqrt {
		s.Zero()
	}
}

// paramWorkOf estimates the multiply-adds of a layer's work that depends
// on its parameters alone (prepare, and the parameter gradient's chain).
func paramWorkOf(l *Layer) int {
	m, _, d := l.Dims()
	return m * m * (m + m*d)
}

// dataRows returns the selected rows of a (all when rows is nil) as one
// contiguous slice: a's own storage when that is all of a's rows without
// gaps, else a copy into buf, whose storage it returns too.
func dataRows(buf []float64, a *mat.Dense, rows []int) (x, newBuf []float64) {
	if raw := a.RawMatrix(); rows == nil && (raw.Stride == raw.Cols || raw.Rows <= 1) {
		return raw.Data[:raw.Rows*raw.Cols], buf
	}
	buf = gatherRows(buf, a, rows)
	return buf, buf
}

// gatherRows copies the selected rows of a (all when rows is nil) into
// dst, contiguously, reusing dst's storage when it can.
func gatherRows(dst []float64, a *mat.Dense, rows []int) []float64 {
	n, c := a.Dims()
	if rows != nil {
		n = len(rows)
	}
	dst = linalg.Resize(dst, n*c)
	raw := a.RawMatrix()
	for k := 0; k < n; k++ {
		r := k
		if rows != nil {
			r = rows[k]
		}
		copy(dst[k*c:(k+1)*c], raw.Data[r*raw.Stride:r*raw.Stride+c])
	}
	return dst
}
