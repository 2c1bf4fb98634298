package latent

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// The geometry score compares every revisit with every pair far apart in
// time: about N²/3.6 pairs, 2.8·10¹¹ at a million rows. Beyond a stated
// size it is therefore estimated from seeded random samples, and its
// standard error given beside it:
//
//   - the far pairs: Sampling.FarPairs of them drawn uniformly (with
//     replacement) stand for all in the fraction that lies farther apart
//     than a revisit;
//   - the revisits: those of Sampling.Rows rows drawn uniformly (without
//     replacement), found with a k-d tree over the ground truth, at most
//     Sampling.PerRow of each row's kept (drawn uniformly, weighted up).
//
// The score is a ratio of sums over rows; its variance is the two-stage
// sampling variance of that ratio (rows, then revisits within a row) plus
// the far pairs' share (the score is also the mean, over far pairs, of
// the weighted fraction of revisits closer than the pair). Below the
// sample sizes every part is exhaustive and the score is exact (standard
// error 0).

// Sampling says how large the geometry score's samples are, and their
// seed: the same seed draws the same rows and pairs for every latent, so
// that layers and baselines are compared on the same pairs.
type Sampling struct {
	Rows     int // rows whose revisits are found (every row when N ≤ Rows)
	FarPairs int // far pairs the revisits are ranked among (every one when there are no more)
	PerRow   int // revisits kept per sampled row (every one when it has no more); at least 2
	Seed     uint64
}

// DefaultSampling is the samples' size for the page and viz latent: exact
// up to 20,000 rows; at a million rows it compares 20,000 rows' revisits
// with 200,000 far pairs in well under a second per latent.
var DefaultSampling = Sampling{Rows: 20000, FarPairs: 200000, PerRow: 100, Seed: 1}

// Pairs are the pairs of rows the geometry score compares, drawn once per
// ground truth. Memory: 8 bytes per far pair, 4 per kept revisit, 16 per
// sampled row; while they are drawn, the k-d tree's (P+0.5)·8 bytes per
// row and, when rows are sampled, 8 per row for the draw.
type Pairs struct {
	Rule     Rule
	Sampling Sampling
	N        int // rows
	FarTotal int // pairs far apart in time
	farI     []int32
	farJ     []int32
	// rows are the sampled rows, in increasing order; row k's kept
	// revisit partners are partner[start[k]:start[k+1]], of count[k].
	rows    []int32
	start   []int32
	partner []int32
	count   []int64
}

