package dataset

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Normalizer standardises the columns of a matrix to mean 0 and standard
// deviation 1, and maps results back to original units.
//
// Column j is transformed as (a - Mean[j]) / Scale[j]. Scale[j] is the
// population standard deviation (divisor N) of column j, or 1 when the
// column is constant, so constant columns are only centred. The zero
// Normalizer is the identity (a copy).
type Normalizer struct {
	Mean, Scale []float64
}

// FitNormalizer returns the Normalizer that standardises the columns of a.
// A nil or empty a gives the zero Normalizer.
func FitNormalizer(a *mat.Dense) Normalizer {
	if a == nil || a.IsEmpty() {
		return Normalizer{}
	}
	r, c := a.Dims()
	n := Normalizer{Mean: make([]float64, c), Scale: make([]float64, c)}
	col := make([]float64, r)
	for j := range c {
		mat.Col(col, j, a)
		n.Mean[j], n.Scale[j] = meanScale(col)
	}
	return n
}

// meanScale returns the mean and the population standard deviation of x,
// with a scale of 1 in place of a zero or non-finite standard deviation.
func meanScale(x []float64) (mean, scale float64) {
	lo, hi := x[0], x[0]
	var sum float64
	for _, v := range x {
		sum += v
		lo = math.Min(lo, v)
		hi = math.Max(hi, v)
	}
	mean = sum / float64(len(x))
	if lo == hi {
		// Exactly constant: rounding in the mean must not produce a
		// tiny, spurious standard deviation.
		return lo, 1
	}
	// Scale the deviations by the largest one so that squaring cannot
	// overflow, then add a compensation term for the error in the mean.
	big := math.Max(math.Abs(hi-mean), math.Abs(lo-mean))
	var ss, comp float64
	for _, v := range x {
		d := (v - mean) / big
		ss += d * d
		comp += d
	}
	nf := float64(len(x))
	sd := big * math.Sqrt((ss-comp*comp/nf)/nf)
	if sd == 0 || math.IsNaN(sd) || math.IsInf(sd, 0) {
		return mean, 1
	}
	return mean, sd
}

// Apply returns a new matrix holding the standardised columns of a:
// (a[i][j] - Mean[j]) / Scale[j]. It returns nil if a is nil, and panics if
// the number of columns of a differs from len(n.Mean).
func (n Normalizer) Apply(a *mat.Dense) *mat.Dense {
	return n.each(a, func(v float64, j int) float64 { return (v - n.Mean[j]) / n.Scale[j] })
}

// ApplyInPlace standardises the columns of a in place, with Apply's
// arithmetic: for data whose original units are kept nowhere else needed
// (a million rows are hundreds of megabytes a copy).
func (n Normalizer) ApplyInPlace(a *mat.Dense) {
	if a == nil || a.IsEmpty() || (n.Mean == nil && n.Scale == nil) {
		return
	}
	if _, c := a.Dims(); c != len(n.Mean) || c != len(n.Scale) {
		panic(mat.ErrShape)
	}
	a.Apply(func(_, j int, v float64) float64 { return (v - n.Mean[j]) / n.Scale[j] }, a)
}

// UndoMean returns a new matrix holding standardised values, such as
// predictive means, in original units: a[i][j]*Scale[j] + Mean[j].
// It returns nil if a is nil, and panics if the number of columns of a
// differs from len(n.Mean).
func (n Normalizer) UndoMean(a *mat.Dense) *mat.Dense {
	return n.each(a, func(v float64, j int) float64 { return v*n.Scale[j] + n.Mean[j] })
}

// UndoVar returns a new matrix holding standardised variances in original
// units: v[i][j]*Scale[j]². It returns nil if v is nil, and panics if the
// number of columns of v differs from len(n.Scale).
func (n Normalizer) UndoVar(v *mat.Dense) *mat.Dense {
	return n.each(v, func(x float64, j int) float64 { return x * n.Scale[j] * n.Scale[j] })
}

// each returns f applied to every element of a, with the column index.
func (n Normalizer) each(a *mat.Dense, f func(v float64, j int) float64) *mat.Dense {
	if a == nil {
		return nil
	}
	if a.IsEmpty() {
		return &mat.Dense{}
	}
	if n.Mean == nil && n.Scale == nil {
		return mat.DenseCopyOf(a) // the zero Normalizer: the identity
	}
	r, c := a.Dims()
	if c != len(n.Mean) || c != len(n.Scale) {
		panic(mat.ErrShape)
	}
	out := mat.NewDense(r, c, nil)
	out.Apply(func(_, j int, v float64) float64 { return f(v, j) }, a)
	return out
}
