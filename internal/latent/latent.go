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

// Defaults for LoopClosure on the robot WiFi data: scans are about 1.5 s
// apart, so 50 scans is over a minute — long enough that a revisit cannot be
// explained by the robot standing still — and 2 m is about a corridor's
// width.
const (
	DefaultMinLag = 50
	DefaultRadius = 2.0
)

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
func LoopClosure(latent, positions mat.Matrix, minLag int, radius float64) (Score, error) {
	n, _ := latent.Dims()
	np, _ := positions.Dims()
	if n != np {
		return Score{}, fmt.Errorf("latent: %d latent points but %d positions", n, np)
	}
	if minLag < 1 || !(radius > 0) {
		return Score{}, fmt.Errorf("latent: minLag %d and radius %v must be positive", minLag, radius)
	}
	var far []float64
	for i := 0; i < n; i++ {
		for j := i + minLag; j < n; j++ {
			dl := distance(latent, i, j)
			if math.IsNaN(dl) {
				return Score{}, fmt.Errorf("latent: point %d or %d is not finite", i, j)
			}
			far = append(far, dl)
		}
	}
	var revisit []float64
	for _, p := range Revisits(positions, minLag, radius) {
		revisit = append(revisit, distance(latent, p[0], p[1]))
	}
	if len(revisit) == 0 {
		return Score{FarPairs: len(far)}, fmt.Errorf("latent: no revisits (pairs ≥ %d steps apart within %v of each other)", minLag, radius)
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
// least minLag steps apart in time but within radius of each other on the
// true path (positions, N × P): the pairs LoopClosure scores.
func Revisits(positions mat.Matrix, minLag int, radius float64) [][2]int {
	n, _ := positions.Dims()
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

// TimeFeatures returns the baseline latent that encodes time only: the
// standardised polynomial features t, t², …, t^degree of t = 0…n−1.
func TimeFeatures(n, degree int) *mat.Dense {
	out := mat.NewDense(n, degree, nil)
	for k := 0; k < degree; k++ {
		var mean, sq float64
		for i := 0; i < n; i++ {
			v := math.Pow(float64(i)/float64(max(n-1, 1)), float64(k+1))
			out.Set(i, k, v)
			mean += v
		}
		mean /= float64(n)
		for i := 0; i < n; i++ {
			d := out.At(i, k) - mean
			sq += d * d
		}
		sd := math.Sqrt(sq / float64(n))
		if sd == 0 {
			sd = 1
		}
		for i := 0; i < n; i++ {
			out.Set(i, k, (out.At(i, k)-mean)/sd)
		}
	}
	return out
}
