package engine

import (
	"errors"
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
	n, err := e.checkRange(m, opt, 0, -1, chunk)
	if err != nil {
		return nil, nil, err
	}
	model := m
	var q *OptimalQ
	if opt.OptimalFinalQ {
		s, err := e.FinalStats(m, 0, n, chunk)
		if err != nil {
			return nil, nil, err
		}
		if q, model, err = e.withFinalQ(m, s); err != nil {
			return nil, nil, err
		}
	}
	res, grad, err := e.evaluateRange(model, opt, 0, n, chunk, true)
	if err != nil {
		return nil, nil, err
	}
	res.FinalQ = q
	return finishSum(res, grad, opt)
}

// EvaluateRange evaluates the part of rows lo…hi−1 in the bound of all
// the data and its gradient (opt.Rows must be nil, and the final layer's
// q(u) is the model's: opt.OptimalFinalQ is refused), in chunks of at most
// chunk rows as EvaluateChunked does: its Result holds the range's sums of
// the data terms, unscaled, and its per-datum outputs for the range's rows
// alone; its Bound is the range's likelihood less those penalties. With kl
// the Result has the KL terms too, and the gradient their part. The
// evaluation of all the data is the sum of the parts of ranges that cover
// the rows once, exactly one of them with kl (SumParts): a process can
// evaluate some of the ranges and another the rest.
func (e *Evaluator) EvaluateRange(m *Model, opt Options, lo, hi, chunk int, kl bool) (*Result, *Gradient, error) {
	if opt.OptimalFinalQ {
		return nil, nil, errors.New("the part of a range of rows is evaluated with the final layer's q(u) of the model: FinalStats and SolveFinalQ give its optimum")
	}
	if _, err := e.checkRange(m, opt, lo, hi, chunk); err != nil {
		return nil, nil, err
	}
	res, grad, err := e.evaluateRange(m, opt, lo, hi, chunk, kl)
	if err != nil {
		return nil, nil, err
	}
	if math.IsNaN(res.Bound) || math.IsInf(res.Bound, 0) {
		return res, nil, notFiniteError{"the bound", res.Bound}
	}
	if grad != nil {
		if err := checkGradient(grad); err != nil {
			return res, nil, err
		}
	}
	return res, grad, nil
}

// checkRange checks the arguments of a chunked evaluation of rows
// lo…hi−1 (hi < 0: all of them) and starts the evaluator's team; it
// returns the number of rows of the data.
func (e *Evaluator) checkRange(m *Model, opt Options, lo, hi, chunk int) (int, error) {
	if chunk < 1 {
		return 0, fmt.Errorf("chunk of %d rows: want at least 1", chunk)
	}
	if opt.Rows != nil {
		return 0, fmt.Errorf("a chunked evaluation is of all the data, not a minibatch")
	}
	if m.X != nil {
		n, _ := m.X.Dims()
		e.startTeam(min(n, chunk))
	}
	if err := m.Validate(); err != nil {
		return 0, err
	}
	n, _ := m.X.Dims()
	if hi >= 0 && (lo < 0 || lo >= hi || hi > n) {
		return 0, fmt.Errorf("rows %d to %d of %d: want 1 ≤ first ≤ last ≤ %d", lo+1, hi, n, n)
	}
	return n, nil
}

