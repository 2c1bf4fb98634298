// Package latent judges and exports the latent spaces that a deep GP's
// hidden layers learn: how well a latent embedding of a trajectory reflects
// its true geometry (does the loop close where the robot returns?), and CSV
// export of latent coordinates.
package latent

import (
	"fmt"
	"math"
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

// Score is the result of LoopClosure.
type Score struct {
	// Value is the mean, over revisits, of the fraction of far-in-time
	// pairs that lie farther apart in the latent space than the revisit
	// does. 1: every revisit is closer in the latent space than any other
	// far pair (the loop is closed); about 0.5: the latent ignores
	// revisits; near 0: it keeps revisits farthest apart, as a latent that
	// only encodes time does.
	Value float64
	// Revisits is the number of pairs far apart in time but within the
	// radius on the true path; FarPairs the number of pairs far apart in
	// time.
	Revisits, FarPairs int
}

// LoopClosure scores how well the latent points (N × Q) reflect the true
// positions (N × P) of a trajectory sampled in time order. Pairs of points at
// least minLag steps apart are "far in time"; among them the revisits are
// those within radius of each other on the true path.
func LoopClosure(latent, positions mat.Matrix, rule Rule) (Score, error) {
	minLag, radius := rule.MinLag, rule.Radius
	n, _ := latent.Dims()
	np, _ := positions.Dims()
	if n != np {
		return Score{}, fmt.Errorf("%d latent points but %d positions", n, np)
	}
	if minLag < 1 || !(radius > 0) {
		return Score{}, fmt.Errorf("minLag %d and radius %v must be positive", minLag, radius)
	}
	var far []float64
	for i := 0; i < n; i++ {
		for j := i + minLag; j < n; j++ {
			dl := distance(latent, i, j)
			if math.IsNaN(dl) {
				return Score{}, fmt.Errorf("row %d or %d is not finite", i+1, j+1)
			}
			far = append(far, dl)
		}
	}
	var revisit []float64
	for _, p := range Revisits(positions, rule) {
		revisit = append(revisit, distance(latent, p[0], p[1]))
	}
	if len(revisit) == 0 {
		return Score{FarPairs: len(far)}, fmt.Errorf("no revisits (pairs ≥ %d steps apart within %v of each other)", minLag, radius)
	}
	sort.Float64s(far)
	var total float64
	for _, d := range revisit {
		// Fraction of far pairs strictly farther apart, ties counted half.
		lo := sort.SearchFloat64s(far, d)
		hi := sort.Search(len(far), func(k int) bool { return far[k] > d })
		total += (float64(len(far)-hi) + 0.5*float64(hi-lo)) / float64(len(far))
	}
	return Score{Value: total / float64(len(revisit)), Revisits: len(revisit), FarPairs: len(far)}, nil
}

// Revisits returns the pairs (i, j), i < j, of points of a trajectory at
// least rule.MinLag steps apart in time but within rule.Radius of each
// other on the true path (positions, N × P): the pairs LoopClosure scores.
func Revisits(positions mat.Matrix, rule Rule) [][2]int {
	n, _ := positions.Dims()
	minLag, radius := rule.MinLag, rule.Radius
	var out [][2]int
	for i := 0; i < n; i++ {
		for j := i + minLag; j < n; j++ {
			if distance(positions, i, j) <= radius {
				out = append(out, [2]int{i, j})
			}
		}
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
