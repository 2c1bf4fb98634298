package train

// Frey faces preset sizes: the paper's autoencoder 560 pixels → 2 → 560.
const (
	FreyInducing     = 15 // per layer: in 25 s it fits better than 30 (see README, Frey faces)
	FreyRestarts     = 2
	FreyRestartIters = 20
)

// FreyPreset is "Frey faces autoencoder (paper)": the 560 pixels of a frame
// → a 2-D latent → the same 560 pixels (Hensman & Lawrence 2014,
// auto-encoding deep GPs), FreyInducing inducing points per layer, an
// isotropic RBF on the pixels (one lengthscale instead of 560), the latent
// started at the leading two principal components of the frames, selected
// by the bound among FreyRestarts short restarts.
func FreyPreset(seed uint64) Preset {
	return Preset{
		Name:         "Frey faces autoencoder (paper)",
		Init:         InitConfig{Hidden: []int{2}, Inducing: FreyInducing, InputKernel: "rbfiso", Seed: seed, HiddenInit: "pca"},
		Restarts:     FreyRestarts,
		RestartIters: FreyRestartIters,
	}
}
