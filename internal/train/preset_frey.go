package train

// Frey faces preset sizes: the paper's autoencoder 560 pixels → 2 → 560,
// chosen by the held-out reconstruction of every 10th frame, fitted on the
// others for 5000 iterations (TestFreyPresetStudy, DGPVIZ_FREY_STUDY=1;
// docs/measurements.md). With an isotropic RBF on the pixels and 15
// inducing points in the encoder, a decoder of 15 reconstructs held-out
// frames to 18.70 grey levels, of 30 to 17.77, of 40 to 17.62 and of 50 to
// 17.33; with an ARD RBF on the pixels (560 lengthscales, started at the
// isotropic one) and a decoder of 30, to 17.24 — a neural autoencoder of
// the same shape, measured elsewhere, reached 17.4–18.6, median 17.9 —
// each with the latent ordered by time (the successor's median rank among
// a frame's neighbours 0.012–0.014, PCA-2's 0.034). An iteration of the
// ARD model costs about 1.5 times the isotropic one's with the same
// decoder, 1.2 times the isotropic one's with 40.
const (
	// FreyInducing is the encoder's inducing points (on the pixels).
	FreyInducing = 15
	// FreyDecoderInducing is the decoder's (on the 2-D latent).
	FreyDecoderInducing = 30
	FreyRestarts        = 2
	FreyRestartIters    = 20
)

// FreyPreset is the preset for outputs that are the inputs, named by that
// shape ("autoencoder"): the paper's Frey faces autoencoder, the 560 pixels of a frame
// → a 2-D latent → the same 560 pixels (Hensman & Lawrence 2014,
// auto-encoding deep GPs), FreyInducing inducing points in the encoder and
// FreyDecoderInducing in the decoder, an ARD RBF on the pixels whose 560
// lengthscales start at the isotropic RBF's one, the latent started at the
// leading two principal components of the frames, selected by the bound
// among FreyRestarts short restarts.
func FreyPreset(seed uint64) Preset {
	return Preset{
		Name: "outputs → 2 → outputs, an autoencoder",
		Init: InitConfig{Hidden: []int{2}, Inducing: FreyInducing, OutputInducing: FreyDecoderInducing,
			InputKernel: "rbf", InputIsoStart: true, Seed: seed, HiddenInit: "pca"},
		Restarts:     FreyRestarts,
		RestartIters: FreyRestartIters,
	}
}
