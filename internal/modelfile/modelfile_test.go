package modelfile

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/linalg"

	"gonum.org/v1/gonum/mat"
)

func TestModelFileRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := engine.RandomModel(rng, 7, []int{2, 3, 1}, []string{"linear", "rbf"}, 3)
	extra := map[string]json.RawMessage{"dataset": json.RawMessage(`"step"`)}
	var buf bytes.Buffer
	if err := WriteModel(&buf, m, extra); err != nil {
		t.Fatal(err)
	}
	mf, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if string(mf.Extra["dataset"]) != `"step"` {
		t.Errorf("extra field lost: %q", mf.Extra["dataset"])
	}
	a, b := m.Params(nil), mf.Model.Params(nil)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("param %d: wrote %v, read %v", i, a[i], b[i])
		}
	}
	var buf2 bytes.Buffer
	if err := WriteModel(&buf2, mf.Model, mf.Extra); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), buf2.Bytes()) {
		t.Error("writing a read model changed its bytes")
	}
	r1, _ := mustEval(t, m, engine.Options{})
	r2, _ := mustEval(t, mf.Model, engine.Options{})
	if r1.Bound != r2.Bound {
		t.Errorf("bound changed through the file: %v → %v", r1.Bound, r2.Bound)
	}
}

const goodLayer = `{"kernel": {"type": "rbf", "variance": 1.0, "lengthscales": [0.5]},
 "noise_variance": 0.01, "inducing_inputs": [[0], [1]], "q_mu": [[0], [1]],
 "q_sqrt": [[[1, 0], [0.1, 1]]]}`

// TestModelFileDataInfo: the data's units, image shape, range and column
// names are written when known, read back, and absent when not known.
func TestModelFileDataInfo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := engine.RandomModel(rng, 7, []int{6, 2, 6}, []string{"rbf", "rbf"}, 3)
	info := DataInfo{XUnit: "grey level", YUnit: "grey level", Shape: [2]int{2, 3}, Range: [2]float64{0, 255},
		XNames: []string{"x_a", "x_b", "x_c [s]", "x_d", "x_é", `x "q"`}, YNames: []string{"y1", "y2", "y3", "y4", "y5", "y_ap6 [dBm]"}}
	var buf bytes.Buffer
	if err := Write(&buf, &File{Model: m, Info: info}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"shape": [`) || !strings.Contains(buf.String(), `"y_unit": "grey level"`) {
		t.Errorf("the file lacks the data's shape or unit:\n%s", buf.String()[:min(buf.Len(), 400)])
	}
	mf, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(mf.Info, info) {
		t.Errorf("read %+v, wrote %+v", mf.Info, info)
	}
	buf.Reset()
	if err := WriteModel(&buf, m, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `"shape"`) || strings.Contains(buf.String(), `"range"`) || strings.Contains(buf.String(), `_unit"`) {
		t.Error("a model without data info writes some")
	}
	if strings.Contains(buf.String(), `_names"`) {
		t.Error("a model without column names writes some")
	}
	if mf, err := Read(&buf); err != nil || !mf.Info.IsZero() {
		t.Errorf("no info read as %+v (%v)", mf.Info, err)
	}
}