// NewPairs draws the pairs the geometry score compares for ground truth
// truth (N × P, rows in time order) under rule.
func NewPairs(truth mat.Matrix, rule Rule, s Sampling) (*Pairs, error) {
	n, p := truth.Dims()
	if rule.MinLag < 1 || !(rule.Radius > 0) {
		return nil, fmt.Errorf("minimum lag %d and radius %v must be positive", rule.MinLag, rule.Radius)
	}
	// Two of each at least, for their variances.
	if s.Rows < 2 || s.FarPairs < 2 || s.PerRow < 2 {
		return nil, fmt.Errorf("samples of %d rows, %d far pairs and %d revisits per row: want at least 2 of each", s.Rows, s.FarPairs, s.PerRow)
	}
	ps := &Pairs{Rule: rule, Sampling: s, N: n}
	rng := rand.New(rand.NewPCG(s.Seed, 0x6765_6f6d)) // "geom"
	k := int64(max(n-rule.MinLag, 0))
	ps.FarTotal = int(k * (k + 1) / 2)
	if ps.FarTotal <= s.FarPairs {
		for i := range int(k) {
			for j := i + rule.MinLag; j < n; j++ {
				ps.farI, ps.farJ = append(ps.farI, int32(i)), append(ps.farJ, int32(j))
			}
		}
	} else {
		// Uniform over a ≤ b < k, the far pair (a, b + MinLag).
		for len(ps.farI) < s.FarPairs {
			a, b := rng.Int64N(k), rng.Int64N(k)
			if a <= b {
				ps.farI, ps.farJ = append(ps.farI, int32(a)), append(ps.farJ, int32(b)+int32(rule.MinLag))
			}
		}
	}

	if n <= s.Rows {
		ps.rows = make([]int32, n)
		for i := range ps.rows {
			ps.rows[i] = int32(i)
		}
	} else {
		perm := rng.Perm(n)[:s.Rows]
		slices.Sort(perm)
		ps.rows = make([]int32, len(perm))
		for i, r := range perm {
			ps.rows[i] = int32(r)
		}
	}
	tree := newKDTree(truth)
	c := make([]float64, p)
	ps.start = append(make([]int32, 0, len(ps.rows)+1), 0)
	ps.count = make([]int64, len(ps.rows))
	for k, r := range ps.rows {
		i := int(r)
		base := len(ps.partner)
		finite := true
		for d := range p {
			c[d] = truth.At(i, d)
			finite = finite && !math.IsNaN(c[d]) && !math.IsInf(c[d], 0)
		}
		if finite {
			var seen int64
			tree.within(c, rule.Radius, func(j int) {
				if j-i < rule.MinLag && i-j < rule.MinLag {
					return
				}
				seen++
				switch {
				case seen <= int64(s.PerRow):
					ps.partner = append(ps.partner, int32(j))
				default: // reservoir: each of the seen kept with equal chance
					if x := rng.Int64N(seen); x < int64(s.PerRow) {
						ps.partner[base+int(x)] = int32(j)
					}
				}
			})
			ps.count[k] = seen
			// Time order within a row: the same pairs however the tree
			// visits them.
			slices.Sort(ps.partner[base:])
		}
		ps.start = append(ps.start, int32(len(ps.partner)))
	}
	return ps, nil
}

// Exact reports whether the pairs are all the pairs the score's definition
// compares: no row, far pair or revisit sampled.
func (ps *Pairs) Exact() bool {
	if len(ps.rows) < ps.N || len(ps.farI) < ps.FarTotal {
		return false
	}
	for k := range ps.rows {
		if int64(ps.start[k+1]-ps.start[k]) < ps.count[k] {
			return false
		}
	}
	return true
}

// RowsSampled is the number of rows whose revisits the score uses (N when
// all).
func (ps *Pairs) RowsSampled() int { return len(ps.rows) }

// FarPairsSampled is the number of far pairs the score ranks revisits
// among (FarTotal when all).
func (ps *Pairs) FarPairsSampled() int { return len(ps.farI) }

// Revisits estimates the number of revisits (exact when every row is
// sampled): each is found from both its rows.
func (ps *Pairs) Revisits() int {
	var ends int64
	for _, c := range ps.count {
		ends += c
	}
	return int(math.Round(float64(ends) / 2 * float64(ps.N) / float64(len(ps.rows))))
}

