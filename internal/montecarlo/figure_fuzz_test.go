package montecarlo

import (
	"math"
	"testing"

	"dgpviz/internal/engine"
)

// FuzzInputSets runs the teaching presets on fuzzed one-layer models
// (lengthscale, variance, noise, an inducing input moved far away, the
// q(u) mean's scale): they must never panic, and what they return must be
// finite inputs with positive variance. The seeds include the models that
// panicked (issue #16: lengthscales of 1e16 and 1e300, inducing points far
// from the data).
func FuzzInputSets(f *testing.F) {
	f.Add(0.3, 1.0, 0.01, 0.0, 1.0)
	f.Add(1e16, 1.0, 0.01, 0.0, 1.0)
	f.Add(1e300, 1.0, 0.01, 0.0, 1.0)
	f.Add(0.3, 1.0, 0.01, 1e6, 1.0)
	f.Add(1e-300, 1e-300, 1e-300, -1e3, 1e3)
	f.Fuzz(func(t *testing.T, ell, variance, noise, far, scale float64) {
		m := engine.StepModel(8)
		l := m.Layers[0]
		for _, v := range []float64{ell, variance, noise, far, scale} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return
			}
		}
		if !(ell > 0) || !(variance > 0) || !(noise > 0) {
			return
		}
		l.Kernel = engine.NewRBF(variance, []float64{ell})
		l.NoiseVariance = noise
		l.InducingInputs.Set(7, 0, l.InducingInputs.At(7, 0)+far)
		for i := 0; i < 8; i++ {
			l.QMu.Set(i, 0, l.QMu.At(i, 0)*scale)
		}
		if m.Validate() != nil {
			return
		}
		ps, err := InputSets(m, 0)
		if err != nil {
			return // a clear error is an answer
		}
		for _, name := range InputSetNames() {
			if len(ps[name]) != 4 {
				t.Fatalf("preset %q has %d inputs", name, len(ps[name]))
			}
			for _, in := range ps[name] {
				if math.IsNaN(in.Mean) || math.IsInf(in.Mean, 0) || !(in.Var > 0) || math.IsInf(in.Var, 0) {
					t.Fatalf("ℓ=%g σ²=%g far=%g: preset %q input %+v", ell, variance, far, name, in)
				}
			}
		}
	})
}

// FuzzParseGaussianInputs: any text gives finite inputs with positive
// variances, or an error; never a panic.
func FuzzParseGaussianInputs(f *testing.F) {
	for _, s := range []string{"0.5:0.01", "0:1,1:2", "1", ":", "NaN:1", "0:-1", "0:Inf", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ins, err := ParseGaussianInputs(s)
		if err != nil {
			return
		}
		for _, in := range ins {
			if math.IsNaN(in.Mean) || math.IsInf(in.Mean, 0) || !(in.Var > 0) || math.IsInf(in.Var, 0) {
				t.Fatalf("%q: input %+v", s, in)
			}
		}
	})
}
