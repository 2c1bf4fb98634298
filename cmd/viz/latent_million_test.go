package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/latent"
	"dgpviz/internal/linalg"
	"dgpviz/internal/modelfile"
	"dgpviz/internal/train"

	"gonum.org/v1/gonum/mat"
)

// walkData is a robot wandering a grid of corridors (50 × 50 crossings
// 20 m apart at a million rows, fewer for fewer rows, a new direction at
// random at each crossing, 0.4 m a step),
// its 30 signals falling off with the distance to 30 beacons (with noise,
// in whole dBm: the model file stores them as small integers),
// its true position as ground truth and every 10th row held out: train
// rows, then test rows, as dataset.Load gives a CSV with a split column.
// Over a million steps it passes each stretch of corridor about four
// times: revisits, but not every row near every other.
func walkData(rows int, seed uint64) *dataset.Dataset {
	const spacing, step, signals = 20.0, 0.4, 30
	grid := max(3, int(math.Round(50*math.Sqrt(float64(rows)/1111111))))
	rng := rand.New(rand.NewPCG(seed, 11))
	var beacons [signals][2]float64
	for k := range beacons {
		beacons[k] = [2]float64{rng.Float64() * float64(grid) * spacing, rng.Float64() * float64(grid) * spacing}
	}
	nTest := (rows + 1) / 10
	nTrain := rows - nTest
	ds := &dataset.Dataset{Name: "walk", Description: "a generated robot walk", InputNames: []string{"time"}, InputUnit: "s", OutputUnit: "dBm",
		X: mat.NewDense(nTrain, 1, nil), Y: mat.NewDense(nTrain, signals, nil), XTest: mat.NewDense(nTest, 1, nil), YTest: mat.NewDense(nTest, signals, nil),
		Truth: mat.NewDense(rows, 2, nil), TruthNames: []string{"truth_x", "truth_y"}, TruthUnit: "m"}
	for k := range signals {
		ds.OutputNames = append(ds.OutputNames, fmt.Sprintf("y%d", k+1))
	}
	x, y := float64(grid/2)*spacing, float64(grid/2)*spacing // the middle crossing
	dir := 0
	moves := [4][2]float64{{1, 0}, {0, 1}, {-1, 0}, {0, -1}}
	const perLeg = int(spacing / step)
	tr, te := 0, 0
	for i := range rows {
		if i%perLeg == 0 { // at a crossing: any way that stays on the grid
			for {
				dir = rng.IntN(4)
				nx, ny := x+moves[dir][0]*spacing, y+moves[dir][1]*spacing
				if nx >= 0 && ny >= 0 && nx <= float64(grid-1)*spacing && ny <= float64(grid-1)*spacing {
					break
				}
			}
		}
		x, y = x+moves[dir][0]*step, y+moves[dir][1]*step
		px, py := x+0.1*rng.NormFloat64(), y+0.1*rng.NormFloat64()
		outX, outY, row := ds.X, ds.Y, tr
		if i%10 == 9 {
			outX, outY, row = ds.XTest, ds.YTest, te
			ds.Truth.Set(nTrain+te, 0, px)
			ds.Truth.Set(nTrain+te, 1, py)
			te++
		} else {
			ds.Truth.Set(tr, 0, px)
			ds.Truth.Set(tr, 1, py)
			tr++
		}
		outX.Set(row, 0, float64(i))
		for k, b := range beacons {
			d := math.Hypot(px-b[0], py-b[1])
			outY.Set(row, k, math.Round(-40-20*math.Log10(1+d)+2*rng.NormFloat64())) // whole dBm, as a WiFi card reports
		}
	}
	return ds
}

