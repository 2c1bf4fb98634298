package stream

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/train"

	"gonum.org/v1/gonum/mat"
)

// The Frey faces view (issue 12). A Frey faces data set (dataset.LoadFrey:
// X = Y = the frames' 560 grey levels) gets:
//   - the preset "Frey faces autoencoder (paper)" (train.FreyPreset): 560 →
//     2 → 560 with an isotropic RBF on the pixels, the latent started from
//     principal components, selected by the bound among short restarts;
//   - a "frey" section in the setup (image shape, grey-level range, the
//     decode limits), the frames themselves as the setup's x (and y, the
//     same section);
//   - frames built by freyFrame: the first hidden layer's messages (N × 2)
//     every frame and the bound with its terms from an analysis at most
//     every robotAnalysisEvery, never the N × 560 reconstructions;
//   - the "decode" op (decode.go): faces at latent points and the
//     reconstructions of frames, on demand.

// FreyPresetName names the Frey preset in the UI and the setup.
const FreyPresetName = "Frey faces autoencoder (paper)"

// IsFrey reports whether ds is the Frey faces (an autoencoding data set of
// 28 × 20 grey-level frames): the data set "frey", or the data of a loaded
// model file with 560 inputs equal to its 560 outputs (a saved Frey
// session), which must not stream 560-column messages either.
func IsFrey(ds *dataset.Dataset) bool {
	if ds == nil || ds.X == nil || ds.Y == nil {
		return false
	}
	_, q := ds.X.Dims()
	_, d := ds.Y.Dims()
	if q != dataset.FreyPixels || d != dataset.FreyPixels {
		return false
	}
	return ds.Name == "frey" || mat.Equal(ds.X, ds.Y)
}

// FreyConfig returns c with the Frey preset's architecture: one hidden
// layer of width 2 and train.FreyInducing inducing points per layer
// (capped by limits).
func FreyConfig(c Config, l Limits) Config { return presetConfig(c, train.FreyPreset(c.Seed), l) }

// freyInfo is what a Frey data set adds to a session's data.
type freyInfo struct {
	ds *dataset.Dataset
}

func newFreyInfo(ds *dataset.Dataset) *freyInfo {
	if !IsFrey(ds) {
		return nil
	}
	return &freyInfo{ds: ds}
}

// initModel builds the session's model for the Frey faces: the preset's
// restart selection with cfg's architecture and seed.
func (f *freyInfo) initModel(ctx context.Context, x, y *mat.Dense, cfg Config, workers int) (*engine.Model, error) {
	p := train.FreyPreset(cfg.Seed)
	p.Init.Hidden, p.Init.Inducing = slices.Clone(cfg.Hidden), cfg.Inducing
	if len(cfg.Hidden) == 0 {
		p.Restarts = 1
	}
	tcfg := train.TrainerConfig{Method: train.LBFGS, Seed: cfg.Seed, Workers: max(workers, 1)}
	m, _, err := p.Start(ctx, x, y, tcfg, nil)
	return m, err
}

// freySet is the setup's "frey" section.
type freySet struct {
	Preset string `json:"preset"`
	Height int    `json:"height"` // image rows
	Width  int    `json:"width"`  // image columns; pixel k is at row k/width, column k%width
	Lo     num    `json:"lo"`     // grey level drawn black
	Hi     num    `json:"hi"`     // grey level drawn white
	// MaxPoints and MaxFrames bound one decode request.
	MaxPoints int `json:"max_points"`
	MaxFrames int `json:"max_frames"`
}

func (f *freyInfo) setup() *freySet {
	return &freySet{Preset: FreyPresetName, Height: dataset.FreyHeight, Width: dataset.FreyWidth, Lo: 0, Hi: 255,
		MaxPoints: MaxDecodePoints, MaxFrames: MaxDecodeFrames}
}

func (f *freyInfo) height() int { return dataset.FreyHeight }
func (f *freyInfo) width() int  { return dataset.FreyWidth }

// FreyLimits returns l with a per-session memory budget large enough for
// the Frey preset on ds (an estimate of about 400 MiB for the 1965 frames:
// the engine's buffers for 560-D inputs and outputs, the optimizer's
// vectors and the undo history), when the budget is set and smaller; the
// server-wide budget is left as it is. viz serve applies it when
// -session-memory is not given.
func FreyLimits(l Limits, ds *dataset.Dataset) Limits {
	if !IsFrey(ds) || l.SessionMemory <= 0 {
		return l
	}
	n, _ := ds.X.Dims()
	e := EstimateConfig(FreyConfig(DefaultConfig(), l), n, dataset.FreyPixels, dataset.FreyPixels)
	if e.Bytes > l.SessionMemory {
		l.SessionMemory = (e.Bytes + (1 << 20) - 1) >> 20 << 20
	}
	return l
}

// freyWarnings folds the per-pixel warnings of dataset.Warnings (a pixel
// that is the same in every frame is a constant input and output) into one
// line: the page shows warnings as they are, and a hundred lines about
// corner pixels would cover it.
func freyWarnings(ws []string) []string {
	var out []string
	pixels := 0
	for _, w := range ws {
		switch {
		case strings.HasPrefix(w, "output ") && strings.Contains(w, " is constant"):
			pixels++
		case strings.HasPrefix(w, "input ") && strings.Contains(w, " is constant"):
		default:
			out = append(out, w)
		}
	}
	if pixels > 0 {
		out = append(out, fmt.Sprintf("%d of the %d pixels are the same in every frame: they carry no information, and the decoder can only learn their grey level", pixels, dataset.FreyPixels))
	}
	return out
}
