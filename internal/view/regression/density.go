package regression

import (
	"context"
	"fmt"
	"slices"
	"time"

	"dgpviz/internal/montecarlo"
	"dgpviz/internal/turn"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"
)

// The fit's Monte Carlo view: what the whole deep GP predicts, sampled
// through every layer (montecarlo.Predictive), beside the Gaussian final
// message, and sample paths (montecarlo.Paths). Like the paper's step
// figure it spans the data's range and as much again on either side
// (x in [−1, 2] for the step's [0, 1]), where a deep GP's extrapolation
// is bimodal and its paths switch between the modes. The page asks with "fit_density"; the density is computed in
// the background and sent as a binary "fit_density" message. One
// computation per session runs at a time.

// Limits of the fit density.
const (
	DensityGrid           = 300 // inputs across three times the data's range (a sharp step spans 2 or 3)
	DensityPaths          = 12  // sample paths drawn
	DensityPathGrid       = 150 // their inputs (a path's cost is cubic in them)
	DensityBins           = 80
	DensityDefaultSamples = 500
	DensityMinSamples     = 100
	DensityMaxSamples     = 5000
)

// densityCommand starts a fit density of the current model.
func (v *View) densityCommand(s view.Session, c wire.Command) (string, error) {
	samples := DensityDefaultSamples
	if c.Samples != nil {
		samples = *c.Samples
	}
	if samples < DensityMinSamples || samples > DensityMaxSamples {
		return "", fmt.Errorf("fit density: %d samples is out of range %d…%d", samples, DensityMinSamples, DensityMaxSamples)
	}
	d := s.Data()
	if _, q := d.X.Dims(); q != 1 {
		return "", fmt.Errorf("fit density: the data have %d inputs; the density is drawn for one", q)
	}
	model, iter, id := s.Model().Clone(), s.Iter(), c.ID
	xs := DensityInputs(d.X.RawMatrix().Data, DensityGrid)
	px := DensityInputs(d.X.RawMatrix().Data, DensityPathGrid)
	v.densitySeq++
	seq := v.densitySeq
	err := s.Go("fit_density", func(ctx context.Context, send func([]byte)) {
		// One turn of the server's cores (turn.Do); the session's end
		// while it waits drops it.
		var p *montecarlo.PredictiveDensity
		var paths [][]float64
		var err error
		var took time.Duration
		if turn.Do(ctx, func() {
			t0 := time.Now()
			p, err = montecarlo.Predictive(model, xs, 0, samples, DensityBins, seq)
			if err == nil {
				paths, err = montecarlo.Paths(model, px, 0, DensityPaths, seq)
			}
			took = time.Since(t0)
		}) != nil {
			return
		}
		h := &densityHeader{V: wire.Version, Type: "fit_density", Seq: seq, Applied: id, DataID: d.ID, Iter: iter, Samples: samples}
		var e wire.Encoder
		if err != nil {
			h.Error = err.Error()
		} else {
			h.G, h.B = len(p.X), len(p.Edges)-1
			h.X, h.Edges, h.Density = e.F32(p.X), e.F32(p.Edges), e.Arr(p.Density)
			modes := make([]float64, len(p.Modes))
			for i, m := range p.Modes {
				modes[i] = float64(m)
			}
			h.Modes = e.F32(modes)
			h.P, h.PG = len(paths), len(px)
			h.PathX = e.F32(px)
			flat := make([]float64, 0, len(paths)*len(px))
			for _, q := range paths {
				flat = append(flat, q...)
			}
			h.Paths = e.F32(flat)
		}
		h.MS = wire.Num(float64(took.Microseconds()) / 1000)
		if b, err := e.Finish(h); err == nil {
			send(b)
		}
	})
	if err != nil {
		return "", fmt.Errorf("fit density: %w", err)
	}
	return "fit density: sampling", nil
}

// densityHeader is the binary "fit_density" message (docs/protocol.md).
type densityHeader struct {
	V        int            `json:"v"`
	Type     string         `json:"type"`
	Seq      uint64         `json:"seq"`
	Applied  int64          `json:"applied"` // the fit_density command's id
	DataID   int            `json:"data_id"`
	Iter     int            `json:"iter"`
	Samples  int            `json:"samples"`
	Error    string         `json:"error,omitempty"`
	MS       wire.Num       `json:"ms"`
	G        int            `json:"g"`
	B        int            `json:"b"`
	X        wire.Ref       `json:"x"`
	Edges    wire.Ref       `json:"edges"`
	Density  wire.Ref       `json:"density"`
	Modes    wire.Ref       `json:"modes"`
	P        int            `json:"p"`      // sample paths
	PG       int            `json:"pg"`     // their inputs
	PathX    wire.Ref       `json:"path_x"` // the PG inputs (model units)
	Paths    wire.Ref       `json:"paths"`  // P×PG, row-major (model units)
	Sections []wire.Section `json:"sections"`
}

func (h *densityHeader) SetSections(s []wire.Section) { h.Sections = s }

// DensityInputs is the fit density's grid of n inputs: the data's range
// and as much again on either side, the paper's step figure's span.
func DensityInputs(x []float64, n int) []float64 {
	lo, hi := slices.Min(x), slices.Max(x)
	w := max(hi-lo, 1e-9)
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = lo - w + 3*w*float64(i)/float64(n-1)
	}
	return xs
}
