package engine

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// DefaultJitter is added to the diagonal of Kuu when a model gives none.
const DefaultJitter = 1e-6

// Limits on model sizes, checked by Validate so that a hostile or mistaken
// model file cannot make the process allocate without bound. MaxData rows
// of the robot's shape (1 input, 30 outputs) are 2.5 GB of data; the
// evaluations' workspace does not grow with them (EvaluateChunked).
const (
	MaxLayers   = 16
	MaxInducing = 2000
	MaxDim      = 1000
	MaxData     = 10000000
)

// Layer is one GP layer: D outputs sharing a kernel, noise variance and M
// inducing inputs, each output with its own q(u_d) = N(m_d, L_d L_dᵀ).
type Layer struct {
	Kernel         Kernel
	NoiseVariance  float64
	InducingInputs *mat.Dense   // M × Q
	QMu            *mat.Dense   // M × D
	QSqrt          []*mat.Dense // D matrices M × M; only the lower triangle is used
}

// Dims returns the number of inducing points M, the input dimension Q and
// the output dimension D.
func (l *Layer) Dims() (m, q, d int) {
	m, q = l.InducingInputs.Dims()
	_, d = l.QMu.Dims()
	return m, q, d
}

// Clone returns a deep copy of the layer.
func (l *Layer) Clone() *Layer {
	c := &Layer{
		Kernel:         l.Kernel.Clone(),
		NoiseVariance:  l.NoiseVariance,
		InducingInputs: mat.DenseCopyOf(l.InducingInputs),
		QMu:            mat.DenseCopyOf(l.QMu),
	}
	for _, s := range l.QSqrt {
		c.QSqrt = append(c.QSqrt, mat.DenseCopyOf(s))
	}
	return c
}

// Model is a deep GP with its training data.
type Model struct {
	Jitter float64
	X, Y   *mat.Dense // N × Q(0), N × D(L)
	Layers []*Layer
}

// Clone returns a deep copy of the model, data included.
func (m *Model) Clone() *Model {
	c := &Model{Jitter: m.Jitter}
	if m.X != nil {
		c.X = mat.DenseCopyOf(m.X)
	}
	if m.Y != nil {
		c.Y = mat.DenseCopyOf(m.Y)
	}
	for _, l := range m.Layers {
		c.Layers = append(c.Layers, l.Clone())
	}
	return c
}

// Validate checks shapes, finiteness and positivity. Its error names the
// layer and field at fault.
func (m *Model) Validate() error { return m.validate(allRows) }

// Which data rows validate checks for finiteness.
var (
	allRows = []int(nil) // every row
	noRows  = []int{}    // none: the data are not used (a prediction at other inputs)
)

// validate is Validate with the data's finiteness checked on the given
// rows only: a minibatch's evaluation or a prediction costs what its own
// rows do, not a pass over the data (which at a million rows cost more
// than an SVI step: docs/measurements.md, "Stochastic fits on the live
// page").
func (m *Model) validate(rows []int) error {
	if !(m.Jitter >= 0) || math.IsInf(m.Jitter, 0) {
		return fmt.Errorf("jitter %v must be finite and ≥ 0", m.Jitter)
	}
	if m.X == nil || m.Y == nil {
		return fmt.Errorf("data: X and Y are required")
	}
	n, q0 := m.X.Dims()
	ny, dy := m.Y.Dims()
	if n != ny {
		return fmt.Errorf("data: X has %d rows but Y has %d", n, ny)
	}
	if n > MaxData {
		return fmt.Errorf("data: %d rows, more than the limit of %d rows", n, MaxData)
	}
	if err := checkFiniteRows(m.X, rows, "data.X"); err != nil {
		return err
	}
	if err := checkFiniteRows(m.Y, rows, "data.Y"); err != nil {
		return err
	}
	if len(m.Layers) == 0 {
		return fmt.Errorf("the model has no layers")
	}
	if len(m.Layers) > MaxLayers {
		return fmt.Errorf("%d layers, more than the limit of %d layers", len(m.Layers), MaxLayers)
	}
	in := q0
	for i, l := range m.Layers {
		if err := l.Validate(in); err != nil {
			return fmt.Errorf("layer %d: %w", i+1, err)
		}
		_, _, in = l.Dims()
	}
	if in != dy {
		return fmt.Errorf("layer %d: q_mu has %d columns but Y has %d", len(m.Layers), in, dy)
	}
	return nil
}

