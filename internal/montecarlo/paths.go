package montecarlo

import (
	"fmt"
	"math"
	"math/rand/v2"

	"dgpviz/internal/engine"
	"dgpviz/internal/linalg"
)

// Limits of Paths.
const (
	MaxPaths      = 100
	MaxPathInputs = 400
)

// Paths draws n sample functions of m's output dim along the inputs xs
// (model units; m must have a 1-D input), through every layer: for each
// path and layer, u ~ q(u) once, then f | u jointly at all of that
// layer's inputs (the conditional GP's full covariance, not one input at
// a time). The layers' noise, independent at each input, is left out, so
// that a path is the composition of the layers' functions and is
// continuous — the paper's "any sample drawn from the posterior will be a
// continuous function" — while the predictive density (Predictive)
// includes it. It returns n rows of len(xs) values; equal arguments give
// equal paths.
func Paths(m *engine.Model, xs []float64, dim, n int, seed uint64) ([][]float64, error) {
	if err := checkCurveInputs(m, xs, dim, MaxPathInputs, "sample paths need"); err != nil {
		return nil, err
	}
	if n < 1 || n > MaxPaths {
		return nil, fmt.Errorf("%d paths, want 1…%d", n, MaxPaths)
	}
	layers, err := ModelLayers(m)
	if err != nil {
		return nil, err
	}
	g := len(xs)
	ws := newPathWork(g, layers)
	out := make([][]float64, n)
	for p := range out {
		rng := rand.New(rand.NewPCG(seed, uint64(p)))
		h, hq := append([]float64(nil), xs...), 1 // the layer's inputs, g × hq
		for _, l := range layers {
			next := make([]float64, g*l.d)
			for k := 0; k < l.d; k++ {
				if err := l.pathOutput(ws, h, hq, k, rng, next, l.d); err != nil {
					return nil, err
				}
			}
			h, hq = next, l.d
		}
		out[p] = make([]float64, g)
		for i := range out[p] {
			out[p][i] = h[i*hq+dim]
		}
	}
	return out, nil
}

// pathWork holds Paths' scratch, sized once for the largest layer.
type pathWork struct {
	kxu, v, c, lc, u, eps []float64
}

func newPathWork(g int, layers []*Layer) *pathWork {
	mMax := 0
	for _, l := range layers {
		mMax = max(mMax, l.m)
	}
	return &pathWork{
		kxu: make([]float64, g*mMax), v: make([]float64, mMax*g),
		c: make([]float64, g*g), lc: make([]float64, g*g),
		u: make([]float64, mMax), eps: make([]float64, g),
	}
}

// pathOutput draws output k of the layer jointly at the g inputs h
// (g × hq) and writes it to column k of out (g × stride): u = m_k + L_k ε,
// f = K_xu Kuu⁻¹ u + chol(K_xx − K_xu Kuu⁻¹ K_ux) ε'.
func (l *Layer) pathOutput(ws *pathWork, h []float64, hq, k int, rng *rand.Rand, out []float64, stride int) error {
	g, m := len(h)/hq, l.m
	// u ~ q(u_k): m_k + L_k ε, with L_k = Lk P_k (P_k = Lk⁻¹ L_k, stored
	// transposed in pt).
	u := ws.u[:m]
	for i := range u {
		u[i] = rng.NormFloat64()
	}
	pu := make([]float64, m) // P_k ε
	for i := 0; i < m; i++ {
		var s float64
		for j := 0; j <= i; j++ {
			s += l.pt[k][j*m+i] * u[j]
		}
		pu[i] = s
	}
	for i := 0; i < m; i++ {
		var s float64
		for j := 0; j <= i; j++ {
			s += l.lk[i*m+j] * pu[j]
		}
		u[i] = l.qmu[k][i] + s
	}
	linalg.CholSolve(l.lk, m, u) // Kuu⁻¹ u
	// V = Lk⁻¹ K_ux (m × g), column by column, and the conditional mean.
	kxu, v := ws.kxu[:g*m], ws.v[:m*g]
	col := make([]float64, m)
	mean := make([]float64, g)
	for i := 0; i < g; i++ {
		xi := h[i*hq : (i+1)*hq]
		for j := 0; j < m; j++ {
			kxu[i*m+j] = l.kernel.Eval(xi, l.z[j*l.q:(j+1)*l.q])
			col[j] = kxu[i*m+j]
		}
		mean[i] = linalg.Dot(col, u)
		linalg.ForwardSolve(l.lk, m, col)
		for j := 0; j < m; j++ {
			v[j*g+i] = col[j]
		}
	}
	// C = K_xx − VᵀV, factorised with the least jitter that succeeds,
	// from 10⁻⁶ of its largest variance (a path's error of a thousandth of
	// its spread, never seen): the conditional covariance of a smooth kernel
	// at close inputs is nearly singular, and each smaller jitter that fails
	// costs a factorisation (12 paths of 3 layers at 150 inputs: 221 ms
	// from 10⁻⁸, 50 ms from 10⁻⁶, BenchmarkPaths).
	c, lc := ws.c[:g*g], ws.lc[:g*g]
	top := 0.0
	for i := 0; i < g; i++ {
		for j := 0; j <= i; j++ {
			s := l.kernel.Eval(h[i*hq:(i+1)*hq], h[j*hq:(j+1)*hq])
			for r := 0; r < m; r++ {
				s -= v[r*g+i] * v[r*g+j]
			}
			c[i*g+j], c[j*g+i] = s, s
		}
		top = math.Max(top, c[i*g+i])
	}
	ok := false
	for jit := 1e-6 * max(top, 1e-12); jit <= 1e-2*max(top, 1e-12) && !ok; jit *= 10 {
		for i := 0; i < g; i++ {
			c[i*g+i] += jit
		}
		ok = linalg.Cholesky(lc, c, g)
		for i := 0; i < g; i++ {
			c[i*g+i] -= jit
		}
	}
	if !ok {
		return fmt.Errorf("the conditional covariance of a layer along the path is not positive definite")
	}
	eps := ws.eps[:g]
	for i := range eps {
		eps[i] = rng.NormFloat64()
	}
	for i := 0; i < g; i++ {
		s := mean[i]
		for j := 0; j <= i; j++ {
			s += lc[i*g+j] * eps[j]
		}
		out[i*stride+k] = s
	}
	return nil
}
