// Package latent judges and exports the latent spaces that a deep GP's
// hidden layers learn: how well a latent embedding of a trajectory reflects
// its true geometry (does the loop close where the robot returns?), and CSV
// export of latent coordinates.
package latent

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Rule says which pairs of rows the geometry score compares: pairs at
// least MinLag rows apart in time order ("far in time"), and among them the
// revisits, whose ground-truth points lie within Radius of each other.
type Rule struct {
	MinLag int
	Radius float64 // in the ground truth's units
}

// RuleFor derives the rule from a trajectory's ground truth (N × P, rows in
// time order), so that it needs no units: pairs at least a quarter of the
// rows apart, within five typical steps of each other, a typical step being
// the median distance between consecutive rows. For the robot's 215
// training scans: 54 scans (about 80 s) and 2.26 m, a corridor's width.
func RuleFor(truth mat.Matrix) Rule {
	n, _ := truth.Dims()
	steps := make([]float64, 0, max(n-1, 0))
	for i := 1; i < n; i++ {
		if d := distance(truth, i-1, i); !math.IsNaN(d) {
			steps = append(steps, d)
		}
	}
	r := Rule{MinLag: max(1, int(math.Round(float64(n)/4)))}
	if len(steps) > 0 {
		sort.Float64s(steps)
		med := steps[len(steps)/2]
		if len(steps)%2 == 0 {
			med = (steps[len(steps)/2-1] + med) / 2
		}
		r.Radius = 5 * med
	}
	return r
}

// Score is a geometry score (LoopClosure, Pairs.Score).
type Score struct {
	// Value is the mean, over revisits, of the fraction of far-in-time
	// pairs that lie farther apart in the latent space than the revisit
	// does. 1: every revisit is closer in the latent space than any other
	// far pair (the loop is closed); about 0.5: the latent ignores
	// revisits; near 0: it keeps revisits farthest apart, as a latent that
	// only encodes time does.
	Value float64
	// StdErr is Value's standard error when it was estimated from samples
	// (see Sampling), 0 when it is exact.
	StdErr float64
	// Revisits is the number of pairs far apart in time but within the
	// radius on the true path (estimated from the sampled rows when
	// RowsSampled < Rows); FarPairs the number of pairs far apart in time.
	Revisits, FarPairs int
	// Rows is the number of rows, RowsSampled how many of them the
	// revisits were found from, FarPairsSampled how many far pairs they
	// were ranked among.
	Rows, RowsSampled, FarPairsSampled int
}

// Sampled reports whether the score was estimated from samples.
func (s Score) Sampled() bool {
	return s.StdErr > 0 || s.RowsSampled < s.Rows || s.FarPairsSampled < s.FarPairs
}

// LoopClosure scores how well the latent points (N × Q) reflect the true
// positions (N × P) of a trajectory sampled in time order, on the pairs
// of NewPairs(positions, rule, DefaultSampling): exact up to its sizes,
// estimated beyond. Pairs of points at least rule.MinLag steps apart are
// "far in time"; among them the revisits are those within rule.Radius of
// each other on the true path.
func LoopClosure(latent, positions mat.Matrix, rule Rule) (Score, error) {
	n, _ := latent.Dims()
	if np, _ := positions.Dims(); n != np {
		return Score{}, fmt.Errorf("%d latent points but %d positions", n, np)
	}
	ps, err := NewPairs(positions, rule, DefaultSampling)
	if err != nil {
		return Score{}, err
	}
	return ps.Score(latent)
}

// Revisits returns every pair (i, j), i < j, of points of a trajectory at
// least rule.MinLag steps apart in time but within rule.Radius of each
// other on the true path (positions, N × P), in order: the pairs
// LoopClosure scores. It finds them with a k-d tree, in time proportional
// to N log N plus the pairs within the radius.
func Revisits(positions mat.Matrix, rule Rule) [][2]int {
	n, p := positions.Dims()
	tree := newKDTree(positions)
	c := make([]float64, p)
	var out [][2]int
	for i := range n {
		for k := range p {
			c[k] = positions.At(i, k)
		}
		base := len(out)
		tree.within(c, rule.Radius, func(j int) {
			if j-i >= rule.MinLag {
				out = append(out, [2]int{i, j})
			}
		})
		slices.SortFunc(out[base:], func(a, b [2]int) int { return a[1] - b[1] })
	}
	return out
}

func distance(a mat.Matrix, i, j int) float64 {
	_, c := a.Dims()
	var s float64
	for k := 0; k < c; k++ {
		d := a.At(i, k) - a.At(j, k)
		s += d * d
	}
	return math.Sqrt(s)
}