// RevisitPairs returns up to limit of the kept revisits, each (i, j) with
// i < j once, in order: every revisit when the pairs are exact and limit
// allows.
func (ps *Pairs) RevisitPairs(limit int) [][2]int {
	var out [][2]int
	for k, r := range ps.rows {
		for _, j := range ps.partner[ps.start[k]:ps.start[k+1]] {
			i := int(r)
			if int(j) < i {
				i, j = int(j), int32(i)
			}
			out = append(out, [2]int{i, int(j)})
		}
	}
	slices.SortFunc(out, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	out = slices.Compact(out)
	if len(out) > limit {
		// Evenly through time, so that the page shows revisits along the
		// whole path.
		kept := make([][2]int, limit)
		for k := range kept {
			kept[k] = out[k*len(out)/limit]
		}
		out = kept
	}
	return out
}

// Score is the geometry score of latent points (N × Q) on these pairs.
func (ps *Pairs) Score(latent mat.Matrix) (Score, error) {
	n, q := latent.Dims()
	s := Score{FarPairs: ps.FarTotal, Rows: ps.N, RowsSampled: len(ps.rows), FarPairsSampled: len(ps.farI), Revisits: ps.Revisits()}
	if n != ps.N {
		return s, fmt.Errorf("%d latent points but %d rows of ground truth", n, ps.N)
	}
	for i := range n {
		for k := range q {
			if v := latent.At(i, k); math.IsNaN(v) || math.IsInf(v, 0) {
				return s, fmt.Errorf("row %d of the latent points is not finite", i+1)
			}
		}
	}
	if len(ps.partner) == 0 {
		if len(ps.rows) < ps.N {
			return s, fmt.Errorf("no revisits among %d sampled rows (pairs ≥ %d steps apart within %v of each other)", len(ps.rows), ps.Rule.MinLag, ps.Rule.Radius)
		}
		return s, fmt.Errorf("no revisits (pairs ≥ %d steps apart within %v of each other)", ps.Rule.MinLag, ps.Rule.Radius)
	}
	far := make([]float64, len(ps.farI))
	for k := range far {
		far[k] = distance(latent, int(ps.farI[k]), int(ps.farJ[k]))
	}
	slices.Sort(far)
	// farther is the fraction of far pairs strictly farther apart than d,
	// ties counted half.
	farther := func(d float64) float64 {
		lo := sort.SearchFloat64s(far, d)
		hi := lo + sort.Search(len(far)-lo, func(k int) bool { return far[lo+k] > d })
		return (float64(len(far)-hi) + 0.5*float64(hi-lo)) / float64(len(far))
	}

	// Per sampled row: the estimated sum a of farther over its revisits,
	// their number b, and the variance of the kept revisits' values.
	type end struct{ d, w float64 }
	ends := make([]end, 0, len(ps.partner))
	var sumA, sumB, within float64
	as := make([]float64, len(ps.rows))
	for k, r := range ps.rows {
		kept := ps.partner[ps.start[k]:ps.start[k+1]]
		b := float64(ps.count[k])
		if len(kept) == 0 {
			continue
		}
		w := b / float64(len(kept))
		var sum, sq float64
		for _, j := range kept {
			d := distance(latent, int(r), int(j))
			v := farther(d)
			sum += v
			sq += v * v
			ends = append(ends, end{d, w})
		}
		c := float64(len(kept))
		as[k] = w * sum
		sumA += as[k]
		sumB += b
		if c > 1 && c < b {
			mean := sum / c
			s2 := (sq - c*mean*mean) / (c - 1)
			within += b * b * (1 - c/b) * max(s2, 0) / c
		}
	}
	s.Value = sumA / sumB

	// The rows' share: the ratio estimator's variance, with the finite
	// population correction (none when every row is used), and the
	// revisits' within the sampled rows.
	rs, nRows := float64(len(ps.rows)), float64(ps.N)
	var variance float64
	if rs < nRows && rs > 1 {
		var e2 float64
		for k := range ps.rows {
			e := as[k] - s.Value*float64(ps.count[k])
			e2 += e * e
		}
		variance += (1 - rs/nRows) * rs * e2 / (rs - 1) / (sumB * sumB)
	}
	variance += rs / nRows * within / (sumB * sumB)

	// The far pairs' share: the spread, over the sampled far pairs, of the
	// weighted fraction of revisits closer than each.
	if len(far) < ps.FarTotal {
		slices.SortFunc(ends, func(a, b end) int {
			switch {
			case a.d < b.d:
				return -1
			case a.d > b.d:
				return 1
			}
			return 0
		})
		cum := make([]float64, len(ends)+1)
		for k, e := range ends {
			cum[k+1] = cum[k] + e.w
		}
		var mean, m2 float64
		for k, d := range far {
			lo := sort.Search(len(ends), func(x int) bool { return ends[x].d >= d })
			hi := lo + sort.Search(len(ends)-lo, func(x int) bool { return ends[lo+x].d > d })
			g := (cum[lo] + 0.5*(cum[hi]-cum[lo])) / cum[len(ends)]
			delta := g - mean
			mean += delta / float64(k+1)
			m2 += delta * (g - mean)
		}
		m := float64(len(far))
		variance += m2 / (m - 1) / m
	}
	s.StdErr = math.Sqrt(variance)
	return s, nil
}
