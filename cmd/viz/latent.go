package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"dgpviz/internal/dataset"
	"dgpviz/internal/latent"
	"dgpviz/internal/modelfile"
	"dgpviz/internal/train"
	"dgpviz/internal/view/explorer"
)

func init() {
	register(command{name: "latent", summary: "judge a model's hidden layers as the explorer page does: geometry scores and held-out error, each beside its baselines", run: runLatent})
}

// latentJSON is viz latent's output: the numbers of the explorer page's
// readout for the same model, each beside its units.
type latentJSON struct {
	Model string `json:"model"`
	Data  string `json:"data"`
	// Inputs and Outputs name the data's columns the model was fitted to
	// (dataset.InputColumns, dataset.LayerColumns).
	Inputs  []string `json:"inputs"`
	Outputs []string `json:"outputs"`
	Rows    struct {
		Train int `json:"train"`
		Test  int `json:"test"`
	} `json:"rows"`
	// Hidden says, for every hidden layer, which of its dimensions have
	// collapsed (latent.Collapsed): they carry no information, and a
	// picture that stretches them shows noise.
	Hidden []hiddenLayerJSON `json:"hidden_layers"`
	// Geometry is absent when the data carry no ground truth.
	Geometry *geometryJSON `json:"geometry,omitempty"`
	// HeldOut is absent when the data have no test split.
	HeldOut *heldOutJSON `json:"held_out,omitempty"`
}

type geometryJSON struct {
	Units struct {
		Score  string `json:"score"`
		MinLag string `json:"min_lag"`
		Radius string `json:"radius"`
	} `json:"units"`
	// The score's rule (latent.RuleFor) and the pairs it compares (the
	// revisits estimated from the sampled rows when Sample says so).
	MinLag       int               `json:"min_lag"`
	Radius       float64           `json:"radius"`
	Revisits     int               `json:"revisits"`
	FarPairs     int               `json:"far_pairs"`
	HiddenLayers []layerScoreJSON  `json:"hidden_layers"`
	Baselines    []namedNumberJSON `json:"baselines"`
	Truth        []string          `json:"truth"`
	// Sample, present when the data are too many to compare every pair,
	// says what the scores were estimated from; each score then has its
	// standard error.
	Sample *sampleJSON `json:"sample,omitempty"`
	Note   string      `json:"note,omitempty"`
}

// sampleJSON is latent.Sampling as drawn: the revisits of Rows of the
// training rows, ranked among FarPairs of the far pairs.
type sampleJSON struct {
	Rows           int    `json:"rows"`
	OfRows         int    `json:"of_rows"`
	FarPairs       int    `json:"far_pairs"`
	OfFarPairs     int    `json:"of_far_pairs"`
	RevisitsPerRow int    `json:"revisits_per_row"` // at most
	Seed           uint64 `json:"seed"`
	Text           string `json:"text"`
}

type hiddenLayerJSON struct {
	Layer     int    `json:"layer"`     // counted from 1
	Width     int    `json:"width"`     // its dimensions
	Collapsed []int  `json:"collapsed"` // its collapsed dimensions, counted from 1
	Rule      string `json:"rule"`
}

// collapseRule states latent.CollapseRatio's rule for people.
var collapseRule = fmt.Sprintf("a dimension has collapsed when its means spread over the training rows (their standard deviation) at most %g of the rows' own standard deviation along it (the root mean of the variances)", latent.CollapseRatio)

type layerScoreJSON struct {
	Layer  int      `json:"layer"`
	Score  *float64 `json:"score"`             // null: not scorable (no revisits)
	StdErr *float64 `json:"std_err,omitempty"` // only when sampled
}

type namedNumberJSON struct {
	Name   string   `json:"name"`
	Value  *float64 `json:"value"`             // null: not available
	StdErr *float64 `json:"std_err,omitempty"` // only when sampled
}

type heldOutJSON struct {
	Units struct {
		RMSE string `json:"rmse"`
	} `json:"units"`
	RMSE      *float64          `json:"rmse"`
	Baselines []namedNumberJSON `json:"baselines"`
	// GP1 says how the one-layer GP baseline was fitted: on Rows of the
	// OfRows training rows (explorer.GP1Sample, seed 1, when fewer).
	GP1 struct {
		Inducing   int `json:"inducing"`
		Iterations int `json:"iterations"`
		Rows       int `json:"rows"`
		OfRows     int `json:"of_rows"`
	} `json:"gp1"`
}