func TestReadModelErrors(t *testing.T) {
	data := `"data": {"X": [[0], [0.5], [1]], "Y": [[0], [1], [1]]}`
	cases := []struct {
		name, json, want string
	}{
		{"not json", `{`, "not valid JSON"},
		{"no layers", `{` + data + `, "layers": []}`, "no layers"},
		{"ragged X", `{"data": {"X": [[0], [0, 1]], "Y": [[0], [1]]}, "layers": [` + goodLayer + `]}`, "data.X[1]"},
		{"X/Y rows", `{"data": {"X": [[0], [1]], "Y": [[0]]}, "layers": [` + goodLayer + `]}`, "Y has 1"},
		{"negative variance", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `"variance": 1.0`, `"variance": -1`, 1) + `]}`, "layer 1: kernel.variance"},
		{"zero lengthscale", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `[0.5]`, `[0]`, 1) + `]}`, "layer 1: kernel.lengthscales[0]"},
		{"negative noise", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `0.01`, `-0.01`, 1) + `]}`, "layer 1: noise_variance"},
		{"unknown kernel", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `"rbf"`, `"matern"`, 1) + `]}`, "layer 1: kernel.type"},
		{"q_mu rows", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `"q_mu": [[0], [1]]`, `"q_mu": [[0]]`, 1) + `]}`, "layer 1: q_mu: 1 rows, want 2"},
		{"q_sqrt count", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `"q_sqrt": [[[1, 0], [0.1, 1]]]`, `"q_sqrt": []`, 1) + `]}`, "layer 1: q_sqrt: missing or empty"},
		{"q_sqrt zero diagonal", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `[0.1, 1]`, `[0.1, 0]`, 1) + `]}`, "layer 1: q_sqrt[0][1][1]"},
		{"lengthscale count", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `[0.5]`, `[0.5, 1]`, 1) + `]}`, "layer 1: kernel.lengthscales: more than 1 entries"},
		{"output width", `{` + data + `, "layers": [` + strings.Replace(strings.Replace(goodLayer, `"q_mu": [[0], [1]]`, `"q_mu": [[0, 1], [1, 0]]`, 1), `"q_sqrt": [[[1, 0], [0.1, 1]]]`, `"q_sqrt": [[[1, 0], [0.1, 1]], [[1, 0], [0, 1]]]`, 1) + `]}`, "Y has 1"},
		{"NaN literal", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `0.01`, `NaN`, 1) + `]}`, "not valid JSON"},
		{"negative jitter", `{"jitter": -1, ` + data + `, "layers": [` + goodLayer + `]}`, "jitter"},
		{"shape of other columns", `{"data": {"X": [[0], [0.5], [1]], "Y": [[0], [1], [1]], "shape": [2, 3]}, "layers": [` + goodLayer + `]}`, "data.shape: 2 × 3 pixels, but Y has 1 columns"},
		{"shape not whole", `{"data": {"X": [[0], [0.5], [1]], "Y": [[0], [1], [1]], "shape": [1.5, 1]}, "layers": [` + goodLayer + `]}`, "data.shape: 1.5 is not a whole number"},
		{"shape of 3", `{"data": {"X": [[0], [0.5], [1]], "Y": [[0], [1], [1]], "shape": [1, 1, 1]}, "layers": [` + goodLayer + `]}`, "data.shape: more than 2 numbers"},
		{"range reversed", `{"data": {"X": [[0], [0.5], [1]], "Y": [[0], [1], [1]], "range": [255, 0]}, "layers": [` + goodLayer + `]}`, "data.range: [255, 0]"},
		{"unit not text", `{"data": {"X": [[0], [0.5], [1]], "Y": [[0], [1], [1]], "y_unit": 3}, "layers": [` + goodLayer + `]}`, "data.y_unit"},
		{"names of other columns", `{"data": {"X": [[0], [0.5], [1]], "Y": [[0], [1], [1]], "y_names": ["a", "b"]}, "layers": [` + goodLayer + `]}`, "data.y_names: 2 names, but Y has 1 columns"},
		{"name not text", `{"data": {"X": [[0], [0.5], [1]], "Y": [[0], [1], [1]], "x_names": [1]}, "layers": [` + goodLayer + `]}`, "data.x_names[0]"},
		{"name too long", `{"data": {"X": [[0], [0.5], [1]], "Y": [[0], [1], [1]], "x_names": ["` + strings.Repeat("x", 257) + `"]}, "layers": [` + goodLayer + `]}`, "data.x_names[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.json))
			if err == nil {
				t.Fatalf("accepted; want error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.HasPrefix(err.Error(), "engine: ") {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestNotPositiveDefinite: two identical inducing inputs with no jitter
// make Kuu singular; Evaluate says so, naming the layer.
func TestNotPositiveDefinite(t *testing.T) {
	js := `{"jitter": 0, "data": {"X": [[0], [1]], "Y": [[0], [1]]}, "layers": [` +
		strings.Replace(goodLayer, `[[0], [1]], "q_mu"`, `[[0.5], [0.5]], "q_mu"`, 1) + `]}`
	mf, err := Read(strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = engine.Evaluate(mf.Model, engine.Options{Gradient: true})
	if !errors.Is(err, engine.ErrNotPositiveDefinite) || !strings.Contains(err.Error(), "layer 1: inducing_inputs") {
		t.Errorf("error %v, want ErrNotPositiveDefinite naming layer 1", err)
	}
}

// TestModelFileNormalization checks the model file's one normalisation
// reader: absent means the identity, NormalizationJSON round-trips, and
// wrong lengths or invalid scales are errors naming the field.
func TestModelFileNormalization(t *testing.T) {
	b, err := os.ReadFile("../engine/testdata/step3_fitted.json")
	if err != nil {
		t.Fatal(err)
	}
	mf, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := mf.Extra["normalization"]; ok {
		t.Error("the normalization field stays in Extra besides NormX and NormY")
	}
	if math.Abs(mf.NormX.Mean[0]-0.5) > 1e-12 || mf.NormX.Scale[0] <= 0 {
		t.Errorf("NormX %+v, want the step data's mean 0.5", mf.NormX)
	}
	var all map[string]json.RawMessage
	json.Unmarshal(b, &all)
	for _, tc := range []struct{ name, norm, want string }{
		{"absent", "", ""},
		{"null", "null", ""},
		{"round trip", string(NormalizationJSON(mf.NormX, mf.NormY)), ""},
		{"zero scale", `{"x_scale":[0]}`, "normalization.x_scale[0] = 0"},
		{"length", `{"y_mean":[1,2]}`, "normalization.y_mean has 2 entries"},
		{"not an object", `[1]`, "normalization"},
	} {
		m := map[string]json.RawMessage{}
		for k, v := range all {
			m[k] = v
		}
		delete(m, "normalization")
		if tc.norm != "" {
			m["normalization"] = json.RawMessage(tc.norm)
		}
		raw, _ := json.Marshal(m)
		got, err := Read(bytes.NewReader(raw))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		case tc.want == "" && tc.norm == "" && (got.NormX.Mean[0] != 0 || got.NormY.Scale[0] != 1):
			t.Errorf("%s: %+v %+v, want the identity", tc.name, got.NormX, got.NormY)
		case tc.name == "round trip" && (got.NormX.Mean[0] != mf.NormX.Mean[0] || got.NormY.Scale[0] != mf.NormY.Scale[0]):
			t.Errorf("round trip: %+v %+v, want %+v %+v", got.NormX, got.NormY, mf.NormX, mf.NormY)
		}
	}
}

// integerModel returns an autoencoding model (Y = X) whose data are
// integers 0…255 in original units, normalised per column as viz fit does,
// with the normalisation as a model file's extra field; its last layer's
// q_sqrt has more than encodeAbove values (4 outputs × 465).
func integerModel(t testing.TB) (*engine.Model, map[string]json.RawMessage) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	m := engine.RandomModel(rng, 300, []int{4, 2, 4}, []string{"rbfiso", "rbf"}, 30)
	raw := mat.NewDense(300, 4, nil)
	for i := range 300 {
		for j := range 4 {
			raw.Set(i, j, float64(rng.IntN(256)))
		}
	}
	nz := dataset.FitNormalizer(raw)
	m.X, m.Y = nz.Apply(raw), nz.Apply(raw)
	return m, map[string]json.RawMessage{"normalization": NormalizationJSON(nz, nz), "dataset": json.RawMessage(`{"name":"pixels"}`)}
}

// legacyModelJSON writes m as model files were written before compact
// arrays: every array as rows of JSON numbers.
func legacyModelJSON(t testing.TB, m *engine.Model, extra map[string]json.RawMessage) []byte {
	t.Helper()
	out := map[string]any{"jitter": m.Jitter, "data": map[string]any{"X": MatrixRows(m.X), "Y": MatrixRows(m.Y)}}
	for k, v := range extra {
		out[k] = v
	}
	var layers []any
	for _, l := range m.Layers {
		lj := layerToJSON(l)
		lj.InducingInputs, lj.QMu = MatrixRows(l.InducingInputs), MatrixRows(l.QMu)
		var qs [][][]float64
		for _, s := range l.QSqrt {
			qs = append(qs, lowerRows(s))
		}
		lj.QSqrt = qs
		layers = append(layers, lj)
	}
	out["layers"] = layers
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameBits fails unless a and b hold the same float64s bit for bit.
func sameBits(t *testing.T, what string, a, b *mat.Dense) {
	t.Helper()
	ra, ca := a.Dims()
	rb, cb := b.Dims()
	if ra != rb || ca != cb {
		t.Fatalf("%s: %d×%d, want %d×%d", what, rb, cb, ra, ca)
	}
	for i := range ra {
		for j := range ca {
			if math.Float64bits(a.At(i, j)) != math.Float64bits(b.At(i, j)) {
				t.Fatalf("%s[%d][%d] = %v, want %v bit for bit", what, i, j, b.At(i, j), a.At(i, j))
			}
		}
	}
}

// sameModel fails unless a and b have the same data and parameters, bit
// for bit.
func sameModel(t *testing.T, a, b *engine.Model) {
	t.Helper()
	sameBits(t, "data.X", a.X, b.X)
	sameBits(t, "data.Y", a.Y, b.Y)
	pa, pb := a.Params(nil), b.Params(nil)
	if len(pa) != len(pb) {
		t.Fatalf("%d parameters, want %d", len(pb), len(pa))
	}
	for i := range pa {
		if math.Float64bits(pa[i]) != math.Float64bits(pb[i]) {
			t.Fatalf("parameter %d: %v, want %v bit for bit", i, pb[i], pa[i])
		}
	}
}

// TestModelFileCompact: a model with more than encodeAbove values in its
// arrays is written compactly — integer data in their original units as
// uint8, Y once as the same as X, q_sqrt's lower triangles in base64 — and
// reads back bit for bit: data, parameters, the bound, and the bytes when
// written again. The same model written the old way (JSON numbers) reads
// to the same model.
func TestModelFileCompact(t *testing.T) {
	m, extra := integerModel(t)
	var buf bytes.Buffer
	if err := WriteModel(&buf, m, extra); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Data struct {
			X, Y arrayJSON
		}
		Layers []struct {
			QSqrt json.RawMessage `json:"q_sqrt"`
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	x := doc.Data.X
	raw, err := base64.StdEncoding.DecodeString(x.Base64)
	if err == nil {
		var zr io.ReadCloser
		if zr, err = zlib.NewReader(bytes.NewReader(raw)); err == nil {
			raw, err = io.ReadAll(zr)
		}
	}
	if x.Dtype != "uint8" || x.Units != "original" || x.Compression != "zlib" || err != nil || len(raw) != 300*4 {
		t.Errorf("data.X stored as %s in units %q, compression %q, %d bytes (%v); want 1200 uint8s in original units, zlib", x.Dtype, x.Units, x.Compression, len(raw), err)
	}
	if doc.Data.Y.SameAs != "X" || doc.Data.Y.Base64 != "" {
		t.Errorf("data.Y = %+v, want same_as X alone", doc.Data.Y)
	}
	var last arrayJSON
	if err := json.Unmarshal(doc.Layers[1].QSqrt, &last); err != nil || last.Triangle != "lower" || last.Dtype != "float64" {
		t.Errorf("the last layer's q_sqrt %.80s…, want a compact lower triangle (%v)", doc.Layers[1].QSqrt, err)
	}
	if !bytes.HasPrefix(doc.Layers[0].QSqrt, []byte("[")) {
		t.Errorf("the first layer's q_sqrt (2 × 465 values) %.40s…, want rows of numbers", doc.Layers[0].QSqrt)
	}

	mf, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	sameModel(t, m, mf.Model)
	var compact bytes.Buffer
	json.Compact(&compact, mf.Extra["dataset"])
	if compact.String() != `{"name":"pixels"}` {
		t.Errorf("extra field %s, want it kept", mf.Extra["dataset"])
	}
	var again bytes.Buffer
	if err := WriteModel(&again, mf.Model, withNormalization(mf)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("writing a read model changed its bytes")
	}
	r1, _ := mustEval(t, m, engine.Options{})
	r2, _ := mustEval(t, mf.Model, engine.Options{})
	if math.Float64bits(r1.Bound) != math.Float64bits(r2.Bound) {
		t.Errorf("bound %v through the file, want %v bit for bit", r2.Bound, r1.Bound)
	}

	old, err := Read(bytes.NewReader(legacyModelJSON(t, m, extra)))
	if err != nil {
		t.Fatalf("the model as JSON numbers: %v", err)
	}
	sameModel(t, m, old.Model)
}

// withNormalization is mf's extra fields with its normalisation, as a
// writer passes them on.
func withNormalization(mf *File) map[string]json.RawMessage {
	extra := map[string]json.RawMessage{"normalization": NormalizationJSON(mf.NormX, mf.NormY)}
	for k, v := range mf.Extra {
		extra[k] = v
	}
	return extra
}

// TestModelFileDataForms: data are stored as integers only when every
// value re-normalises bit for bit, and in the smallest integer type that
// holds them; else as float64, exactly.
func TestModelFileDataForms(t *testing.T) {
	m, extra := integerModel(t)
	_, q := m.X.Dims()
	nz := dataset.Normalizer{Mean: make([]float64, q), Scale: make([]float64, q)}
	for j := range q {
		nz.Scale[j] = 1
	}
	raw := nz.UndoMean(m.X) // any matrix of the data's shape
	for _, tc := range []struct {
		name  string
		edit  func(raw *mat.Dense) // on integer data in original units
		dtype string
	}{
		{"0…255", func(a *mat.Dense) { a.Set(0, 0, 255) }, "uint8"},
		{"0…99", func(*mat.Dense) {}, "uint8"},
		{"negative", func(a *mat.Dense) { a.Set(0, 0, -3) }, "int8"},
		{"-200", func(a *mat.Dense) { a.Set(0, 0, -200) }, "int16"},
		{"40000", func(a *mat.Dense) { a.Set(0, 0, 40000) }, "uint16"},
		{"-40000", func(a *mat.Dense) { a.Set(0, 0, -40000) }, "int32"},
		{"3e9", func(a *mat.Dense) { a.Set(0, 0, 3e9) }, "float64"},
		{"a half", func(a *mat.Dense) { a.Set(5, 1, 7.5) }, "float64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range 300 {
				for j := range q {
					raw.Set(i, j, float64((i*7+j*13)%100))
				}
			}
			tc.edit(raw)
			nx := dataset.FitNormalizer(raw)
			m.X = nx.Apply(raw)
			extra["normalization"] = NormalizationJSON(nx, nx)
			m.Y = mat.DenseCopyOf(m.X)
			var buf bytes.Buffer
			if err := WriteModel(&buf, m, extra); err != nil {
				t.Fatal(err)
			}
			var doc struct{ Data struct{ X arrayJSON } }
			json.Unmarshal(buf.Bytes(), &doc)
			if doc.Data.X.Dtype != tc.dtype {
				t.Errorf("dtype %q, want %q", doc.Data.X.Dtype, tc.dtype)
			}
			mf, err := Read(&buf)
			if err != nil {
				t.Fatal(err)
			}
			sameModel(t, m, mf.Model)
		})
	}
	// A value one ulp from an integer's normalisation is not that integer.
	m, extra = integerModel(t)
	m.X.Set(3, 2, math.Nextafter(m.X.At(3, 2), 1))
	var buf bytes.Buffer
	WriteModel(&buf, m, extra)
	var doc struct{ Data struct{ X, Y arrayJSON } }
	json.Unmarshal(buf.Bytes(), &doc)
	if doc.Data.X.Dtype != "float64" || doc.Data.Y.Dtype != "uint8" {
		t.Errorf("one ulp off: X as %q, Y as %q; want float64 and uint8", doc.Data.X.Dtype, doc.Data.Y.Dtype)
	}
	mf, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	sameModel(t, m, mf.Model)
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}

// TestReadModelLimits: every limit is checked while the file is read, so
// a file beyond one is refused before the rest of it is read or held.
func TestReadModelLimits(t *testing.T) {
	rows := func(n int, row string) string {
		return `{"data": {"X": [` + strings.Repeat(row+",", n-1) + row + `], "Y": [[0]]}, "layers": []}`
	}
	layer := func(m int) string {
		return `{"kernel": {"type": "rbf", "variance": 1, "lengthscales": [1]}, "noise_variance": 0.1, "inducing_inputs": [` +
			strings.Repeat("[0.5],", m-1) + `[0.5]], "q_mu": [[0]], "q_sqrt": [[[1]]]}`
	}
	data := `"data": {"X": [[0], [1]], "Y": [[0], [1]]}`
	wideLayer := strings.Replace(strings.Replace(goodLayer, `"q_mu": [[0], [1]]`, `"q_mu": [[0, 0, 0], [1, 1, 1]]`, 1),
		`"q_sqrt": [[[1, 0], [0.1, 1]]]`, `"q_sqrt": [[[1, 0], [0.1, 1]], [[1, 0], [0.1, 1]], [[1, 0], [0.1, 1]]]`, 1)
	nextLayer := strings.Replace(goodLayer, `"lengthscales": [0.5]`, `"lengthscales": [0.5, 0.5, 0.5]`, 1)
	nextLayer = strings.Replace(nextLayer, `"inducing_inputs": [[0], [1]]`, `"inducing_inputs": [[0, 0, 0], [1, 1, 1]]`, 1)
	data3 := `"data": {"X": [[0], [1]], "Y": [[0, 0, 0], [1, 1, 1]]}`
	wideNext := strings.Replace(wideLayer, `"lengthscales": [0.5]`, `"lengthscales": [0.5, 0.5, 0.5]`, 1)
	wideNext = strings.Replace(wideNext, `"inducing_inputs": [[0], [1]]`, `"inducing_inputs": [[0, 0, 0], [1, 1, 1]]`, 1)
	const hugeB64 = 1 << 20
	compactX := `{"data": {"X": {"shape": [5000, 1], "dtype": "float64", "base64": "` + strings.Repeat("A", hugeB64) + `"}}}`
	for _, tc := range []struct {
		name     string
		body     string
		opt      ReadOptions
		want     string
		maxBytes int64 // read before the refusal (the scanner reads 64 KiB at a time)
	}{
		// 64 KiB + 4 bytes a row: the limit is met within the first window.
		{"rows", rows(1<<18, "[0]"), ReadOptions{MaxRows: 2000}, "the model's data has more rows than the limit of 2000 rows", 2 * scanBuffer},
		{"engine's rows", rows(engine.MaxData+1, "[0]"), ReadOptions{}, fmt.Sprintf("more rows than the limit of %d rows", engine.MaxData), 4*(engine.MaxData+1) + scanBuffer},
		{"columns", rows(2, "["+strings.Repeat("0,", 5000)+"0]"), ReadOptions{MaxColumns: 1000}, "the model's data has more columns than the limit of 1000 columns", 2 * scanBuffer},
		{"layers", `{` + data + `, "layers": [` + strings.Repeat(goodLayer+",", 6) + goodLayer + `, ` + strings.Repeat(" ", 1<<20) + `]}`,
			ReadOptions{MaxLayers: 6}, "the model has more layers than the limit of 6 layers", 2 * scanBuffer},
		{"inducing points", `{` + data + `, "layers": [` + layer(1400) + `]}`, ReadOptions{MaxInducing: 64}, "layer 1 has more inducing points than the limit of 64 inducing points", 2 * scanBuffer},
		{"outputs", `{` + data + `, "layers": [` + wideLayer + `, ` + nextLayer + `]}`, ReadOptions{MaxWidth: 2}, "layer 1 has more outputs than the limit of 2 outputs", 2 * scanBuffer},
		{"hidden width", `{` + data3 + `, "layers": [` + wideLayer + `, ` + wideNext + `]}`, ReadOptions{MaxWidth: 2}, "hidden layer 1 has width 3, more than the limit of 2", 2 * scanBuffer},
		{"compact shape", compactX, ReadOptions{MaxRows: 2000}, "the model's data has more rows than the limit of 2000 rows", 2 * scanBuffer},
		{"base64 longer than its shape", strings.Replace(compactX, "5000", "50", 1), ReadOptions{}, "data.X.base64 longer than 620 bytes", 2 * scanBuffer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr := &countingReader{r: strings.NewReader(tc.body)}
			_, err := ReadWith(cr, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if cr.n > tc.maxBytes {
				t.Errorf("read %d of %d bytes before refusing, want ≤ %d", cr.n, len(tc.body), tc.maxBytes)
			}
		})
	}
}

// TestScannerSize: the scanner refuses input beyond its size, however it
// is split (ReadWith says so in MiB: TestReadModelLimits' bodies are
// far below MaxBytes).
func TestScannerSize(t *testing.T) {
	body := `{"pad": "` + strings.Repeat(" ", 3*scanBuffer) + `"}`
	for _, max := range []int64{10, scanBuffer, int64(len(body)) - 1} {
		s := newJSONScanner(strings.NewReader(body), max)
		if err := s.skip(0); !errors.Is(err, errModelTooLarge) {
			t.Errorf("max %d: error %v, want errModelTooLarge", max, err)
		}
	}
	s := newJSONScanner(strings.NewReader(body), int64(len(body)))
	if err := s.skip(0); err != nil {
		t.Errorf("a body of exactly the maximum size: %v", err)
	}
}

// TestReadModelBudget: the budget is told the bytes held before every
// large allocation, its error is returned as it is, and a hostile file of
// rows within every other limit holds at most a few times its size.
func TestReadModelBudget(t *testing.T) {
	body := `{"data": {"X": [` + strings.Repeat("[0],", 1<<20) + `[0]], "Y": [[0]]}, "layers": []}` // 4 MiB
	var peak int64
	errBudget := errors.New("over budget")
	opt := ReadOptions{MaxRows: 1 << 30, Budget: func(b int64) error {
		peak = max(peak, b)
		return nil
	}}
	if _, err := ReadWith(strings.NewReader(body), opt); err == nil || !strings.Contains(err.Error(), "X has 1048577 rows but Y has 1") {
		t.Fatalf("error %v, want the rows' mismatch", err)
	}
	// 8 MiB of float64s (2 bytes for each byte of "[0],"), held twice
	// while the chunks they were read into are copied into one matrix.
	if peak > 4*int64(len(body))+(1<<20) || peak < 8*(1<<20) {
		t.Errorf("peak %d bytes held for a body of %d bytes, want 8 MiB … 4× the body", peak, len(body))
	}
	opt.Budget = func(b int64) error {
		if b > 1<<20 {
			return errBudget
		}
		return nil
	}
	if _, err := ReadWith(strings.NewReader(body), opt); !errors.Is(err, errBudget) || err.Error() != errBudget.Error() {
		t.Errorf("error %v, want the budget's own", err)
	}
	m, extra := integerModel(t)
	var buf bytes.Buffer
	WriteModel(&buf, m, extra)
	if _, err := ReadWith(bytes.NewReader(buf.Bytes()), opt); err != nil {
		t.Errorf("a compact model within the budget: %v", err)
	}
}

// TestReadModelSyntax: text that is not JSON is refused, saying where;
// JSON of the wrong kind names the field; fields other than the model's
// are kept verbatim.
func TestReadModelSyntax(t *testing.T) {
	data := `"data": {"X": [[0], [0.5], [1]], "Y": [[0], [1], [1]]}`
	model := `{` + data + `, "layers": [` + goodLayer + `]}`
	for _, tc := range []struct{ name, json, want string }{
		{"trailing text", model + ` x`, `unexpected "x" after the end of the model`},
		{"two objects", model + model, "after the end of the model"},
		{"unterminated string", `{"a": "abc`, "the file ends inside a string"},
		{"bad escape", `{"a": "\q"}`, `an unknown escape \q`},
		{"leading zero", `{"jitter": 01}`, `"01" is not a number`},
		{"lone minus", `{"jitter": -}`, `"-" is not a number`},
		{"huge number", `{"jitter": 1e999}`, "the number 1e999 is out of range"},
		{"no quotes", `{jitter: 1}`, "expected a field name in quotes"},
		{"missing colon", `{"jitter" 1}`, "expected : after a field name"},
		{"missing comma", `{"jitter": 1 "data": 2}`, "expected , or } after a field"},
		{"deep", `{"a": ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, "nested more than 64 deep"},
		{"control character", "{\"a\": \"x\ty\"}", "a control character inside a string"},
		{"not utf-8", "{\"a\": \"\xff\"}", "is not valid UTF-8"},
		{"two data fields", `{` + data + `, ` + data + `}`, `two "data" fields`},
		{"wrong kind", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `"noise_variance": 0.01`, `"noise_variance": "small"`, 1) + `]}`,
			"layer 1: noise_variance: expected a number, found a string"},
		{"row of strings", `{"data": {"X": [[0], ["a"]]}}`, "data.X[1][0]: expected a number, found a string"},
		{"not an object", `[1]`, "expected an object {…}, found an array"},
		{"empty", ``, "the file ends too early"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	extra := `{"note": "caf\u00e9 \ud83d\ude00 \"q\"", "list": [1, 2.5e-3, true, null, {"a": []}]}`
	mf, err := Read(strings.NewReader(`{"extra": ` + extra + `, ` + data + `, "layers": [` + goodLayer + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(mf.Extra["extra"]) != extra {
		t.Errorf("extra field %s, want %s verbatim", mf.Extra["extra"], extra)
	}
}

// TestReadModelCompactErrors: compact arrays whose binary does not match
// their shape, type or compression are refused, naming the field; a
// compressed array that claims more memory than the reader may take is
// refused before it is inflated.
func TestReadModelCompactErrors(t *testing.T) {
	zlibOf := func(b []byte) string {
		var buf bytes.Buffer
		zw := zlib.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return base64.StdEncoding.EncodeToString(buf.Bytes())
	}
	x := func(shape, dtype, extra, b64 string) string {
		return `{"data": {"X": {"shape": ` + shape + `, "dtype": "` + dtype + `"` + extra + `, "base64": "` + b64 + `"}, "Y": [[0], [1]]}}`
	}
	two := make([]byte, 16) // two float64 zeros
	corrupt := []byte(zlibOf(two))
	corrupt[len(corrupt)-6] ^= 1
	for _, tc := range []struct{ name, json, want string }{
		{"plain, short", x("[2, 1]", "float64", "", base64.StdEncoding.EncodeToString(two[:8])), "data.X.base64: 12 characters, want 24 for shape [2 1] of float64"},
		{"not base64", x("[2, 1]", "float64", "", strings.Repeat("*", 24)), "data.X.base64: not valid base64"},
		{"zlib, more", x("[2, 1]", "float64", `, "compression": "zlib"`, zlibOf(make([]byte, 24))), "data.X.base64: not valid zlib data for its shape (more than 16 bytes)"},
		{"zlib, fewer", x("[2, 1]", "float64", `, "compression": "zlib"`, zlibOf(two[:8])), "data.X.base64: not valid zlib data for its shape (fewer than 16 bytes)"},
		{"zlib, corrupt", x("[2, 1]", "float64", `, "compression": "zlib"`, string(corrupt)), "data.X.base64: not valid zlib data"},
		{"zlib, not zlib", x("[2, 1]", "float64", `, "compression": "zlib"`, base64.StdEncoding.EncodeToString(two)), "data.X.base64: not valid zlib data"},
		{"unknown compression", x("[2, 1]", "float64", `, "compression": "gzip"`, zlibOf(two)), `data.X.compression: "gzip": want "zlib" or none`},
		{"unknown dtype", x("[2, 1]", "float32", "", zlibOf(two)), `data.X.dtype: "float32" is not float64`},
		{"shape rank", x("[2]", "float64", "", zlibOf(two)), "data.X.shape: want 2 extents, found 1"},
		{"shape zero", x("[0, 1]", "float64", "", zlibOf(two)), "data.X.shape[0]: 0 is not a whole number ≥ 1"},
		{"triangle on data", x("[2, 1]", "float64", `, "triangle": "lower"`, base64.StdEncoding.EncodeToString(two)), `data.X.triangle: "lower": only q_sqrt may be "lower"`},
		{"bomb", x("[1000000, 1000]", "float64", `, "compression": "zlib"`, zlibOf(two)), "the model file needs more than 4 GiB of memory"},
		{"not finite", `{"data": {"X": {"shape": [2, 1], "dtype": "float64", "base64": "AAAAAAAA+H8AAAAAAAAAAA=="}, "Y": [[0], [1]]}, "layers": [` + goodLayer + `]}`, "data.X[0][0]: NaN is not finite"},
		{"same_as X in X", `{"data": {"X": {"same_as": "X"}}}`, "data.X: same_as"},
		{"data set in a layer", `{"layers": [{"q_mu": {"shape": [2, 1], "units": "original", "data_set": {"name": "frey"}}}]}`, "layer 1: q_mu: only data may refer to a data set"},
		{"data set with values", x("[2, 1]", "float64", `, "units": "original", "data_set": {"name": "frey"}`, zlibOf(two)), "data.X: an array that refers to a data set holds no values of its own"},
		{"data set, normalised", `{"data": {"X": {"shape": [2, 1], "data_set": {"name": "frey"}}}}`, `data.X: a data set's values are in original units: want "units": "original"`},
		{"units on a layer", `{"layers": [{"q_mu": {"shape": [2, 1], "dtype": "float64", "units": "original", "base64": "` + base64.StdEncoding.EncodeToString(two) + `"}}]}`, `layer 1: q_mu.units: "original": only data may be "original"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestWriteModelFileStreamsData: the data's arrays, streamed into the file
// as it is written, are what the eager encoding gives (zlibBase64 of the
// values), no token is left, and the file reads back to the same data.
func TestWriteModelFileStreamsData(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 17))
	m := engine.RandomModel(rng, 3000, []int{2, 2, 3}, []string{"rbf", "rbf"}, 5)
	var buf bytes.Buffer
	if err := Write(&buf, &File{Model: m}); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte("@@stream-")) {
		t.Fatal("a stream's token is left in the file")
	}
	var doc struct {
		Data struct{ X, Y arrayJSON } `json:"data"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		got  string
		a    *mat.Dense
	}{{"X", doc.Data.X.Base64, m.X}, {"Y", doc.Data.Y.Base64, m.Y}} {
		r, cols := c.a.Dims()
		if want := float64JSON(linalg.Flatten(nil, c.a), r, cols).Base64; c.got != want {
			t.Errorf("data.%s: the streamed base64 (%d bytes) is not the eager one (%d bytes)", c.name, len(c.got), len(want))
		}
	}
	back, err := ReadWith(bytes.NewReader(buf.Bytes()), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(back.Model.X, m.X) || !mat.Equal(back.Model.Y, m.Y) {
		t.Error("the data read back differ")
	}
}

// TestRBFIsoModelFile checks that a model with isotropic RBF layers goes
// through a model file unchanged, and that a file missing the lengthscale
// is refused.
func TestRBFIsoModelFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := engine.RandomModel(rng, 8, []int{4, 2, 4}, []string{"rbfiso", "rbf"}, 3)
	var buf bytes.Buffer
	if err := WriteModel(&buf, m, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"type": "rbfiso"`) {
		t.Fatalf("no rbfiso kernel in the file:\n%s", buf.String())
	}
	mf, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := mf.Model.Layers[0].Kernel.(*engine.RBFIso); !ok {
		t.Fatalf("read kernel %T, want *engine.RBFIso", mf.Model.Layers[0].Kernel)
	}
	r1, _ := mustEval(t, m, engine.Options{})
	r2, _ := mustEval(t, mf.Model, engine.Options{})
	if r1.Bound != r2.Bound {
		t.Errorf("bound changed through the file: %v → %v", r1.Bound, r2.Bound)
	}
	bad := strings.Replace(buf.String(), `"lengthscale"`, `"lengthscalex"`, 1)
	if _, err := Read(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "lengthscale") {
		t.Errorf("file without the lengthscale: err = %v", err)
	}
}
