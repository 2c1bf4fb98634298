package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkFreyBoundGradient is the bound and gradient of the paper's Frey
// faces autoencoder shape, N = 1965 frames, 560 → 2 → 560, an isotropic RBF
// on the pixels, at several inducing counts (15 is the Frey preset's, train.FreyInducing).
func BenchmarkFreyBoundGradient(b *testing.B) {
	for _, m := range []int{15, 30, 50} {
		rng := rand.New(rand.NewPCG(1, 1))
		model := RandomModel(rng, 1965, []int{560, 2, 560}, []string{"rbfiso", "rbf"}, m)
		b.Run(fmt.Sprintf("M=%d", m), func(b *testing.B) {
			var e Evaluator
			if _, _, err := e.Evaluate(model, Options{Gradient: true}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, _, err := e.Evaluate(model, Options{Gradient: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
