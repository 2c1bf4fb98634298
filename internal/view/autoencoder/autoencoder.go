// Package autoencoder is the view of data whose outputs are its inputs: an
// autoencoding deep GP maps each row through a narrow hidden layer and
// back. It shows the latent map (every row's message through the first
// hidden layer), and decodes outputs on demand (the "decode" op): at
// latent points, the decoder's predictive mean and variance; for rows, the
// row beside the model's reconstruction. Frames never carry the N × D
// reconstructions. The page draws decoded outputs as images when the data
// have an image shape (dataset.Dataset.Shape: the Frey faces' 28 × 20),
// and as line plots otherwise.
package autoencoder

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/faces"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"

	"gonum.org/v1/gonum/mat"
)

// Kind names the view.
const Kind = "autoencoder"

// Limits of one decode request.
const (
	MaxDecodePoints = 144 // latent points (a 12 × 12 grid of tiles)
	MaxDecodeRows   = 16  // rows to reconstruct
)

// maxFrameArray is the largest inducing array (m·q values for Z, m·d for
// q(u)) a frame carries: the decoder's inducing inputs (15 × 2) are drawn
// and dragged, the encoder's (15 × 560) and the decoder's inducing
// outputs (15 × 560) are not, and are left out.
const maxFrameArray = 8 * 64

// Applies reports whether ds is shown as an autoencoder: its outputs are
// its inputs.
func Applies(ds *dataset.Dataset) bool { return ds.IsAutoencoder() }

// View is the autoencoder view of one session.
type View struct{}

// New returns an autoencoder view.
func New() *View { return &View{} }

func (*View) Kind() string { return Kind }

// Preset is the paper's autoencoder: one 2-D hidden layer, started from the
// rows' two leading principal components, with an isotropic RBF kernel on
// the inputs (train.FreyPreset).
func (*View) Preset(*view.Data) (view.Arch, bool) {
	p := train.FreyPreset(0)
	return view.Arch{Hidden: p.Init.Hidden, Inducing: p.Init.Inducing, Restarts: p.Restarts}, true
}

// Optimizer returns c with the preset's optimizer settings.
func (*View) Optimizer(c train.TrainerConfig) train.TrainerConfig {
	return train.FreyPreset(0).Trainer(c)
}

func (*View) Init(ctx context.Context, d *view.Data, a view.Arch, workers int) (*engine.Model, *view.Restarts, error) {
	m, reps, err := view.StartPreset(ctx, train.FreyPreset(a.Seed), d, a, workers)
	if err != nil {
		return m, nil, err
	}
	_, q := d.X.Dims()
	return m, view.NewRestarts(reps, q, "", nil), nil
}

// setupSection is the setup's "view" section.
type setupSection struct {
	Kind   string `json:"kind"`
	Preset string `json:"preset"`
	// Height and Width are the image shape of a row (pixel k at row
	// k / width, column k % width); 0 when the data are not images.
	Height int `json:"height"`
	Width  int `json:"width"`
	// Lo and Hi are the outputs' range, drawn black to white: the data's
	// nominal range when they have one (0–255 grey levels), else the
	// range of the values.
	Lo wire.Num `json:"lo"`
	Hi wire.Num `json:"hi"`
	// MaxPoints and MaxRows bound one decode request.
	MaxPoints int `json:"max_points"`
	MaxRows   int `json:"max_rows"`
}

func (*View) Setup(e *wire.Encoder, d *view.Data) any {
	ds := d.Set
	s := &setupSection{Kind: Kind, Preset: train.FreyPreset(0).Name, Height: ds.Shape[0], Width: ds.Shape[1],
		Lo: wire.Num(ds.Range[0]), Hi: wire.Num(ds.Range[1]), MaxPoints: MaxDecodePoints, MaxRows: MaxDecodeRows}
	if !(ds.Range[1] > ds.Range[0]) {
		v := view.DenseData(ds.Y)
		s.Lo, s.Hi = wire.Num(slices.Min(v)), wire.Num(slices.Max(v))
	}
	return s
}

func (v *View) Ops() []view.Op {
	return []view.Op{{Name: "decode", Answer: decode}}
}

// frameSection is the frame's "view" section.
type frameSection struct {
	Kind string `json:"kind"`
	// Omitted lists the layer arrays left out because of their size, as
	// "layer.field" (e.g. "0.z", "1.u_mean"; layers from 0 as in the
	// frame's layers): sent as empty arrays.
	Omitted []string `json:"omitted"`
}

func (*View) NewFramer() view.Framer { return framer{} }

// framer builds frames from the optimizer's evaluation alone: the bound,
// the terms and the hidden layers' messages (N × 2), each layer's
// parameters but the arrays of D columns; not the penalties of every row,
// which the view does not draw.
type framer struct{}

func (framer) Frame(e *wire.Encoder, s *view.Snapshot) ([]view.LayerFrame, any) {
	layers, omitted := view.BaseLayers(e, s, view.LayerOptions{MaxArray: maxFrameArray, NoPerDatum: true})
	if omitted == nil {
		omitted = []string{}
	}
	return layers, &frameSection{Kind: Kind, Omitted: omitted}
}