// Validate checks l as a layer whose input has dimension q: its parts
// present, their shapes agreeing, its parameters finite and positive and
// its sizes within the engine's limits.
func (l *Layer) Validate(q int) error {
	if l.Kernel == nil {
		return fmt.Errorf("kernel: missing")
	}
	if l.InducingInputs == nil || l.QMu == nil {
		return fmt.Errorf("inducing_inputs and q_mu are required")
	}
	mz, qz := l.InducingInputs.Dims()
	if mz < 1 || mz > MaxInducing {
		return fmt.Errorf("inducing_inputs: %d points, want 1…%d", mz, MaxInducing)
	}
	if qz != q {
		return fmt.Errorf("inducing_inputs: %d columns, but the layer's input has dimension %d", qz, q)
	}
	if kq := l.Kernel.InputDim(); kq != q {
		return fmt.Errorf("kernel: %d lengthscales/variances, but the layer's input has dimension %d", kq, q)
	}
	for j, v := range l.Kernel.Params() {
		if !finitePositive(v) {
			return fmt.Errorf("kernel.%s: %v must be finite and > 0", l.Kernel.ParamNames()[j], v)
		}
	}
	if !finitePositive(l.NoiseVariance) {
		return fmt.Errorf("noise_variance: %v must be finite and > 0", l.NoiseVariance)
	}
	mm, d := l.QMu.Dims()
	if mm != mz {
		return fmt.Errorf("q_mu: %d rows, but there are %d inducing inputs", mm, mz)
	}
	if d < 1 || d > MaxDim {
		return fmt.Errorf("q_mu: %d columns (outputs), want 1…%d", d, MaxDim)
	}
	if len(l.QSqrt) != d {
		return fmt.Errorf("q_sqrt: %d matrices, want one per output (%d)", len(l.QSqrt), d)
	}
	if err := CheckFinite(l.InducingInputs, "inducing_inputs"); err != nil {
		return err
	}
	if err := CheckFinite(l.QMu, "q_mu"); err != nil {
		return err
	}
	for k, s := range l.QSqrt {
		r, c := s.Dims()
		if r != mz || c != mz {
			return fmt.Errorf("q_sqrt[%d]: %d×%d, want %d×%d", k, r, c, mz, mz)
		}
		raw := s.RawMatrix()
		for i := 0; i < mz; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+i+1]
			for j, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("q_sqrt[%d][%d][%d]: %v is not finite", k, i, j, v)
				}
			}
			if row[i] == 0 {
				return fmt.Errorf("q_sqrt[%d][%d][%d]: diagonal is 0, so S is singular", k, i, i)
			}
		}
	}
	return nil
}

// CheckFinite returns an error naming the first entry of a that is NaN or
// infinite (name[i][j]), or nil.
func CheckFinite(a *mat.Dense, name string) error { return checkFiniteRows(a, allRows, name) }

// checkFiniteRows is CheckFinite on the given rows of a (nil: all). Rows
// out of range are the caller's to report.
func checkFiniteRows(a *mat.Dense, rows []int, name string) error {
	raw := a.RawMatrix()
	n := raw.Rows
	if rows != nil {
		n = len(rows)
	}
	for k := 0; k < n; k++ {
		i := k
		if rows != nil {
			if i = rows[k]; i < 0 || i >= raw.Rows {
				continue
			}
		}
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		// v − v is 0 for finite v and NaN for NaN and ±Inf, and so is a
		// sum of them: one test per row, on four independent sums,
		// where IsNaN || IsInf per entry takes several (every
		// evaluation checks the whole model and data: 1965 × 1120 values
		// for the Frey faces).
		var s0, s1, s2, s3 float64
		j := 0
		for ; j+4 <= len(row); j += 4 {
			s0 += row[j] - row[j]
			s1 += row[j+1] - row[j+1]
			s2 += row[j+2] - row[j+2]
			s3 += row[j+3] - row[j+3]
		}
		for ; j < len(row); j++ {
			s0 += row[j] - row[j]
		}
		if s0+s1+s2+s3 == 0 {
			continue
		}
		for j, v := range row {
			if v-v != 0 {
				return fmt.Errorf("%s[%d][%d]: %v is not finite", name, i, j, v)
			}
		}
	}
	return nil
}
