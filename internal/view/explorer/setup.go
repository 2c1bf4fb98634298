package explorer

import (
	"slices"

	"dgpviz/internal/latent"
	"dgpviz/internal/linalg"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"
)

// setupSection is the setup's "view" section: what the data carry besides
// inputs and outputs, all optional, rows aligned as training rows then
// test rows.
type setupSection struct {
	Kind   string `json:"kind"`
	Preset string `json:"preset"`
	NAll   int    `json:"n_all"`   // training + test rows
	NTrain int    `json:"n_train"` // the first n_train rows are the training set
	// XTest and YTest are the test rows (normalised like x and y).
	XTest *wire.Ref `json:"x_test,omitempty"`
	YTest *wire.Ref `json:"y_test,omitempty"`
	// Imputed (n_all × d) is 1 where an output was missing and filled in.
	Imputed *wire.Ref       `json:"imputed,omitempty"`
	Truth   *truthSection   `json:"truth,omitempty"`
	Columns []columnSection `json:"columns"`
	// Sample is present when the data have more than SampleRows rows:
	// the setup's rows (and every row array of the frames) are then a
	// stable sample of them (Sample), and everything above is of the
	// sample's rows.
	Sample *sampleSection `json:"sample,omitempty"`
}

// sampleSection names the rows of a sample: ids count from 0 within each
// split, as float32 (exact below 2²⁴ rows).
type sampleSection struct {
	NTrain int      `json:"n_train"` // training rows of the data
	NTest  int      `json:"n_test"`  // held-out rows of the data
	Train  wire.Ref `json:"train"`   // the training rows shown
	Test   wire.Ref `json:"test"`    // the held-out rows shown
}

// truthSection is the ground truth and the geometry score's rule.
type truthSection struct {
	Names  []string `json:"names"`
	Unit   string   `json:"unit,omitempty"`
	P      int      `json:"p"`      // coordinates per row
	Values wire.Ref `json:"values"` // n_all × p
	MinLag int      `json:"min_lag"`
	Radius wire.Num `json:"radius"`
	// Revisits is how many revisits the training rows have (estimated
	// from the sampled rows when Sample says so), FarPairs how many pairs
	// are far apart in time; RevisitPairs are the revisits the score uses
	// (at most MaxRevisitPairs of them, evenly through time), flattened
	// i0, j0, i1, j1, ….
	Revisits     int      `json:"revisits"`
	FarPairs     int      `json:"far_pairs"`
	RevisitPairs wire.Ref `json:"revisit_pairs"`
	// Sample, when present, says that the scores are estimates from
	// samples (latent.Sampling), each with its standard error.
	Sample *scoreSampleSection `json:"sample,omitempty"`
	// Baselines are the scores of latents that use no model.
	Baselines []baselineSection `json:"baselines"`
}

type baselineSection struct {
	Name   string    `json:"name"`
	Score  *wire.Num `json:"score"`
	StdErr *wire.Num `json:"std_err,omitempty"` // only when sampled
}

// scoreSampleSection is what the geometry scores were estimated from: the
// revisits of Rows training rows ranked among FarPairs far pairs, drawn
// at random with a fixed seed; RevisitPairs of those revisits are sent.
type scoreSampleSection struct {
	Rows         int `json:"rows"`
	FarPairs     int `json:"far_pairs"`
	RevisitPairs int `json:"revisit_pairs"`
}

// MaxRevisitPairs is the most revisits the setup sends for the page to
// draw.
const MaxRevisitPairs = 20000

// columnSection is an extra column for colouring (n_all values).
type columnSection struct {
	Name       string   `json:"name"`
	Values     wire.Ref `json:"values"`
	Categories []string `json:"categories,omitempty"`
}

func (v *View) Setup(e *wire.Encoder, d *view.Data) any {
	f := v.factsOf(d)
	ds := d.Set
	_, dy := ds.Y.Dims()
	smp := f.sample
	// rows are the rows shown, training then held-out, counted over both
	rows := slices.Clone(smp.Train)
	for _, i := range smp.Test {
		rows = append(rows, f.nTrain+i)
	}
	nTrain := len(smp.Train)
	s := &setupSection{Kind: Kind, Preset: train.RobotPreset(0).Name, NAll: len(rows), NTrain: nTrain, Columns: []columnSection{}}
	if !smp.All() {
		s.Sample = &sampleSection{NTrain: smp.NTrain, NTest: smp.NTest, Train: e.F32(intsAsFloats(smp.Train)), Test: e.F32(intsAsFloats(smp.Test))}
	}
	if h := f.heldOut; h != nil {
		xt, yt := e.Arr(view.DenseData(linalg.Rows(h.X, smp.Test))), e.Arr(view.DenseData(d.NormY.Apply(linalg.Rows(h.Y, smp.Test))))
		s.XTest, s.YTest = &xt, &yt
	}
	if ds.Imputed != nil {
		v := make([]float64, s.NAll*dy)
		for k, i := range rows {
			for j := 0; j < dy && i < len(ds.Imputed) && j < len(ds.Imputed[i]); j++ {
				if ds.Imputed[i][j] {
					v[k*dy+j] = 1
				}
			}
		}
		r := e.Arr(v)
		s.Imputed = &r
	}
	if g := f.geometry; g != nil {
		_, p := ds.Truth.Dims()
		truth, shown := ds.Truth, g.Truth
		if !smp.All() {
			truth, shown = linalg.Rows(ds.Truth, rows), linalg.Rows(g.Truth, smp.Train)
		}
		t := &truthSection{Names: ds.TruthNames, Unit: ds.TruthUnit, P: p, Values: e.Arr(view.DenseData(truth)),
			MinLag: g.Rule.MinLag, Radius: wire.Num(g.Rule.Radius), Baselines: []baselineSection{}}
		if ps := g.Pairs; ps != nil {
			t.Revisits, t.FarPairs = ps.Revisits(), ps.FarTotal
			if !ps.Exact() {
				t.Sample = &scoreSampleSection{Rows: ps.RowsSampled(), FarPairs: ps.FarPairsSampled()}
			}
		}
		// the revisits drawn: among the rows shown, at most MaxRevisitPairs
		var pairs []float64
		if smp.All() && g.Pairs != nil {
			for _, pr := range g.Pairs.RevisitPairs(MaxRevisitPairs) {
				pairs = append(pairs, float64(pr[0]), float64(pr[1]))
			}
		} else {
			for _, pr := range latent.Revisits(shown, g.Rule) {
				if len(pairs) >= 2*MaxRevisitPairs {
					break
				}
				pairs = append(pairs, float64(pr[0]), float64(pr[1]))
			}
		}
		t.RevisitPairs = e.Arr(pairs)
		if t.Sample != nil {
			t.Sample.RevisitPairs = len(pairs) / 2
		}
		for _, b := range g.Baselines {
			t.Baselines = append(t.Baselines, baselineSection{Name: b.Name, Score: optional(b.Score.Value), StdErr: stdErr(b.Score)})
		}
		s.Truth = t
	}
	for _, c := range ds.Columns {
		values := c.Values
		if !smp.All() {
			values = pick(values, 1, rows)
		}
		s.Columns = append(s.Columns, columnSection{Name: c.Name, Values: e.Arr(values), Categories: c.Categories})
	}
	return s
}

// SampledRows is the training rows the setup and the frames carry: nil
// when they carry every row (view.RowSampler).
func (v *View) SampledRows(d *view.Data) []int {
	if f := v.factsOf(d); !f.sample.All() {
		return f.sample.Train
	}
	return nil
}

func intsAsFloats(v []int) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