// decodeHeader is the binary "decoded" message.
type decodeHeader struct {
	V      int      `json:"v"`
	Type   string   `json:"type"`
	ID     int64    `json:"id"`
	DataID int      `json:"data_id"`
	Iter   int      `json:"iter"`
	Q      int      `json:"q"`      // latent dimension
	D      int      `json:"d"`      // outputs per row
	Height int      `json:"height"` // image rows (0: not images)
	Width  int      `json:"width"`  // image columns
	G      int      `json:"g"`      // latent points
	Points wire.Ref `json:"points"` // g × q, as requested
	Mean   wire.Ref `json:"mean"`   // g × d, original units: the decoder's predictive mean
	Var    wire.Ref `json:"var"`    // g × d, original units²: its predictive variance (q(u), conditional, noise)
	Frames []int    `json:"frames"` // the rows reconstructed, 0-based
	// Original (f × d) are the rows; ReconMean and ReconVar (f × d) the
	// last layer's message for each row (the model's reconstruction).
	Original  wire.Ref       `json:"original"`
	ReconMean wire.Ref       `json:"recon_mean"`
	ReconVar  wire.Ref       `json:"recon_var"`
	MS        wire.Num       `json:"ms"` // time to decode, milliseconds
	Sections  []wire.Section `json:"sections"`
}

func (h *decodeHeader) SetSections(s []wire.Section) { h.Sections = s }

// CheckDecode checks a decode command against a model with latent
// dimension q and n rows: points a whole number of q-vectors, at most
// MaxDecodePoints of them, rows in range, at most MaxDecodeRows, and
// something to decode. Its errors count points and rows from 1.
func CheckDecode(c wire.Command, q, n int) error {
	if q < 1 {
		return errors.New("decode: the model has no latent layer")
	}
	if len(c.Points)%q != 0 {
		return fmt.Errorf("decode: \"points\" has %d coordinates, want a multiple of the latent dimension %d (x₁, y₁, x₂, y₂, …)", len(c.Points), q)
	}
	if g := len(c.Points) / q; g > MaxDecodePoints {
		return fmt.Errorf("decode: %d points, at most %d", g, MaxDecodePoints)
	}
	for k, v := range c.Points {
		if math.IsNaN(v) || math.Abs(v) > wire.MaxCoordinate {
			return fmt.Errorf("decode: point coordinate %d is %v, out of range [-%d, %d]", k+1, v, wire.MaxCoordinate, wire.MaxCoordinate)
		}
	}
	if len(c.Frames) > MaxDecodeRows {
		return fmt.Errorf("decode: %d rows, at most %d", len(c.Frames), MaxDecodeRows)
	}
	for _, i := range c.Frames {
		if i < 0 || i >= n {
			return fmt.Errorf("decode: there is no row %d (the data have rows 1…%d)", i+1, n)
		}
	}
	if len(c.Points) == 0 && len(c.Frames) == 0 {
		return errors.New("decode: give \"points\" (latent coordinates) and/or \"frames\" (rows to reconstruct)")
	}
	return nil
}

// decode answers a decode command from snapshot s (published, immutable).
func decode(_ context.Context, s *view.Snapshot, c wire.Command) ([]byte, error) {
	t0 := time.Now()
	if s == nil || s.Model == nil || s.Data == nil {
		return nil, errors.New("decode: the session has no model yet")
	}
	m, d := s.Model, s.Data
	if len(m.Layers) < 2 {
		return nil, errors.New("decode: the model has no hidden layer to decode from")
	}
	_, q, dd := m.Layers[len(m.Layers)-1].Dims()
	n, _ := d.X.Dims()
	if err := CheckDecode(c, q, n); err != nil {
		return nil, err
	}
	g := len(c.Points) / q
	mean, vr := make([]float64, g*dd), make([]float64, g*dd)
	if g > 0 {
		dec, err := faces.NewDecoder(m, d.NormY)
		if err != nil {
			return nil, fmt.Errorf("decode: %w", err)
		}
		if err := dec.Decode(c.Points, mean, vr); err != nil {
			return nil, fmt.Errorf("decode: %w", err)
		}
	}
	fr := len(c.Frames)
	orig, rm, rv := make([]float64, 0, fr*dd), make([]float64, 0, fr*dd), make([]float64, 0, fr*dd)
	if fr > 0 {
		_, px := d.X.Dims()
		xs := mat.NewDense(fr, px, nil)
		for r, i := range c.Frames {
			xs.SetRow(r, d.X.RawRowView(i))
		}
		ev := engine.Evaluator{Workers: 1}
		msgs, err := ev.Predict(m, xs)
		if err != nil {
			return nil, fmt.Errorf("decode: reconstructing rows: %w", err)
		}
		out := msgs[len(msgs)-1]
		for r, i := range c.Frames {
			for j := range dd {
				sc, mu := d.NormY.Scale[j], d.NormY.Mean[j]
				orig = append(orig, d.Y.At(i, j)*sc+mu)
				rm = append(rm, out.Mean.At(r, j)*sc+mu)
				rv = append(rv, out.Var.At(r, j)*sc*sc)
			}
		}
	}
	h := &decodeHeader{V: wire.Version, Type: "decoded", ID: c.ID, DataID: d.ID, Iter: s.Iter, Q: q, D: dd,
		Height: d.Set.Shape[0], Width: d.Set.Shape[1], G: g, Frames: c.Frames}
	if h.Frames == nil {
		h.Frames = []int{}
	}
	var e wire.Encoder
	h.Points, h.Mean, h.Var = e.Arr(c.Points), e.Arr(mean), e.Arr(vr)
	h.Original, h.ReconMean, h.ReconVar = e.Arr(orig), e.Arr(rm), e.Arr(rv)
	h.MS = wire.Num(float64(time.Since(t0).Microseconds()) / 1000)
	return e.Finish(h)
}
