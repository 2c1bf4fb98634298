package engine

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Chunked evaluation: the bound of all the data in consecutive chunks of
// rows, so that the workspace grows with the chunk and not with the data.
//
// Every term of the bound but the KL is a sum over the data, and so is the
// gradient but the KL's part: the full bound is Σ_c (n_c/N)·estimate_c of
// the minibatch estimates of the chunks (Options.Rows), which is computed
// here as the sum of the chunks' unscaled data terms, plus the KL once;
// the gradient likewise, with the KL's part in the first chunk's alone.
// Nothing couples the data within a layer but the final layer's optimal
// q(u), which needs the Ψ statistics of all the data: with
// Options.OptimalFinalQ a first pass of the forward messages accumulates
// them (Φ = ΣΨ2, or Ψ1ᵀΨ1, and Ψ1ᵀY) and solves for q(u), and a second
// evaluates the bound and gradient with that q(u) explicit.

// DefaultChunkRows is the chunk of a chunked evaluation (EvaluateChunked)
// where a caller has no better size: its workspace is a few megabytes on
// the robot's and Frey's models, and the work per chunk that does not
// depend on the data (the chain of the parameter gradient, M³·D per
// layer) is small beside its data's.
const DefaultChunkRows = 8192

// ChunkAbove is the number of rows above which the trainer and the
// command-line tools evaluate in chunks of DefaultChunkRows; below it an
// evaluation of all the rows at once holds at most a few tens of
// megabytes.
const ChunkAbove = 4 * DefaultChunkRows

// EvaluateAll is Evaluate where a caller does not choose how: a minibatch
// or at most ChunkAbove rows at once, more rows in chunks of
// DefaultChunkRows (EvaluateChunked), so that the workspace does not grow
// with N.
func (e *Evaluator) EvaluateAll(m *Model, opt Options) (*Result, *Gradient, error) {
	if m.X != nil && opt.Rows == nil {
		if n, _ := m.X.Dims(); n > ChunkAbove {
			return e.EvaluateChunked(m, opt, DefaultChunkRows)
		}
	}
	return e.Evaluate(m, opt)
}

// EvaluateChunked computes what Evaluate computes for all the data
// (opt.Rows must be nil), in consecutive chunks of at most chunk rows: its
// workspace is that of an evaluation of chunk rows, O(chunk·M·D + M²·D)
// per layer, besides the per-datum outputs of the Result (messages and
// penalties, N×D and N per layer), which are complete. The result equals
// Evaluate's up to rounding (the sums over the data are summed chunk by
// chunk), and, like it, does not depend on the number of workers; it
// depends on chunk only through that rounding.
//
// With opt.OptimalFinalQ the forward pass runs twice: once to gather the
// final layer's statistics, once with the optimal q(u) they give.
func (e *Evaluator) EvaluateChunked(m *Model, opt Options, chunk int) (*Result, *Gradient, error) {
	if chunk < 1 {
		return nil, nil, fmt.Errorf("chunk of %d rows: want at least 1", chunk)
	}
	if opt.Rows != nil {
		return nil, nil, fmt.Errorf("a chunked evaluation is of all the data, not a minibatch")
	}
	if m.X != nil {
		n, _ := m.X.Dims()
		e.startTeam(min(n, chunk))
	}
	if err := m.Validate(); err != nil {
		return nil, nil, err
	}
	n, _ := m.X.Dims()
	chunk = min(chunk, n)
	last := len(m.Layers) - 1

	res := &Result{Layers: make([]LayerTerms, len(m.Layers)), Messages: make([]Message, len(m.Layers))}
	for i, l := range m.Layers {
		_, _, d := l.Dims()
		res.Layers[i].CompressionPerDatum = make([]float64, n)
		res.Layers[i].PropagationPerDatum = make([]float64, n)
		if i == last && opt.NoOutputMessage {
			continue
		}
		res.Messages[i].Mean = mat.NewDense(n, d, nil)
		if i < last || opt.OutputVariance {
			res.Messages[i].Var = mat.NewDense(n, d, nil)
		}
	}

	model := m
	if opt.OptimalFinalQ {
		q, l, err := e.chunkedFinalQ(m, chunk)
		if err != nil {
			return nil, nil, err
		}
		res.FinalQ = q
		mq := *m
		mq.Layers = slices.Clone(m.Layers)
		mq.Layers[last] = l
		model = &mq
	}
	copt := opt
	copt.OptimalFinalQ = false

	var grad *Gradient
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		e.dataRange(m, lo, hi)
		r, g, err := e.evaluate(model, copt, hi-lo, 1, &chunkPart{dst: res, at: lo, first: lo == 0, grad: grad})
		if err != nil {
			return nil, nil, err
		}
		res.Likelihood += r.Likelihood
		for i, t := range r.Layers {
			res.Layers[i].Compression += t.Compression
			res.Layers[i].Propagation += t.Propagation
			if lo == 0 {
				res.Layers[i].KL = t.KL
			}
		}
		if g == nil {
			continue
		}
		grad = g // the first chunk's, to which the others add theirs
	}
	res.Bound = res.Likelihood
	for _, t := range res.Layers {
		res.Bound -= t.KL + t.Compression + t.Propagation
	}
	if math.IsNaN(res.Bound) || math.IsInf(res.Bound, 0) {
		return res, nil, notFiniteError{"the bound", res.Bound}
	}
	if !opt.Gradient {
		return res, nil, nil
	}
	if opt.OptimalFinalQ {
		zeroFinalQ(grad)
	}
	if err := checkGradient(grad); err != nil {
		return res, nil, err
	}
	return res, grad, nil
}

