package explorer

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/latent"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"

	"gonum.org/v1/gonum/mat"
)

func TestSampleIsStableAndStratified(t *testing.T) {
	for _, c := range []struct{ nTrain, nTest, k int }{
		{1_000_000, 111_111, 4096}, {5000, 0, 4096}, {4000, 96, 4096}, {10_000, 3, 100}, {9, 1, 4},
	} {
		a, b := NewSample(c.nTrain, c.nTest, c.k, 7), NewSample(c.nTrain, c.nTest, c.k, 7)
		if !slices.Equal(a.Train, b.Train) || !slices.Equal(a.Test, b.Test) {
			t.Fatalf("%+v: two samples with one seed differ", c)
		}
		if a.All() != (c.nTrain+c.nTest <= c.k) {
			t.Fatalf("%+v: All() = %v", c, a.All())
		}
		if got := len(a.Train) + len(a.Test); got != min(c.k, c.nTrain+c.nTest) {
			t.Fatalf("%+v: %d rows, want %d", c, got, min(c.k, c.nTrain+c.nTest))
		}
		if c.nTest > 0 && len(a.Test) == 0 {
			t.Fatalf("%+v: no held-out row in the sample", c)
		}
		for _, part := range []struct {
			rows []int
			n    int
		}{{a.Train, c.nTrain}, {a.Test, c.nTest}} {
			k := len(part.rows)
			for j, i := range part.rows {
				// one row from each of k equal runs: increasing, in range
				lo, hi := j*part.n/k, (j+1)*part.n/k
				if i < lo || i >= hi {
					t.Fatalf("%+v: row %d of the sample is %d, outside its run [%d, %d)", c, j, i, lo, hi)
				}
			}
		}
	}
	if a, b := NewSample(100_000, 0, 4096, 1), NewSample(100_000, 0, 4096, 2); slices.Equal(a.Train, b.Train) {
		t.Fatal("two seeds gave one sample: the draw within a run is not random")
	}
}

func TestDensityCountsEveryRow(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	part := func(n int) *mat.Dense {
		m := mat.NewDense(n, 3, nil)
		for i := range n {
			m.SetRow(i, []float64{r.NormFloat64(), 3 * r.NormFloat64(), r.Float64()})
		}
		return m
	}
	a, b := part(700), part(300)
	a.Set(5, 1, math.NaN()) // not counted in the pairs with dimension 2
	b.Set(0, 0, math.Inf(1))
	const g = 9
	ds := Densities([]*mat.Dense{a, b, nil}, g)
	if len(ds) != 3 {
		t.Fatalf("%d densities of a 3-D layer, want 3", len(ds))
	}
	for _, d := range ds {
		// a direct count: every cell, every row
		want := make([]float64, g*g)
		rows := 0
		for _, p := range []*mat.Dense{a, b} {
			n, _ := p.Dims()
			for i := range n {
				x, y := p.At(i, d.A), p.At(i, d.B)
				if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
					continue
				}
				rows++
				for iy := range g {
					for ix := range g {
						in := func(v float64, k, c int) bool {
							w := (d.Hi[k] - d.Lo[k]) / g
							l := d.Lo[k] + float64(c)*w
							return v >= l && (v < l+w || c == g-1 && v <= d.Hi[k])
						}
						if in(x, 0, ix) && in(y, 1, iy) {
							want[iy*g+ix]++
						}
					}
				}
			}
		}
		var sum float64
		for _, c := range d.Counts {
			sum += c
		}
		if d.Rows != rows || sum != float64(rows) {
			t.Fatalf("pair %d–%d: %d rows, counts sum to %v; want %d", d.A+1, d.B+1, d.Rows, sum, rows)
		}
		if !slices.Equal(d.Counts, want) {
			t.Fatalf("pair %d–%d: counts differ from a direct count\n got %v\nwant %v", d.A+1, d.B+1, d.Counts, want)
		}
	}
	if len(Densities([]*mat.Dense{mat.NewDense(4, 1, nil)}, g)) != 0 {
		t.Fatal("a 1-D layer has no pair to count")
	}
}

// walkData is n training and nTest held-out rows of d smooth signals over
// time, with a label column.
func walkData(n, nTest, d int) *dataset.Dataset {
	r := rand.New(rand.NewPCG(3, 4))
	gen := func(rows, off int) (*mat.Dense, *mat.Dense) {
		x, y := mat.NewDense(rows, 1, nil), mat.NewDense(rows, d, nil)
		for i := range rows {
			t := float64(i + off)
			x.Set(i, 0, t)
			for j := range d {
				y.Set(i, j, math.Sin(t/300+float64(j))+0.1*r.NormFloat64())
			}
		}
		return x, y
	}
	x, y := gen(n, 0)
	ds := &dataset.Dataset{Name: "walk", X: x, Y: y, InputNames: []string{"time"}}
	for j := range d {
		ds.OutputNames = append(ds.OutputNames, string(rune('a'+j)))
	}
	if nTest > 0 {
		ds.XTest, ds.YTest = gen(nTest, n)
	}
	lab := make([]float64, n+nTest)
	for i := range lab {
		lab[i] = float64(i % 3)
	}
	ds.Columns = []dataset.Column{{Name: "label", Values: lab}}
	return ds
}

