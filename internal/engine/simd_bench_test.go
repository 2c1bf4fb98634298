package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkPairLoop times one datum's Ψ2 pair loop with the gradient (M=30:
// 465 pairs) for input dimensions 1, 3 and 4, in Go and in assembly
// (q ≤ 3 and q > 3 take different kernels), reported per pair.
func BenchmarkPairLoop(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const m = 30
	for _, q := range []int{1, 3, 4} {
		z := make([]float64, m*q)
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		p := NewRBF(1, ones(q)).newPsi2(z, m, nil).(*rbfPsi2)
		w := make([]float64, m*m)
		for i := range w {
			w[i] = rng.NormFloat64()
		}
		p.setWeights(w, w, w)
		acc := &psi2Acc{buf: make([]float64, p.accLen())}
		mu, s := make([]float64, q), make([]float64, q)
		for i := range s {
			mu[i], s[i] = rng.NormFloat64(), 0.1
		}
		dMu, dS := make([]float64, q), make([]float64, q)
		for _, simd := range []bool{false, true} {
			if simd && !haveSIMD {
				continue
			}
			name := map[bool]string{false: "go", true: "simd"}[simd]
			b.Run(fmt.Sprintf("q=%d/%s", q, name), func(b *testing.B) {
				old := useSIMD
				useSIMD = simd
				defer func() { useSIMD = old }()
				for range b.N {
					p.datum(acc, mu, s, nil, dMu, dS)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*p.np), "ns/pair")
			})
		}
	}
}

// BenchmarkExpAll times expAll over a pair loop's worth of exponents.
func BenchmarkExpAll(b *testing.B) {
	xs := make([]float64, 465)
	for i := range xs {
		xs[i] = -float64(i) / 100
	}
	ys := make([]float64, len(xs))
	for _, simd := range []bool{false, true} {
		if simd && !haveSIMD {
			continue
		}
		b.Run(map[bool]string{false: "go", true: "simd"}[simd], func(b *testing.B) {
			old := useSIMD
			useSIMD = simd
			defer func() { useSIMD = old }()
			for range b.N {
				copy(ys, xs)
				expAll(ys)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(xs)), "ns/exp")
		})
	}
}