// dataRange points e.x and e.y at rows lo…hi−1 of the model's data: their
// storage where it is contiguous, else a copy.
func (e *Evaluator) dataRange(m *Model, lo, hi int) {
	e.x, e.xbuf = rangeRows(e.xbuf, m.X, lo, hi)
	e.y, e.ybuf = rangeRows(e.ybuf, m.Y, lo, hi)
}

// rangeRows returns rows lo…hi−1 of a as one contiguous slice: a's own
// storage when its rows have no gaps, else a copy into buf, whose storage
// it returns too.
func rangeRows(buf []float64, a *mat.Dense, lo, hi int) (x, newBuf []float64) {
	raw := a.RawMatrix()
	if raw.Stride == raw.Cols || hi-lo <= 1 {
		return raw.Data[lo*raw.Stride : lo*raw.Stride+(hi-lo)*raw.Cols], buf
	}
	buf = gatherRows(buf, a.Slice(lo, hi, 0, raw.Cols).(*mat.Dense), nil)
	return buf, buf
}

// chunkedFinalQ returns the final layer's q(u) at its optimum, and the
// layer with it, from statistics gathered chunk by chunk: the forward
// messages of the layers below, then the final layer's Ψ statistics,
// whose sums are whitened and solved once (solveFinalQ).
func (e *Evaluator) chunkedFinalQ(m *Model, chunk int) (*OptimalQ, *Layer, error) {
	for len(e.layers) < len(m.Layers) {
		e.layers = append(e.layers, &layerWork{})
	}
	works := e.layers[:len(m.Layers)]
	for i, l := range m.Layers {
		works[i].uncertain = i > 0
		works[i].noKLGrad = false
		if err := works[i].prepare(l, m.Jitter, 1, false); err != nil {
			return nil, nil, fmt.Errorf("layer %d: %w", i+1, err)
		}
	}
	w := works[len(works)-1]
	mu, d := w.m, w.d
	uncertain := len(works) > 1
	// Φ's sum: ΣΨ2 as hi + lo (TwoSum over the chunks, whitened once as
	// penaltySums does), or the whitened VᵀV of a certain input.
	phi, phiLo := make([]float64, mu*mu), make([]float64, mu*mu)
	vty := make([]float64, mu*d) // Vᵀy/s²
	n, _ := m.X.Dims()
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		e.dataRange(m, lo, hi)
		r := hi - lo
		var in, inVar []float64 = e.x, nil
		for _, wi := range works[:len(works)-1] {
			e.forward(wi, r, in, inVar, false, true, fwdMessages, nil)
			in, inVar = wi.mean, wi.vr
		}
		e.forward(w, r, in, inVar, false, false, fwdStats, nil)
		if uncertain {
			for k, v := range w.sumPsi2 {
				s, err := twoSum(phi[k], v)
				phi[k] = s
				phiLo[k] += err + w.sumPsi2Lo[k]
			}
		} else {
			addTo(phi, w.p11W)
		}
		e.productsTN(mu, r, tnProduct{c: vty, cols: d, a: w.v, b: e.y, alpha: 1 / w.s2, beta: 1})
	}
	sc := &w.scratch
	sc.next = 0
	phiW := phi
	if uncertain {
		phiW = sc.take(mu * mu)
		if w.compensate {
			scr := sc.take(2*mu*mu + mu)
			whitenCompensated(phiW, phi, phiLo, w.lw, w.lwT, mu, scr[:mu*mu], scr[mu*mu:2*mu*mu], scr[2*mu*mu:])
		} else {
			w.whiten(phiW, phi, sc.take(mu*mu))
		}
	}
	q, l, err := e.solveFinalQ(w, m.Layers[len(m.Layers)-1], phiW, vty)
	if err != nil {
		return nil, nil, fmt.Errorf("layer %d: %w", len(m.Layers), err)
	}
	return q, l, nil
}
