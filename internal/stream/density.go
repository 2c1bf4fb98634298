package stream

import (
	"slices"
	"sync/atomic"
	"time"

	"dgpviz/internal/montecarlo"
)

// The fit panel's Monte Carlo view: what the whole deep GP predicts,
// sampled through every layer (montecarlo.Predictive), beside the
// Gaussian final message. The page asks with "fit_density"; the density
// is computed off the optimizer's goroutine and sent as a binary
// "fit_density" message through a latest-wins slot. One computation per
// session runs at a time.

// Limits of the fit density.
const (
	DensityGrid           = 160 // inputs across the data's range (a sharp step spans 3 or 4)
	DensityBins           = 80
	DensityDefaultSamples = 500
	DensityMinSamples     = 100
	DensityMaxSamples     = 5000
)

// densityState is a session's fit-density output: the slot its worker
// fills and the writer drains, and whether a computation is running.
type densityState struct {
	out  *mailbox[[]byte]
	busy atomic.Bool
	seq  atomic.Uint64
}

func newDensityState() *densityState { return &densityState{out: newMailbox[[]byte]()} }

// densityCommand starts a fit density of the current model on the
// optimizer goroutine's behalf; the result follows as a binary message.
func (s *session) densityCommand(c Command) (string, error) {
	samples := DensityDefaultSamples
	if c.Samples != nil {
		samples = *c.Samples
	}
	if samples < DensityMinSamples || samples > DensityMaxSamples {
		return "", errorf("fit density: samples = %d out of range %d…%d", samples, DensityMinSamples, DensityMaxSamples)
	}
	if _, q := s.data.x.Dims(); q != 1 {
		return "", errorf("fit density: the data has %d inputs; the density is drawn for one", q)
	}
	if !s.density.busy.CompareAndSwap(false, true) {
		return "", errorf("fit density: the last one is still being computed")
	}
	model, d, iter, id := s.tr.Model().Clone(), s.data, s.tr.Iter(), c.ID
	x := d.x.RawMatrix().Data
	lo, hi := slices.Min(x), slices.Max(x)
	pad := 0.05 * max(hi-lo, 1e-9)
	xs := make([]float64, DensityGrid)
	for i := range xs {
		xs[i] = lo - pad + (hi-lo+2*pad)*float64(i)/float64(DensityGrid-1)
	}
	seq := s.density.seq.Add(1)
	go func() {
		defer s.density.busy.Store(false)
		defer s.recoverPanic("fit_density")
		t0 := time.Now()
		p, err := montecarlo.Predictive(model, xs, 0, samples, DensityBins, seq)
		h := &densityHeader{V: ProtocolVersion, Type: "fit_density", Seq: seq, Applied: id, DataID: d.id, Iter: iter, Samples: samples}
		var e encoder
		if err != nil {
			h.Error = ForPeople(err.Error())
		} else {
			h.G, h.B = len(p.X), len(p.Edges)-1
			h.X, h.Edges, h.Density = e.f32(p.X), e.f32(p.Edges), e.arr(p.Density)
			modes := make([]float64, len(p.Modes))
			for i, m := range p.Modes {
				modes[i] = float64(m)
			}
			h.Modes = e.f32(modes)
		}
		h.MS = num(float64(time.Since(t0).Microseconds()) / 1000)
		b, err := e.finish(h)
		if err != nil {
			s.log.Error("fit density", "err", err)
			return
		}
		s.density.out.put(b)
	}()
	return "fit density: sampling", nil
}

// densityHeader is the binary "fit_density" message (docs/protocol.md).
type densityHeader struct {
	V        int       `json:"v"`
	Type     string    `json:"type"`
	Seq      uint64    `json:"seq"`
	Applied  int64     `json:"applied"` // the fit_density command's id
	DataID   int       `json:"data_id"`
	Iter     int       `json:"iter"`
	Samples  int       `json:"samples"`
	Error    string    `json:"error,omitempty"`
	MS       num       `json:"ms"`
	G        int       `json:"g"`
	B        int       `json:"b"`
	X        Ref       `json:"x"`
	Edges    Ref       `json:"edges"`
	Density  Ref       `json:"density"`
	Modes    Ref       `json:"modes"`
	Sections []section `json:"sections"`
}

func (h *densityHeader) setSections(s []section) { h.Sections = s }
