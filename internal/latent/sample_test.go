package latent

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// bruteScore is the geometry score by its definition, comparing every
// revisit with every pair far apart in time (quadratic: for tests only).
func bruteScore(latent, truth *mat.Dense, rule Rule) (value float64, revisits, farPairs int) {
	n, _ := latent.Dims()
	var far, rev []float64
	for i := range n {
		for j := i + rule.MinLag; j < n; j++ {
			d := distance(latent, i, j)
			far = append(far, d)
			if distance(truth, i, j) <= rule.Radius {
				rev = append(rev, d)
			}
		}
	}
	sort.Float64s(far)
	var total float64
	for _, d := range rev {
		lo := sort.SearchFloat64s(far, d)
		hi := sort.SearchFloat64s(far, math.Nextafter(d, math.Inf(1)))
		total += (float64(len(far)-hi) + 0.5*float64(hi-lo)) / float64(len(far))
	}
	return total / float64(len(rev)), len(rev), len(far)
}

// noisyLoop is a robot driving round a circle of radius 10 laps times in n
// steps with a little wobble, and a latent that is its path blurred by
// noise of the given size (so that the score is neither 0 nor 1).
func noisyLoop(n int, laps, noise float64, seed uint64) (truth, latent *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 7))
	truth, latent = mat.NewDense(n, 2, nil), mat.NewDense(n, 3, nil)
	for i := range n {
		a := 2 * math.Pi * laps * float64(i) / float64(n)
		x, y := 10*math.Cos(a)+0.3*rng.NormFloat64(), 10*math.Sin(a)+0.3*rng.NormFloat64()
		truth.Set(i, 0, x)
		truth.Set(i, 1, y)
		latent.Set(i, 0, x+noise*rng.NormFloat64())
		latent.Set(i, 1, y+noise*rng.NormFloat64())
		latent.Set(i, 2, float64(i)/float64(n)+noise*rng.NormFloat64())
	}
	return truth, latent
}

// TestKDTreeWithin compares the tree's neighbours with every row's
// distance, for clustered points with duplicates, in 2 and 3 dimensions.
func TestKDTreeWithin(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, p := range []int{1, 2, 3} {
		const n = 700
		a := mat.NewDense(n, p, nil)
		for i := range n {
			for k := range p {
				a.Set(i, k, math.Round(rng.NormFloat64()*4)/2) // many equal coordinates
			}
		}
		a.Set(5, 0, math.NaN()) // never a neighbour
		tree := newKDTree(a)
		for _, r := range []float64{0.1, 0.5, 1, 3} {
			for i := 0; i < n; i += 7 {
				c := a.RawRowView(i)
				var got, want []int
				tree.within(c, r, func(j int) { got = append(got, j) })
				for j := range n {
					if distance(a, i, j) <= r {
						want = append(want, j)
					}
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("p=%d, r=%v, row %d: %d neighbours, want %d", p, r, i, len(got), len(want))
				}
			}
		}
	}
}

// TestPairsExact: below the sample sizes the score is the definition's,
// to rounding, with standard error 0, however the rows lie.
func TestPairsExact(t *testing.T) {
	truth, lat := noisyLoop(400, 3, 2, 1)
	rule := RuleFor(truth)
	ps, err := NewPairs(truth, rule, DefaultSampling)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ps.Score(lat)
	if err != nil {
		t.Fatal(err)
	}
	want, revisits, far := bruteScore(lat, truth, rule)
	if !ps.Exact() || s.Sampled() || s.StdErr != 0 {
		t.Errorf("400 rows: sampled (%+v)", s)
	}
	if math.Abs(s.Value-want) > 1e-12 || s.Revisits != revisits || s.FarPairs != far {
		t.Errorf("score %.15f, %d revisits of %d far pairs; want %.15f, %d of %d", s.Value, s.Revisits, s.FarPairs, want, revisits, far)
	}
	if got := ps.RevisitPairs(math.MaxInt); !slices.Equal(got, Revisits(truth, rule)) {
		t.Errorf("the pairs' revisits (%d) differ from Revisits (%d)", len(got), len(Revisits(truth, rule)))
	}
	t.Logf("%.4f on %d revisits of %d far pairs", s.Value, s.Revisits, s.FarPairs)
}

// samplings are ways of sampling a 300-row loop, each of the first
// three leaving one part of the score's variance to dominate: the far
// pairs, the rows, the revisits within a row.
var samplings = []struct {
	name string
	s    Sampling
}{
	{"far pairs", Sampling{Rows: 1 << 30, FarPairs: 300, PerRow: 1 << 30}},
	{"rows", Sampling{Rows: 30, FarPairs: 1 << 30, PerRow: 1 << 30}},
	{"revisits per row", Sampling{Rows: 1 << 30, FarPairs: 1 << 30, PerRow: 2}},
	{"all three", Sampling{Rows: 45, FarPairs: 1000, PerRow: 4}},
}

// TestSampledScore: a sampled score lies within 3 standard errors of the
// exact one, and its standard error is the spread of the estimates over
// repeated samples (seeds), to ±30% (80 seeds: the spread's own
// relative error is about 8%).
func TestSampledScore(t *testing.T) {
	const n = 300
	truth, lat := noisyLoop(n, 4, 2, 2)
	rule := RuleFor(truth)
	exact, _, _ := bruteScore(lat, truth, rule)
	seeds, tol := 80, 0.3
	if testing.Short() {
		seeds, tol = 30, 0.45
	}
	for _, c := range samplings {
		var vals []float64
		var se2 float64
		for seed := range seeds {
			c.s.Seed = uint64(seed + 1)
			ps, err := NewPairs(truth, rule, c.s)
			if err != nil {
				t.Fatal(err)
			}
			s, err := ps.Score(lat)
			if err != nil {
				t.Fatal(err)
			}
			if !s.Sampled() || !(s.StdErr > 0) {
				t.Fatalf("%s: not sampled: %+v", c.name, s)
			}
			if seed == 0 && math.Abs(s.Value-exact) > 3*s.StdErr {
				t.Errorf("%s: %.4f ± %.4f, exact %.4f: more than 3 standard errors apart", c.name, s.Value, s.StdErr, exact)
			}
			vals = append(vals, s.Value)
			se2 += s.StdErr * s.StdErr
		}
		var mean, m2 float64
		for _, v := range vals {
			mean += v / float64(len(vals))
		}
		for _, v := range vals {
			m2 += (v - mean) * (v - mean)
		}
		spread, se := math.Sqrt(m2/float64(len(vals)-1)), math.Sqrt(se2/float64(len(vals)))
		t.Logf("%s: exact %.4f, estimates %.4f, spread %.5f, standard error %.5f", c.name, exact, mean, spread, se)
		if math.Abs(se/spread-1) > tol {
			t.Errorf("%s: standard error %.5f, spread over %d seeds %.5f", c.name, se, len(vals), spread)
		}
		if math.Abs(mean-exact) > 4*spread/math.Sqrt(float64(len(vals))) {
			t.Errorf("%s: estimates average %.5f, exact %.5f: biased", c.name, mean, exact)
		}
	}
}
