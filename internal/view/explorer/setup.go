package explorer

import (
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
	Sample *sampleSection `json:"sample,omitempty"`
	// Baselines are the scores of latents that use no model.
	Baselines []baselineSection `json:"baselines"`
}

type baselineSection struct {
	Name   string    `json:"name"`
	Score  *wire.Num `json:"score"`
	StdErr *wire.Num `json:"std_err,omitempty"` // only when sampled
}

// sampleSection is what the geometry scores were estimated from: the
// revisits of Rows training rows ranked among FarPairs far pairs, drawn
// at random with a fixed seed; RevisitPairs of those revisits are sent.
type sampleSection struct {
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
	_, nTest := ds.Rows()
	_, dy := ds.Y.Dims()
	s := &setupSection{Kind: Kind, Preset: train.RobotPreset(0).Name, NAll: f.nTrain + nTest, NTrain: f.nTrain, Columns: []columnSection{}}
	if h := f.heldOut; h != nil {
		xt, yt := e.Arr(view.DenseData(h.X)), e.Arr(view.DenseData(d.NormY.Apply(h.Y)))
		s.XTest, s.YTest = &xt, &yt
	}
	if ds.Imputed != nil {
		v := make([]float64, s.NAll*dy)
		for i := 0; i < s.NAll && i < len(ds.Imputed); i++ {
			for j := 0; j < dy && j < len(ds.Imputed[i]); j++ {
				if ds.Imputed[i][j] {
					v[i*dy+j] = 1
				}
			}
		}
		r := e.Arr(v)
		s.Imputed = &r
	}
	if g := f.geometry; g != nil {
		_, p := ds.Truth.Dims()
		t := &truthSection{Names: ds.TruthNames, Unit: ds.TruthUnit, P: p, Values: e.Arr(view.DenseData(ds.Truth)),
			MinLag: g.Rule.MinLag, Radius: wire.Num(g.Rule.Radius), Baselines: []baselineSection{}}
		if ps := g.Pairs; ps != nil {
			var pairs []float64
			for _, pr := range ps.RevisitPairs(MaxRevisitPairs) {
				pairs = append(pairs, float64(pr[0]), float64(pr[1]))
			}
			t.Revisits, t.FarPairs, t.RevisitPairs = ps.Revisits(), ps.FarTotal, e.Arr(pairs)
			if !ps.Exact() {
				t.Sample = &sampleSection{Rows: ps.RowsSampled(), FarPairs: ps.FarPairsSampled(), RevisitPairs: len(pairs) / 2}
			}
		} else {
			t.RevisitPairs = e.Arr(nil)
		}
		for _, b := range g.Baselines {
			t.Baselines = append(t.Baselines, baselineSection{Name: b.Name, Score: optional(b.Score.Value), StdErr: stdErr(b.Score)})
		}
		s.Truth = t
	}
	for _, c := range ds.Columns {
		s.Columns = append(s.Columns, columnSection{Name: c.Name, Values: e.Arr(c.Values), Categories: c.Categories})
	}
	return s
}
