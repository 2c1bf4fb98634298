package latent

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/modelfile"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// collapsedFixture is a hidden layer of n rows with a known collapse: a
// loop in dimensions 1 and 2, whose means spread over tens of their
// standard deviations, and dimension 3 as the robot's h1 has it, every mean
// within 1e-12 of 7e-13 and every variance about 156.
func collapsedFixture(n int) LayerMessages {
	r := rand.New(rand.NewPCG(3, 3))
	mean, vr := mat.NewDense(n, 3, nil), mat.NewDense(n, 3, nil)
	for i := range n {
		a := 2 * math.Pi * float64(i) / float64(n)
		mean.Set(i, 0, 3*math.Cos(a))
		mean.Set(i, 1, 2*math.Sin(a))
		mean.Set(i, 2, 7e-13+5e-13*r.Float64())
		vr.Set(i, 0, 0.01)
		vr.Set(i, 1, 0.02)
		vr.Set(i, 2, 156+r.NormFloat64())
	}
	return LayerMessages{Name: "h1", Mean: mean, Var: vr}
}

// TestCollapsed checks the rule against the spreads computed by gonum's
// stat, at the fixture's known collapse and on either side of the
// threshold.
func TestCollapsed(t *testing.T) {
	l := collapsedFixture(200)
	if got := Collapsed(l.Mean, l.Var); got[0] || got[1] || !got[2] {
		t.Errorf("collapsed %v, want only dimension 3", got)
	}
	// The threshold: means spread at 0.9 and 1.1 times CollapseRatio of
	// the rows' standard deviation (2).
	const n = 100
	for _, c := range []struct {
		f    float64
		want bool
	}{{0.9, true}, {1.1, false}} {
		mean, vr := mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil)
		for i := range n {
			mean.Set(i, 0, 5+float64(i%2*2-1)*c.f*CollapseRatio*2) // ± the spread: its sd exactly
			vr.Set(i, 0, 4)
		}
		_, sd := stat.PopMeanStdDev(mean.RawMatrix().Data, nil)
		if math.Abs(sd-c.f*CollapseRatio*2) > 1e-12 {
			t.Fatalf("fixture spread %v", sd)
		}
		if got := Collapsed(mean, vr)[0]; got != c.want {
			t.Errorf("means spread %.2f × CollapseRatio of the sd: collapsed %v, want %v", c.f, got, c.want)
		}
	}
	// Without variances the rule cannot tell.
	if got := Collapsed(l.Mean, nil); got[2] {
		t.Error("collapsed without variances")
	}
	// The spreads themselves, against gonum's.
	for k := range 3 {
		col := mat.Col(nil, k, l.Mean)
		mu, sd := stat.PopMeanStdDev(col, nil)
		c, spread, psd := spreadOf(l.Mean, l.Var, k)
		if math.Abs(c-mu) > 1e-12*(math.Abs(mu)+sd) || math.Abs(spread-sd) > 1e-9*sd || math.Abs(psd-math.Sqrt(stat.Mean(mat.Col(nil, k, l.Var), nil))) > 1e-12 {
			t.Errorf("dimension %d: centre %v spread %v sd %v, stat %v %v", k+1, c, spread, psd, mu, sd)
		}
	}
}

// TestRenderCollapsed: the figure marks a collapsed dimension and draws it
// on an axis of its rows' uncertainty (± 2 sd: ticks in tens), not
// stretched to its means' range (ticks of 1e-13).
func TestRenderCollapsed(t *testing.T) {
	const n = 60
	l := collapsedFixture(n)
	times := make([]float64, n)
	for i := range times {
		times[i] = float64(i)
	}
	var buf bytes.Buffer
	if err := RenderFigure(&buf, "svg", &FigureData{Times: times, Layers: []LayerMessages{l}}); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	if c := strings.Count(svg, "h1 dimension 3 (collapsed)"); c != 2 { // its two projections
		t.Errorf("%d axes say dimension 3 collapsed, want 2", c)
	}
	if strings.Contains(svg, "dimension 1 (collapsed)") || strings.Contains(svg, "dimension 2 (collapsed)") {
		t.Error("a used dimension is marked collapsed")
	}
	if tiny := regexp.MustCompile(`>[−-]?[0-9.]+e-1[0-9]<`).FindString(svg); tiny != "" {
		t.Errorf("a tick label %s: the collapsed dimension is stretched to its means' range", tiny)
	}
	if !strings.Contains(svg, ">20<") || !strings.Contains(svg, ">-20<") && !strings.Contains(svg, ">−20<") {
		t.Error("no ticks at ±20 on the collapsed axis (± 2 sd of 12.5)")
	}
}

// TestRealRobotCollapsed: the robot preset's model (viz fit -data robot
// -seed 1, 15,642 iterations to stationary; testdata/robot_fitted.json,
// whose data refer to the robot file) has collapsed h1's third dimension
// (means within 1e-12, variance 156) and no other: the used ones spread
// over 25 to 350 of their rows' standard deviations. The latent figure
// marks it and draws it on ± 2 sd (tens), not on its means' 1e-13.
func TestRealRobotCollapsed(t *testing.T) {
	ds, _ := robotTrain(t)
	f, err := os.Open(filepath.Join("testdata", "robot_fitted.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mf, err := modelfile.ReadWith(f, modelfile.ReadOptions{LoadDataSet: func(string) (*dataset.Dataset, error) { return ds, nil }})
	if err != nil {
		t.Fatal(err)
	}
	a, err := Analyze(mf.Model, nil, nil, AnalyzeOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]bool{{false, false, true}, {false, false, false}}; fmt.Sprint(a.Collapsed) != fmt.Sprint(want) {
		t.Errorf("collapsed %v, want %v (h1's dimension 3 alone)", a.Collapsed, want)
	}
	fig, err := ModelFigure(mf.Model, ds)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range fig.Layers {
		for k := range 3 {
			_, spread, sd := spreadOf(l.Mean, l.Var, k)
			t.Logf("%s dimension %d: means spread %.3g, rows' sd %.3g: ratio %.3g", l.Name, k+1, spread, sd, spread/sd)
		}
	}
	var buf bytes.Buffer
	if err := RenderFigure(&buf, "svg", fig); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	if c := strings.Count(svg, "(collapsed)"); c != 2 || !strings.Contains(svg, "h1 dimension 3 (collapsed)") {
		t.Errorf("%d axes marked collapsed, want h1 dimension 3's two", c)
	}
	if tiny := regexp.MustCompile(`>[−-]?[0-9.]+e-1[0-9]<`).FindString(svg); tiny != "" {
		t.Errorf("a tick label %s: the collapsed dimension is stretched to its means' range", tiny)
	}
}
