package explorer

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// DensityGrid is the side of every density's grid: 128 × 128 cells are
// finer than a panel's points at 3 px, and 64 KB of float32 per pair.
const DensityGrid = 128

// Density counts the rows whose means fall in each cell of a grid over
// one pair of a hidden layer's dimensions, A against B (counted from 0).
// The grid spans the rows' means, lo to hi in each dimension; a mean on
// the upper edge counts in the last cell.
type Density struct {
	A, B   int
	Lo, Hi [2]float64 // the grid's range in dimension A, then B
	// Counts are G × G, row by row from B's low end: Counts[iy·G + ix].
	Counts []float64
	Rows   int // rows counted (those with finite means)
}

// Pairs are the pairs of dimensions of a D-dimensional layer that the
// page draws (1–2, 1–3, 2–3; one for 2-D; none for 1-D), counted from 0.
func Pairs(d int) [][2]int {
	switch {
	case d >= 3:
		return [][2]int{{0, 1}, {0, 2}, {1, 2}}
	case d == 2:
		return [][2]int{{0, 1}}
	}
	return nil
}

// Densities returns the densities of every pair (Pairs) of the rows of
// the means in parts (each rows × D; together every row of the data),
// on a grid of g × g cells. It costs one pass over the rows for the
// range and one per pair, and g² values per pair: nothing per row.
func Densities(parts []*mat.Dense, g int) []Density {
	d := 0
	for _, p := range parts {
		if p != nil {
			_, d = p.Dims()
		}
	}
	var out []Density
	for _, pr := range Pairs(d) {
		out = append(out, density(parts, pr[0], pr[1], g))
	}
	return out
}

func density(parts []*mat.Dense, a, b, g int) Density {
	lo := [2]float64{math.Inf(1), math.Inf(1)}
	hi := [2]float64{math.Inf(-1), math.Inf(-1)}
	each(parts, a, b, func(x, y float64) {
		lo[0], hi[0] = math.Min(lo[0], x), math.Max(hi[0], x)
		lo[1], hi[1] = math.Min(lo[1], y), math.Max(hi[1], y)
	})
	for k := range lo {
		if lo[k] > hi[k] { // no finite means
			lo[k], hi[k] = 0, 1
		}
		if hi[k]-lo[k] < 1e-12 {
			lo[k], hi[k] = lo[k]-0.5, hi[k]+0.5
		}
	}
	out := Density{A: a, B: b, Lo: lo, Hi: hi, Counts: make([]float64, g*g)}
	cell := func(v float64, k int) int {
		return min(int(float64(g)*(v-lo[k])/(hi[k]-lo[k])), g-1)
	}
	each(parts, a, b, func(x, y float64) {
		out.Counts[cell(y, 1)*g+cell(x, 0)]++
		out.Rows++
	})
	return out
}

// each calls f with the means in dimensions a and b of every row whose
// two means are finite.
func each(parts []*mat.Dense, a, b int, f func(x, y float64)) {
	for _, p := range parts {
		if p == nil {
			continue
		}
		r, _ := p.Dims()
		for i := range r {
			x, y := p.At(i, a), p.At(i, b)
			if finite(x) && finite(y) {
				f(x, y)
			}
		}
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
