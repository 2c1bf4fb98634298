package faces

import (
	"bytes"
	"image/png"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/plotkit/plotkittest"
	"dgpviz/internal/train"

	"gonum.org/v1/gonum/mat"
)

// autoencoder returns a small 6 → 2 → 6 model fitted for a few
// iterations to smooth data, and the output normaliser of its data.
func autoencoder(t *testing.T) (*engine.Model, dataset.Normalizer) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	y := mat.NewDense(40, 6, nil)
	for i := range 40 {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		for j := range 6 {
			y.Set(i, j, 100+20*math.Sin(a+float64(j))+10*b*float64(j)+rng.NormFloat64())
		}
	}
	ny := dataset.FitNormalizer(y)
	yn := ny.Apply(y)
	m, err := train.Initialize(yn, mat.DenseCopyOf(yn), train.InitConfig{Hidden: []int{2}, Inducing: 8, InputKernel: "rbfiso", HiddenInit: "pca"})
	if err != nil {
		t.Fatal(err)
	}
	return m, ny
}

// TestDecodeMatchesPredict checks Decode (FunctionOn on the last layer)
// against the engine's Predict through that layer alone at the same
// certain latent inputs, in original units. Predict's message variance
// leaves out the conditional variance k(x,x) − k(x,Z)Kuu⁻¹k(Z,x) (the bound
// charges it as the compression penalty); the decoded face's predictive
// variance includes it, computed here independently with gonum.
func TestDecodeMatchesPredict(t *testing.T) {
	m, ny := autoencoder(t)
	dec, err := NewDecoder(m, ny)
	if err != nil {
		t.Fatal(err)
	}
	pts := []float64{0, 0, 1.3, -0.4, -2, 2.5}
	mean, vr := make([]float64, 3*6), make([]float64, 3*6)
	if err := dec.Decode(pts, mean, vr); err != nil {
		t.Fatal(err)
	}
	last := m.Layers[1]
	one := &engine.Model{Jitter: m.Jitter, X: mat.NewDense(3, 2, pts), Y: mat.NewDense(3, 6, nil), Layers: []*engine.Layer{last}}
	var ev engine.Evaluator
	msgs, err := ev.Predict(one, one.X)
	if err != nil {
		t.Fatal(err)
	}
	zm, _, _ := last.Dims()
	kuu := mat.NewSymDense(zm, nil)
	for a := range zm {
		for b := a; b < zm; b++ {
			v := last.Kernel.Eval(last.InducingInputs.RawRowView(a), last.InducingInputs.RawRowView(b))
			if a == b {
				v += m.Jitter
			}
			kuu.SetSym(a, b, v)
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(kuu) {
		t.Fatal("Kuu not positive definite")
	}
	cond := make([]float64, 3)
	for i := range 3 {
		x := pts[2*i : 2*i+2]
		kx := mat.NewVecDense(zm, nil)
		for a := range zm {
			kx.SetVec(a, last.Kernel.Eval(x, last.InducingInputs.RawRowView(a)))
		}
		var sol mat.VecDense
		if err := chol.SolveVecTo(&sol, kx); err != nil {
			t.Fatal(err)
		}
		cond[i] = last.Kernel.Eval(x, x) - mat.Dot(kx, &sol)
	}
	full := mat.DenseCopyOf(msgs[0].Var)
	for i := range 3 {
		for j := range 6 {
			full.Set(i, j, full.At(i, j)+cond[i])
		}
	}
	wantMean, wantVar := ny.UndoMean(msgs[0].Mean), ny.UndoVar(full)
	for i := range 3 {
		for j := range 6 {
			if d := math.Abs(mean[i*6+j] - wantMean.At(i, j)); d > 1e-9*math.Abs(wantMean.At(i, j)) {
				t.Errorf("point %d pixel %d: mean %.12g, Predict %.12g", i, j, mean[i*6+j], wantMean.At(i, j))
			}
			if d := math.Abs(vr[i*6+j] - wantVar.At(i, j)); d > 1e-7*wantVar.At(i, j) {
				t.Errorf("point %d pixel %d: variance %.12g, Predict %.12g", i, j, vr[i*6+j], wantVar.At(i, j))
			}
		}
	}
	if err := dec.Decode(pts[:3], mean, vr); err == nil {
		t.Error("Decode accepted an odd number of latent values")
	}
}

func TestRenderFormats(t *testing.T) {
	lat := mat.NewDense(3, 2, []float64{0, 0, 1, 1, 2, 0.5})
	tile := make([]float64, 6)
	for k := range tile {
		tile[k] = float64(40 * k)
	}
	f := &FigureData{Latent: lat, Height: 3, Width: 2, Lo: 0, Hi: 255, Tiles: []Tile{{X: 1, Y: 0.5, Pixels: tile}}, RowName: "frame"}
	for _, format := range []string{"png", "svg", "pdf"} {
		var b bytes.Buffer
		if err := Render(&b, format, f); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if format == "png" {
			img, err := png.Decode(&b)
			if err != nil {
				t.Fatal(err)
			}
			if w := img.Bounds().Dx(); w < 1600 {
				t.Errorf("PNG %d px wide, want ≥ 1600 (slide resolution)", w)
			}
		}
		// The colour bar counts rows from 1, as people do.
		if format == "svg" && (!strings.Contains(b.String(), "frame (from 1)") || !strings.Contains(b.String(), ">1<") || !strings.Contains(b.String(), ">3<")) {
			t.Error("SVG without the colour bar's label or its ticks 1 and 3")
		}
		// The PDF prints its text as drawn (Unicode fonts), images beside it.
		if format == "pdf" {
			if text := plotkittest.PDFText(t, b.Bytes()); !strings.Contains(text, "frame (from 1)") {
				t.Errorf("the PDF's text lacks the colour bar's label: %q", text)
			}
		}
	}
	f.Tiles[0].Pixels = tile[:5]
	if err := Render(&bytes.Buffer{}, "png", f); err == nil {
		t.Error("a tile of the wrong size was accepted")
	}
	if err := Render(&bytes.Buffer{}, "gif", f); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestGrid(t *testing.T) {
	lat := mat.NewDense(2, 2, []float64{0, 10, 4, 30})
	g := Grid(lat, 2)
	// Centres of the 2×2 partition of [0,4]×[10,30].
	want := []float64{1, 15, 3, 15, 1, 25, 3, 25}
	for i := range want {
		if g[i] != want[i] {
			t.Fatalf("Grid = %v, want %v", g, want)
		}
	}
}