// writeWalkModel writes the preset's model of ds, initialised
// (train.Initialize, no fit), as a model file holding its data, and ds as
// a CSV with a split column: viz latent -model MODEL -data csv:CSV. The
// layers are initialised from every k-th row, at most 100,000 (at a
// million rows the initial regression's Cholesky factorisation fails),
// and then hold all of ds's rows: a layer has no per-row parameters.
func writeWalkModel(tb testing.TB, ds *dataset.Dataset, dir string) (model, csv string) {
	tb.Helper()
	nx, ny := dataset.FitNormalizer(ds.X), dataset.FitNormalizer(ds.Y)
	x, y := nx.Apply(ds.X), ny.Apply(ds.Y)
	n, _ := x.Dims()
	k := (n + 99999) / 100000
	var rows []int
	for i := 0; i < n; i += k {
		rows = append(rows, i)
	}
	m, err := train.Initialize(linalg.Rows(x, rows), linalg.Rows(y, rows), train.RobotPreset(1).Init)
	if err != nil {
		tb.Fatal(err)
	}
	m.X, m.Y = x, y
	csv = filepath.Join(dir, "walk.csv")
	spec := "csv:" + csv
	model = filepath.Join(dir, "walk-model.json")
	f, err := os.Create(model)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	mf := &modelfile.File{Model: m, NormX: nx, NormY: ny, Info: modelfile.InfoOf(ds),
		Extra: map[string]json.RawMessage{"dataset": []byte(`{"name":"csv:walk.csv","spec":` + strconv.Quote(spec) + `}`)}}
	if err := modelfile.Write(w, mf); err != nil {
		tb.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	writeWalkCSV(tb, ds, csv)
	return model, csv
}

func writeWalkCSV(tb testing.TB, ds *dataset.Dataset, path string) {
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprint(w, "x_time")
	for k := range ds.OutputNames {
		fmt.Fprintf(w, ",y%d", k+1)
	}
	fmt.Fprintln(w, ",truth_x,truth_y,split")
	n, _ := ds.X.Dims()
	_, d := ds.Y.Dims()
	nt, _ := ds.XTest.Dims()
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	for i := range n + nt {
		x, y, split, row := ds.X, ds.Y, "train", i
		if i >= n {
			x, y, split, row = ds.XTest, ds.YTest, "test", i-n
		}
		w.WriteString(num(x.At(row, 0)))
		for k := range d {
			w.WriteString("," + num(y.At(row, k)))
		}
		fmt.Fprintf(w, ",%s,%s,%s\n", num(ds.Truth.At(i, 0)), num(ds.Truth.At(i, 1)), split)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
}

// TestWriteWalk writes a walk's model and CSV into $DGPVIZ_LATENT_WALK_DIR
// ($DGPVIZ_LATENT_WALK_ROWS rows, default 1,111,111: a million training
// rows), to measure viz latent on them as a command (docs/measurements.md).
func TestWriteWalk(t *testing.T) {
	dir := os.Getenv("DGPVIZ_LATENT_WALK_DIR")
	if dir == "" {
		t.Skip("DGPVIZ_LATENT_WALK_DIR not set: no walk files written")
	}
	model, csv := writeWalkModel(t, walkData(walkRows(t), 1), dir)
	t.Logf("viz latent -model %s -data csv:%s", model, csv)
}

func walkRows(tb testing.TB) int {
	rows := 1111111
	if v := os.Getenv("DGPVIZ_LATENT_WALK_ROWS"); v != "" {
		var err error
		if rows, err = strconv.Atoi(v); err != nil {
			tb.Fatal(err)
		}
	}
	return rows
}

// TestLatentWalk runs viz latent's computation on a walk of 3,000
// training rows: every row's revisits, ranked among a sample of the far
// pairs, so each score with its standard error; and viz latent with
// -sample-pairs raised above the 2.5 million far pairs and
// -sample-revisits above any row's, exact scores within 3 standard errors
// of those.
func TestLatentWalk(t *testing.T) {
	ds := walkData(3333, 1)
	model, csv := writeWalkModel(t, ds, t.TempDir())
	mf, err := readModelFile("viz latent", model)
	if err != nil {
		t.Fatal(err)
	}
	out, err := judgeModel(context.Background(), mf, ds, latent.DefaultSampling, 20, 0)
	if err != nil {
		t.Fatal(err)
	}
	g := out.Geometry
	if g == nil || g.Sample == nil || g.Revisits == 0 {
		t.Fatalf("geometry %+v: want sampled scores", g)
	}
	for _, l := range g.HiddenLayers {
		if l.Score == nil || l.StdErr == nil || !(*l.StdErr > 0 && *l.StdErr < 0.05) {
			t.Errorf("hidden layer %d: score %v ± %v", l.Layer, l.Score, l.StdErr)
		}
	}
	if h := out.HeldOut; h == nil || h.RMSE == nil || h.GP1.Rows != 3000 || h.GP1.OfRows != 3000 {
		t.Errorf("held out %+v", h)
	}
	t.Logf("%s: %s", g.Sample.Text, withError(*g.HiddenLayers[0].Score, *g.HiddenLayers[0].StdErr, g.Sample))

	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"latent", "-model", model, "-data", "csv:" + csv, "-gp-iters", "0", "-sample-pairs", "3000000", "-sample-revisits", "100000"}, &stdout, &stderr); err != nil {
		t.Fatalf("viz latent: %v\n%s", err, stderr.String())
	}
	var exact latentJSON
	if err := json.Unmarshal(stdout.Bytes(), &exact); err != nil {
		t.Fatal(err)
	}
	e := exact.Geometry
	if e == nil || e.Sample != nil || stderr.Len() != 0 || len(e.HiddenLayers) != len(g.HiddenLayers) {
		t.Fatalf("-sample-pairs 3000000 -sample-revisits 100000: geometry %+v, stderr %q: want exact scores", e, stderr.String())
	}
	for i, l := range e.HiddenLayers {
		s := g.HiddenLayers[i]
		if l.Score == nil || l.StdErr != nil || math.Abs(*l.Score-*s.Score) > 3**s.StdErr {
			t.Errorf("hidden layer %d: exact %v, sampled %.4f ± %.4f", l.Layer, l.Score, *s.Score, *s.StdErr)
		}
	}
	for i, b := range e.Baselines {
		s := g.Baselines[i]
		if b.Value == nil || math.Abs(*b.Value-*s.Value) > 3**s.StdErr+1e-12 {
			t.Errorf("%s: exact %v, sampled %.4f ± %.4f", b.Name, b.Value, *s.Value, *s.StdErr)
		}
	}
}

// BenchmarkLatentMillion is viz latent's computation (judgeModel, after
// reading the model file) on a walk of a million training rows
// ($DGPVIZ_LATENT_WALK_ROWS to change) with the page's one-layer GP
// baseline. Making the model takes minutes; not with -short.
func BenchmarkLatentMillion(b *testing.B) {
	if testing.Short() {
		b.Skip("a million rows: not with -short")
	}
	ds := walkData(walkRows(b), 1)
	model, _ := writeWalkModel(b, ds, b.TempDir())
	runtime.GC()
	b.ReportAllocs()
	for b.Loop() {
		mf, err := readModelFile("viz latent", model)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := judgeModel(context.Background(), mf, ds, latent.DefaultSampling, 1500, 0); err != nil {
			b.Fatal(err)
		}
	}
}