// snapshot is a model of d, evaluated as the optimizer would (with its
// hidden messages, or without an evaluation when eval is false).
func snapshot(t testing.TB, d *view.Data, eval bool) *view.Snapshot {
	t.Helper()
	m, err := train.Initialize(d.X, d.Y, train.InitConfig{Hidden: []int{3, 2}, Inducing: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := &view.Snapshot{Model: m, Data: d, Iter: 1, Version: 1}
	if eval {
		res, _, err := (&engine.Evaluator{Workers: 1}).Evaluate(m, engine.Options{NoOutputMessage: true})
		if err != nil {
			t.Fatal(err)
		}
		s.Eval = train.NewEvaluation(res)
	}
	return s
}

// TestPassAllJudgesEveryRow: the pass over every row, in chunks, gives the
// held-out error of one prediction of every row (latent.Analyze), and
// densities of every row whether the training rows' means come from the
// optimizer's evaluation or from a prediction.
func TestPassAllJudgesEveryRow(t *testing.T) {
	ds := walkData(2*allChunk+100, 900, 4)
	d := view.NewData(1, ds)
	v := New(view.NewEnv(context.Background(), 10))
	f := v.factsOf(d)
	withEval, withoutEval := passAll(snapshot(t, d, true), f), passAll(snapshot(t, d, false), f)
	a, err := latent.Analyze(snapshot(t, d, false).Model, nil, f.heldOut, latent.AnalyzeOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*allRows{withEval, withoutEval} {
		if math.Abs(p.TestRMSE-a.TestRMSE) > 1e-9*a.TestRMSE {
			t.Fatalf("test RMSE %v, one prediction of every row says %v", p.TestRMSE, a.TestRMSE)
		}
		if len(p.Density) != 2 || len(p.Density[0]) != 3 || len(p.Density[1]) != 1 {
			t.Fatalf("densities of layers 3-D and 2-D: %d layers", len(p.Density))
		}
		for _, l := range p.Density {
			for _, dd := range l {
				if dd.Rows != 2*allChunk+100+900 {
					t.Fatalf("a density counts %d rows, the data have %d", dd.Rows, 2*allChunk+1000)
				}
			}
		}
	}
	// the hidden means of both ways agree: so do the densities
	for i := range withEval.Density {
		for k := range withEval.Density[i] {
			x, y := withEval.Density[i][k], withoutEval.Density[i][k]
			if !slices.Equal(x.Counts, y.Counts) {
				t.Fatalf("layer %d pair %d: the evaluation's means and a prediction's give different densities", i+1, k+1)
			}
		}
	}
}

// TestSampledFrames: above SampleRows rows the setup and the frames carry
// the sample's rows, and a pass over every row brings the densities.
func TestSampledFrames(t *testing.T) {
	ds := walkData(5000, 500, 3)
	d := view.NewData(1, ds)
	v := New(view.NewEnv(context.Background(), 10))
	var e wire.Encoder
	su := v.Setup(&e, d).(*setupSection)
	smp := v.factsOf(d).sample
	if su.Sample == nil || su.NTrain != len(smp.Train) || su.NAll != SampleRows || len(v.SampledRows(d)) != su.NTrain {
		t.Fatalf("setup of 5,500 rows: sample %v, n_train %d, n_all %d", su.Sample, su.NTrain, su.NAll)
	}
	fr := v.NewFramer().(*framer)
	s := snapshot(t, d, true)
	s.Running = true
	layers, sec := fr.Frame(&e, s)
	if sec.(*frameSection).AllIter != nil {
		t.Fatal("the first frame of a running fit waited for the pass over every row")
	}
	if n := layers[0].Mean; n == nil {
		t.Fatal("no hidden means in the frame")
	}
	msg, err := e.Finish(&testHeader{Layers: layers, View: sec})
	if err != nil {
		t.Fatal(err)
	}
	dec, err := wire.Decode(msg)
	if err != nil {
		t.Fatal(err)
	}
	mean := dec["layers"].([]any)[0].(map[string]any)["mean"].([]float64)
	if len(mean) != 3*len(smp.Train) {
		t.Fatalf("hidden layer 1 carries %d values, want %d (the sample's rows)", len(mean), 3*len(smp.Train))
	}
	for k, i := range smp.Train[:50] {
		if want := s.Eval.Hidden[0].Mean.At(i, 1); math.Abs(mean[3*k+1]-want) > 1e-3*(1+math.Abs(want)) {
			t.Fatalf("sampled row %d (row %d): mean %v, the evaluation's %v", k, i, mean[3*k+1], want)
		}
	}
	fr.all.Wait()
	e = wire.Encoder{}
	_, sec = fr.Frame(&e, s)
	fs := sec.(*frameSection)
	if fs.AllIter == nil || len(fs.Density) != 2 || fs.TestRMSE == nil {
		t.Fatalf("after the pass: all_iter %v, %d density layers, test RMSE %v", fs.AllIter, len(fs.Density), fs.TestRMSE)
	}
	e = wire.Encoder{}
	if _, sec = fr.Frame(&e, s); sec.(*frameSection).Density != nil {
		t.Fatal("a frame repeated the densities of a pass already sent")
	}
	// paused on a new state: no later frame would bring a background
	// pass, so the frame brings it
	p := *s
	p.Running, p.Version, p.Iter = false, 2, 2
	e = wire.Encoder{}
	if _, sec = fr.Frame(&e, &p); sec.(*frameSection).Density == nil || *sec.(*frameSection).AllIter != 2 {
		t.Fatal("a paused state's frame came without the pass over every row of it")
	}
}

type testHeader struct {
	Layers   []view.LayerFrame `json:"layers"`
	View     any               `json:"view"`
	Sections []wire.Section    `json:"sections"`
}

func (h *testHeader) SetSections(s []wire.Section) { h.Sections = s }
