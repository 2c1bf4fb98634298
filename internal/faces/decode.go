package faces

import (
	"fmt"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
)

// Decoder maps latent points through a model's last layer (the decoder of
// an autoencoder) to images in original units.
type Decoder struct {
	post  *engine.LayerPosterior
	noise float64
	ny    dataset.Normalizer
	q, d  int
	sc    engine.FunctionScratch
}

// NewDecoder returns the decoder of m's last layer; ny undoes the output
// normalisation (len D Mean and Scale).
func NewDecoder(m *engine.Model, ny dataset.Normalizer) (*Decoder, error) {
	if m == nil || len(m.Layers) < 2 {
		return nil, fmt.Errorf("an autoencoder needs at least 2 layers")
	}
	last := m.Layers[len(m.Layers)-1]
	_, q, d := last.Dims()
	if len(ny.Mean) != d || len(ny.Scale) != d {
		return nil, fmt.Errorf("normaliser of %d columns for %d outputs", len(ny.Mean), d)
	}
	post, err := engine.NewLayerPosterior(last, m.Jitter)
	if err != nil {
		return nil, err
	}
	return &Decoder{post: post, noise: last.NoiseVariance, ny: ny, q: q, d: d}, nil
}

// Dims returns the latent dimension Q and the number of pixels D.
func (dec *Decoder) Dims() (q, d int) { return dec.q, dec.d }

// Decode writes, for the G latent points in x (G×Q, row-major), the
// decoder's predictive mean and variance in original units into mean and
// variance (G×D, row-major). The variance is the whole predictive variance:
// from q(u), the conditional variance of f given u and the noise (the
// bound's message leaves out the conditional part, which it charges as
// the compression penalty).
// A Decoder is used by one goroutine.
func (dec *Decoder) Decode(x, mean, variance []float64) error {
	g := len(x) / dec.q
	if len(x) != g*dec.q || len(mean) != g*dec.d || len(variance) != g*dec.d {
		return fmt.Errorf("Decode: %d latent values for Q = %d, %d and %d outputs for D = %d", len(x), dec.q, len(mean), len(variance), dec.d)
	}
	vc := make([]float64, g)
	dec.post.FunctionOn(x, mean, variance, vc, &dec.sc)
	for i := range g {
		for j := range dec.d {
			k := i*dec.d + j
			s := dec.ny.Scale[j]
			mean[k] = mean[k]*s + dec.ny.Mean[j]
			variance[k] = (variance[k] + vc[i] + dec.noise) * s * s
		}
	}
	return nil
}