func runLatent(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("latent", stderr)
	path := fs.String("model", "", "model file of data with several outputs (viz fit -out, or the page's Save model)")
	spec := fs.String("data", "", "the model's data set, for its ground truth and test split (default: the one the file records, e.g. robot)")
	format := fs.String("format", "json", "output format: json or csv")
	iters := fs.Int("gp-iters", explorer.DefaultBaselineIters, "L-BFGS iterations of the one-layer GP baseline, as the page's (0: leave it out)")
	workers := fs.Int("workers", 0, "goroutines for the predictions (0: one per CPU)")
	sampling := latent.DefaultSampling
	fs.IntVar(&sampling.Rows, "sample-rows", sampling.Rows, "training rows whose revisits the geometry score uses (all when there are no more; beyond, a seeded sample, as the page's)")
	fs.IntVar(&sampling.FarPairs, "sample-pairs", sampling.FarPairs, "pairs far apart in time the geometry score ranks revisits among (all when there are no more; beyond, a seeded sample, as the page's)")
	fs.IntVar(&sampling.PerRow, "sample-revisits", sampling.PerRow, "revisits the geometry score keeps per sampled row (all when a row has no more; beyond, a seeded sample, as the page's)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *path == "" {
		return badInput("viz latent: -model FILE is required")
	}
	if *format != "json" && *format != "csv" {
		return badInput("viz latent: -format %q: want json or csv", *format)
	}
	if *iters < 0 {
		return badInput("viz latent: -gp-iters %d: want ≥ 0", *iters)
	}
	if sampling.Rows < 2 || sampling.FarPairs < 2 || sampling.PerRow < 2 {
		return badInput("viz latent: -sample-rows %d, -sample-pairs %d and -sample-revisits %d: want at least 2 each", sampling.Rows, sampling.FarPairs, sampling.PerRow)
	}
	mf, err := readModelFile("viz latent", *path)
	if err != nil {
		return err
	}
	ds, used, err := modelDataset("viz latent", *path, mf, *spec)
	if err != nil {
		return err
	}
	if _, d := ds.Y.Dims(); d < 2 || len(mf.Model.Layers) < 2 {
		return badInput("viz latent: %s: the latent analyses need data with several outputs and a model with a hidden layer (this one has %s and %s)", *path, plural(d, "output"), plural(len(mf.Model.Layers), "layer"))
	}
	out, err := judgeModel(ctx, mf, ds, sampling, *iters, *workers)
	if err != nil {
		return err
	}
	for _, h := range out.Hidden {
		for _, k := range h.Collapsed {
			fmt.Fprintf(stderr, "viz latent: hidden layer %d, dimension %d has collapsed: its means spread less than %g of the rows' own standard deviation along it, so it carries no information\n", h.Layer, k, latent.CollapseRatio)
		}
	}
	if g := out.Geometry; g != nil && g.Sample != nil {
		for _, l := range g.HiddenLayers {
			if l.Score != nil && l.StdErr != nil {
				fmt.Fprintf(stderr, "viz latent: hidden layer %d: geometry %s\n", l.Layer, withError(*l.Score, *l.StdErr, g.Sample))
			}
		}
	}
	out.Model, out.Data = *path, used
	xNames, yNames := mf.Info.XNames, mf.Info.YNames
	if xNames == nil || yNames == nil { // an older file: the data set's
		xNames, yNames = ds.InputNames, ds.OutputNames
	}
	_, q := mf.Model.X.Dims()
	_, d := mf.Model.Y.Dims()
	out.Inputs, out.Outputs = dataset.InputColumns(xNames, q), dataset.LayerColumns(0, 1, d, yNames)
	if *format == "csv" {
		return writeLatentCSV(stdout, out)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", " ")
	return enc.Encode(out)
}

// judgeModel computes the explorer's numbers for mf's model of ds: the
// same functions as the page (latent.NewGeometry, latent.NewHeldOut,
// latent.Analyze, explorer.OneLayerGP), with the file's normalisation and
// the geometry score's samples of size s (the page's:
// latent.DefaultSampling).
func judgeModel(ctx context.Context, mf *modelfile.File, ds *dataset.Dataset, s latent.Sampling, gpIters, workers int) (*latentJSON, error) {
	g, h := latent.NewGeometryWith(ds, s), latent.NewHeldOut(ds, mf.NormX, mf.NormY)
	a, err := latent.Analyze(mf.Model, g, h, latent.AnalyzeOptions{Workers: workers})
	if err != nil {
		return nil, badInput("viz latent: %v", err)
	}
	out := &latentJSON{}
	out.Rows.Train, out.Rows.Test = ds.Rows()
	for i, c := range a.Collapsed {
		hj := hiddenLayerJSON{Layer: i + 1, Width: len(c), Collapsed: []int{}, Rule: collapseRule}
		for k, yes := range c {
			if yes {
				hj.Collapsed = append(hj.Collapsed, k+1)
			}
		}
		out.Hidden = append(out.Hidden, hj)
	}
	if g != nil {
		gj := &geometryJSON{MinLag: g.Rule.MinLag, Radius: g.Rule.Radius, Truth: ds.TruthNames}
		gj.Units.Score = scoreUnit + " (1: every revisit closer in the latent space than any other pair far apart in time)"
		gj.Units.MinLag = "rows"
		gj.Units.Radius = unitOr(ds.TruthUnit)
		se := func(latent.Score) *float64 { return nil } // exact: no standard error
		if ps := g.Pairs; ps != nil {
			gj.Revisits, gj.FarPairs = ps.Revisits(), ps.FarTotal
			if !ps.Exact() {
				sj := &sampleJSON{Rows: ps.RowsSampled(), OfRows: ps.N, FarPairs: ps.FarPairsSampled(), OfFarPairs: ps.FarTotal,
					RevisitsPerRow: ps.Sampling.PerRow, Seed: ps.Sampling.Seed}
				sj.Text = fmt.Sprintf("estimated from the revisits of %s of %s rows (at most %d each), ranked among %s of %s far pairs, drawn with seed %d; each score ± its standard error",
					thousands(sj.Rows), thousands(sj.OfRows), sj.RevisitsPerRow, thousands(sj.FarPairs), thousands(sj.OfFarPairs), sj.Seed)
				gj.Sample = sj
				se = func(s latent.Score) *float64 { return number(s.StdErr) }
			}
		}
		for i, s := range a.Scores {
			gj.HiddenLayers = append(gj.HiddenLayers, layerScoreJSON{i + 1, number(s.Value), se(s)})
		}
		for _, b := range g.Baselines {
			gj.Baselines = append(gj.Baselines, namedNumberJSON{b.Name, number(b.Score.Value), se(b.Score)})
		}
		if gj.Revisits == 0 {
			gj.Note = "the ground truth never comes back to where it was (no revisits): no score"
		}
		out.Geometry = gj
	}
	if h != nil {
		hj := &heldOutJSON{RMSE: number(a.TestRMSE)}
		hj.Units.RMSE = unitOr(ds.OutputUnit)
		hj.Baselines = append(hj.Baselines, namedNumberJSON{Name: latent.BaselineMean, Value: number(h.MeanRMSE)})
		if gpIters > 0 {
			gp1, err := explorer.OneLayerGP(ctx, ds, gpIters)
			if err != nil && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			hj.Baselines = append(hj.Baselines, namedNumberJSON{Name: latent.BaselineGP1, Value: number(gp1)})
			hj.GP1.Inducing, hj.GP1.Iterations = train.RobotInducing, gpIters
			hj.GP1.Rows, hj.GP1.OfRows = min(out.Rows.Train, explorer.GP1Rows), out.Rows.Train
		}
		out.HeldOut = hj
	}
	return out, nil
}

// number is v, or nil when v is not a number.
func number(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// writeLatentCSV writes viz latent's numbers one per row: measure, what it
// is of (a hidden layer, counted from 1, or a baseline), value (empty: not
// available), its standard error (empty: exact) and unit.
func writeLatentCSV(w io.Writer, out *latentJSON) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"measure", "of", "value", "std_err", "unit"})
	val := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'g', -1, 64)
	}
	for _, h := range out.Hidden {
		for _, k := range h.Collapsed {
			cw.Write([]string{"collapsed dimension", fmt.Sprintf("hidden layer %d", h.Layer), strconv.Itoa(k), "", "dimension, counted from 1"})
		}
	}
	if g := out.Geometry; g != nil {
		for _, l := range g.HiddenLayers {
			cw.Write([]string{"geometry score", fmt.Sprintf("hidden layer %d", l.Layer), val(l.Score), val(l.StdErr), scoreUnit})
		}
		for _, b := range g.Baselines {
			cw.Write([]string{"geometry score", b.Name + " (baseline)", val(b.Value), val(b.StdErr), scoreUnit})
		}
	}
	if h := out.HeldOut; h != nil {
		cw.Write([]string{"test RMSE", "the model", val(h.RMSE), "", h.Units.RMSE})
		for _, b := range h.Baselines {
			cw.Write([]string{"test RMSE", b.Name + " (baseline)", val(b.Value), "", h.Units.RMSE})
		}
	}
	cw.Flush()
	return cw.Error()
}

// withError is a sampled score as people read it: "0.990 ± 0.003
// (20,000 of 1,000,000 rows sampled)", or the far pairs when only they
// were.
func withError(v, se float64, s *sampleJSON) string {
	var what []string
	if s.Rows < s.OfRows {
		what = append(what, fmt.Sprintf("%s of %s rows", thousands(s.Rows), thousands(s.OfRows)))
	}
	if s.FarPairs < s.OfFarPairs {
		what = append(what, fmt.Sprintf("%s of %s far pairs", thousands(s.FarPairs), thousands(s.OfFarPairs)))
	}
	if len(what) == 0 {
		what = append(what, fmt.Sprintf("at most %d revisits a row", s.RevisitsPerRow))
	}
	// As many decimals as the standard error's first digit needs.
	dec := 3
	if se > 0 {
		dec = min(max(dec, int(math.Ceil(-math.Log10(se)))), 8)
	}
	return fmt.Sprintf("%.*f ± %.*f (%s sampled)", dec, v, dec, se, strings.Join(what, ", "))
}

// thousands writes n with a comma between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