// evaluateRange evaluates rows lo…hi−1 of a checked model in chunks, the
// KL's terms and gradient with kl alone; its Bound is the sum of the
// range's terms.
func (e *Evaluator) evaluateRange(m *Model, opt Options, lo, hi, chunk int, kl bool) (*Result, *Gradient, error) {
	chunk = min(chunk, hi-lo)
	res := newPartResult(m, opt, hi-lo)
	copt := opt
	copt.OptimalFinalQ = false

	var grad *Gradient
	for a := lo; a < hi; a += chunk {
		b := min(hi, a+chunk)
		e.dataRange(m, a, b)
		r, g, err := e.evaluate(m, copt, b-a, 1, &chunkPart{dst: res, at: a - lo, first: a == lo, noKL: !kl, grad: grad})
		if err != nil {
			return nil, nil, err
		}
		res.Likelihood += r.Likelihood
		for i, t := range r.Layers {
			res.Layers[i].Compression += t.Compression
			res.Layers[i].Propagation += t.Propagation
			if a == lo && kl {
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
	return res, grad, nil
}

// newPartResult returns a Result with per-datum outputs of n rows, which
// chunkParts fill.
func newPartResult(m *Model, opt Options, n int) *Result {
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
	return res
}

// EvaluateBatchPart evaluates the part that the rows opt.Rows, some of a
// minibatch of batch rows, contribute to the minibatch's estimate of the
// bound (Options.Rows): their data terms scaled by N/batch and, with kl,
// the KL terms, unscaled, and the gradient of these. The estimate of the
// whole minibatch is the sum of the parts of its rows, exactly one with
// kl (SumParts), so that processes holding different rows can each
// evaluate theirs. opt.OptimalFinalQ is refused, as for any minibatch.
func (e *Evaluator) EvaluateBatchPart(m *Model, opt Options, batch int, kl bool) (*Result, *Gradient, error) {
	rows := opt.Rows
	if len(rows) == 0 || batch < len(rows) {
		return nil, nil, fmt.Errorf("%d rows of a minibatch of %d: want 1 to %d", len(rows), batch, batch)
	}
	if opt.OptimalFinalQ {
		return nil, nil, fmt.Errorf("the final layer's optimal q(u) needs all the data, not a minibatch")
	}
	if m.X != nil {
		e.startTeam(len(rows))
	}
	if err := m.validate(rows); err != nil {
		return nil, nil, err
	}
	nAll, _ := m.X.Dims()
	for _, r := range rows {
		if r < 0 || r >= nAll {
			return nil, nil, fmt.Errorf("minibatch row %d out of range 1…%d", r+1, nAll)
		}
	}
	e.x, e.xbuf = dataRows(e.xbuf, m.X, rows)
	e.y, e.ybuf = dataRows(e.ybuf, m.Y, rows)
	res := newPartResult(m, opt, len(rows))
	r, g, err := e.evaluate(m, opt, len(rows), float64(nAll)/float64(batch), &chunkPart{dst: res, first: true, noKL: !kl})
	if err != nil {
		return nil, nil, err
	}
	res.Likelihood, res.Bound = r.Likelihood, r.Likelihood
	for i, t := range r.Layers {
		res.Layers[i].Compression, res.Layers[i].Propagation = t.Compression, t.Propagation
		if kl {
			res.Layers[i].KL = t.KL
		}
		res.Bound -= res.Layers[i].KL + t.Compression + t.Propagation
	}
	if math.IsNaN(res.Bound) || math.IsInf(res.Bound, 0) {
		return res, nil, notFiniteError{"the bound", res.Bound}
	}
	if g != nil {
		if err := checkGradient(g); err != nil {
			return res, nil, err
		}
	}
	return res, g, nil
}

// finishSum checks the sum of an evaluation's parts as Evaluate checks
// its own, and zeroes the final layer's q(u) gradient where q(u) is at
// its optimum.
func finishSum(res *Result, grad *Gradient, opt Options) (*Result, *Gradient, error) {
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

// A Part is a range's part of the bound of all the data and of its
// gradient (EvaluateRange), as SumParts adds them up.
type Part struct {
	Likelihood float64
	// Layers hold the range's sums of the compression and propagation
	// penalties and, in the one part that has them, the KL terms; the
	// per-datum penalties are not read.
	Layers []LayerTerms
	// KL says that this is the part with the KL terms.
	KL bool
	// Gradient is the range's part of the gradient (nil when none was
	// asked for).
	Gradient *Gradient
}

// SumParts returns the evaluation of all the data from the parts of
// ranges that cover its rows once, exactly one of them with the KL terms
// (EvaluateRange), summed in the order given and checked as Evaluate
// checks its own: what EvaluateChunked returns, up to the rounding of the
// sums, but without per-datum outputs. opt says what was evaluated: with
// opt.Gradient every part has a gradient; with opt.OptimalFinalQ the
// parts were evaluated at the optimal q(u) q (SolveFinalQ), which the
// Result carries, and the gradient's final-layer q(u) entries are zeroed
// as EvaluateChunked zeroes them.
func SumParts(parts []Part, opt Options, q *OptimalQ) (*Result, *Gradient, error) {
	if len(parts) == 0 {
		return nil, nil, errors.New("no parts to sum")
	}
	layers := len(parts[0].Layers)
	res := &Result{Layers: make([]LayerTerms, layers), Messages: make([]Message, layers), FinalQ: q}
	var grad *Gradient
	kls := 0
	for k, p := range parts {
		if len(p.Layers) != layers {
			return nil, nil, fmt.Errorf("part %d has %d layers, part 1 has %d", k+1, len(p.Layers), layers)
		}
		res.Likelihood += p.Likelihood
		for i, t := range p.Layers {
			res.Layers[i].Compression += t.Compression
			res.Layers[i].Propagation += t.Propagation
			if p.KL {
				res.Layers[i].KL = t.KL
			}
		}
		if p.KL {
			kls++
		}
		if !opt.Gradient {
			continue
		}
		if p.Gradient == nil {
			return nil, nil, fmt.Errorf("part %d has no gradient", k+1)
		}
		if grad == nil {
			grad = p.Gradient.clone()
			continue
		}
		if err := grad.add(p.Gradient); err != nil {
			return nil, nil, fmt.Errorf("part %d: %w", k+1, err)
		}
	}
	if kls != 1 {
		return nil, nil, fmt.Errorf("%d parts have the KL terms: want one", kls)
	}
	res.Bound = res.Likelihood
	for _, t := range res.Layers {
		res.Bound -= t.KL + t.Compression + t.Propagation
	}
	return finishSum(res, grad, opt)
}

// clone returns a deep copy of g.
func (g *Gradient) clone() *Gradient {
	c := &Gradient{Layers: make([]LayerGradient, len(g.Layers))}
	for i, l := range g.Layers {
		c.Layers[i] = LayerGradient{Kernel: slices.Clone(l.Kernel), NoiseVariance: l.NoiseVariance,
			InducingInputs: mat.DenseCopyOf(l.InducingInputs), QMu: mat.DenseCopyOf(l.QMu)}
		for _, s := range l.QSqrt {
			c.Layers[i].QSqrt = append(c.Layers[i].QSqrt, mat.DenseCopyOf(s))
		}
	}
	return c
}

// add adds o, of g's shape, to g.
func (g *Gradient) add(o *Gradient) error {
	if len(o.Layers) != len(g.Layers) {
		return fmt.Errorf("a gradient of %d layers, want %d", len(o.Layers), len(g.Layers))
	}
	for i := range g.Layers {
		a, b := &g.Layers[i], &o.Layers[i]
		if len(a.Kernel) != len(b.Kernel) || len(a.QSqrt) != len(b.QSqrt) || !sameDims(a.InducingInputs, b.InducingInputs) || !sameDims(a.QMu, b.QMu) {
			return fmt.Errorf("layer %d: a gradient of another shape", i+1)
		}
		addTo(a.Kernel, b.Kernel)
		a.NoiseVariance += b.NoiseVariance
		a.InducingInputs.Add(a.InducingInputs, b.InducingInputs)
		a.QMu.Add(a.QMu, b.QMu)
		for k := range a.QSqrt {
			if !sameDims(a.QSqrt[k], b.QSqrt[k]) {
				return fmt.Errorf("layer %d: a gradient of another shape", i+1)
			}
			a.QSqrt[k].Add(a.QSqrt[k], b.QSqrt[k])
		}
	}
	return nil
}

func sameDims(a, b *mat.Dense) bool {
	ar, ac := a.Dims()
	br, bc := b.Dims()
	return ar == br && ac == bc
}

// GradientOf returns the gradient whose flat vector (Gradient.Flatten) is
// v, shaped as m's parameters (Model.ParamLayout).
func GradientOf(m *Model, v []float64) (*Gradient, error) {
	want := 0
	for _, l := range m.Layers {
		mz, q, d := l.Dims()
		want += l.Kernel.NumParams() + 1 + mz*q + mz*d + d*mz*(mz+1)/2
	}
	if len(v) != want {
		return nil, fmt.Errorf("a gradient of %d values, want the model's %d parameters", len(v), want)
	}
	g := &Gradient{Layers: make([]LayerGradient, len(m.Layers))}
	k := 0
	take := func(n int) []float64 { s := v[k : k+n]; k += n; return s }
	for i, l := range m.Layers {
		mz, q, d := l.Dims()
		lg := &g.Layers[i]
		lg.Kernel = slices.Clone(take(l.Kernel.NumParams()))
		lg.NoiseVariance = take(1)[0]
		lg.InducingInputs = mat.NewDense(mz, q, slices.Clone(take(mz*q)))
		lg.QMu = mat.NewDense(mz, d, slices.Clone(take(mz*d)))
		for range d {
			s := mat.NewDense(mz, mz, nil)
			setLower(s, take(mz*(mz+1)/2))
			lg.QSqrt = append(lg.QSqrt, s)
		}
	}
	return g, nil
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

// FinalStats are the sums over some rows of the data that the final
// layer's optimal q(u) needs (Options.OptimalFinalQ): Φ = ΣΨ2 (or, after
// a certain input, the whitened Ψ1ᵀΨ1) and Ψ1ᵀY/σ², the final layer's
// M×M and M×D, row-major. The statistics of ranges that cover the data
// once add up (Add) to those of all the data, from which SolveFinalQ
// gives the optimum.
type FinalStats struct {
	// Phi is Φ's sum and PhiLo its rounding error (the low half of a
	// double-double sum), M×M.
	Phi, PhiLo []float64
	// VtY is VᵀY/σ², V the final layer's whitened Ψ1 (Ψ1·Wᵀ with
	// Kuu⁻¹ = WᵀW), M×D.
	VtY []float64
}

// Add adds o, the statistics of other rows of the same model, to s.
func (s *FinalStats) Add(o *FinalStats) error {
	if len(o.Phi) != len(s.Phi) || len(o.PhiLo) != len(s.PhiLo) || len(o.VtY) != len(s.VtY) {
		return errors.New("statistics of another model's final layer")
	}
	for k, v := range o.Phi {
		h, err := twoSum(s.Phi[k], v)
		s.Phi[k] = h
		s.PhiLo[k] += err + o.PhiLo[k]
	}
	addTo(s.VtY, o.VtY)
	return nil
}

// FinalStats returns the final layer's statistics of rows lo…hi−1 of the
// data, gathered chunk by chunk: the forward messages of the layers
// below, then the final layer's Ψ statistics.
func (e *Evaluator) FinalStats(m *Model, lo, hi, chunk int) (*FinalStats, error) {
	if _, err := e.checkRange(m, Options{}, lo, hi, chunk); err != nil {
		return nil, err
	}
	for len(e.layers) < len(m.Layers) {
		e.layers = append(e.layers, &layerWork{})
	}
	works := e.layers[:len(m.Layers)]
	for i, l := range m.Layers {
		works[i].uncertain = i > 0
		works[i].noKLGrad = false
		if err := works[i].prepare(l, m.Jitter, 1, false); err != nil {
			return nil, fmt.Errorf("layer %d: %w", i+1, err)
		}
	}
	w := works[len(works)-1]
	mu, d := w.m, w.d
	uncertain := len(works) > 1
	// Φ's sum: ΣΨ2 as hi + lo (TwoSum over the chunks, whitened once as
	// penaltySums does), or the whitened VᵀV of a certain input.
	s := &FinalStats{Phi: make([]float64, mu*mu), PhiLo: make([]float64, mu*mu), VtY: make([]float64, mu*d)}
	for a := lo; a < hi; a += chunk {
		b := min(hi, a+chunk)
		e.dataRange(m, a, b)
		r := b - a
		var in, inVar []float64 = e.x, nil
		for _, wi := range works[:len(works)-1] {
			e.forward(wi, r, in, inVar, false, true, fwdMessages, nil)
			in, inVar = wi.mean, wi.vr
		}
		e.forward(w, r, in, inVar, false, false, fwdStats, nil)
		if uncertain {
			for k, v := range w.sumPsi2 {
				h, err := twoSum(s.Phi[k], v)
				s.Phi[k] = h
				s.PhiLo[k] += err + w.sumPsi2Lo[k]
			}
		} else {
			addTo(s.Phi, w.p11W)
		}
		e.productsTN(mu, r, tnProduct{c: s.VtY, cols: d, a: w.v, b: e.y, alpha: 1 / w.s2, beta: 1})
	}
	return s, nil
}

// SolveFinalQ returns the final layer's optimal q(u) given the
// statistics of all the data (FinalStats, Add).
func (e *Evaluator) SolveFinalQ(m *Model, s *FinalStats) (*OptimalQ, error) {
	q, _, err := e.withFinalQ(m, s)
	return q, err
}

// withFinalQ returns the final layer's optimal q(u) given s, and a
// shallow copy of m whose final layer holds it.
func (e *Evaluator) withFinalQ(m *Model, s *FinalStats) (*OptimalQ, *Model, error) {
	if err := m.Validate(); err != nil {
		return nil, nil, err
	}
	for len(e.layers) < len(m.Layers) {
		e.layers = append(e.layers, &layerWork{})
	}
	last := len(m.Layers) - 1
	w := e.layers[last]
	w.uncertain = last > 0
	w.noKLGrad = false
	if err := w.prepare(m.Layers[last], m.Jitter, 1, false); err != nil {
		return nil, nil, fmt.Errorf("layer %d: %w", last+1, err)
	}
	mu, d := w.m, w.d
	if len(s.Phi) != mu*mu || len(s.PhiLo) != mu*mu || len(s.VtY) != mu*d {
		return nil, nil, fmt.Errorf("layer %d: statistics of another final layer than the model's (%d inducing points, %d outputs)", last+1, mu, d)
	}
	sc := &w.scratch
	sc.next = 0
	phiW := s.Phi
	if w.uncertain {
		phiW = sc.take(mu * mu)
		if w.compensate {
			scr := sc.take(2*mu*mu + mu)
			whitenCompensated(phiW, s.Phi, s.PhiLo, w.lw, w.lwT, mu, scr[:mu*mu], scr[mu*mu:2*mu*mu], scr[2*mu*mu:])
		} else {
			w.whiten(phiW, s.Phi, sc.take(mu*mu))
		}
	}
	q, l, err := e.solveFinalQ(w, m.Layers[last], phiW, slices.Clone(s.VtY))
	if err != nil {
		return nil, nil, fmt.Errorf("layer %d: %w", last+1, err)
	}
	mq := *m
	mq.Layers = slices.Clone(m.Layers)
	mq.Layers[last] = l
	return q, &mq, nil
}
