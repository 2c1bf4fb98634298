package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

func TestModelFileRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := RandomModel(rng, 7, []int{2, 3, 1}, []string{"linear", "rbf"}, 3)
	extra := map[string]json.RawMessage{"dataset": json.RawMessage(`"step"`)}
	var buf bytes.Buffer
	if err := WriteModel(&buf, m, extra); err != nil {
		t.Fatal(err)
	}
	mf, err := ReadModel(bytes.NewReader(buf.Bytes()))
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
	r1, _ := mustEval(t, m, Options{})
	r2, _ := mustEval(t, mf.Model, Options{})
	if r1.Bound != r2.Bound {
		t.Errorf("bound changed through the file: %v → %v", r1.Bound, r2.Bound)
	}
}

const goodLayer = `{"kernel": {"type": "rbf", "variance": 1.0, "lengthscales": [0.5]},
 "noise_variance": 0.01, "inducing_inputs": [[0], [1]], "q_mu": [[0], [1]],
 "q_sqrt": [[[1, 0], [0.1, 1]]]}`

func TestReadModelErrors(t *testing.T) {
	data := `"data": {"X": [[0], [0.5], [1]], "Y": [[0], [1], [1]]}`
	cases := []struct {
		name, json, want string
	}{
		{"not json", `{`, "not valid JSON"},
		{"no layers", `{` + data + `, "layers": []}`, "no layers"},
		{"ragged X", `{"data": {"X": [[0], [0, 1]], "Y": [[0], [1]]}, "layers": [` + goodLayer + `]}`, "data.X[1]"},
		{"X/Y rows", `{"data": {"X": [[0], [1]], "Y": [[0]]}, "layers": [` + goodLayer + `]}`, "Y has 1"},
		{"negative variance", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `"variance": 1.0`, `"variance": -1`, 1) + `]}`, "layer 0: kernel.variance"},
		{"zero lengthscale", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `[0.5]`, `[0]`, 1) + `]}`, "layer 0: kernel.lengthscales[0]"},
		{"negative noise", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `0.01`, `-0.01`, 1) + `]}`, "layer 0: noise_variance"},
		{"unknown kernel", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `"rbf"`, `"matern"`, 1) + `]}`, "layer 0: kernel.type"},
		{"q_mu rows", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `"q_mu": [[0], [1]]`, `"q_mu": [[0]]`, 1) + `]}`, "layer 0: q_mu: 1 rows, want 2"},
		{"q_sqrt count", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `"q_sqrt": [[[1, 0], [0.1, 1]]]`, `"q_sqrt": []`, 1) + `]}`, "layer 0: q_sqrt: 0 matrices"},
		{"q_sqrt zero diagonal", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `[0.1, 1]`, `[0.1, 0]`, 1) + `]}`, "layer 0: q_sqrt[0][1][1]"},
		{"lengthscale count", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `[0.5]`, `[0.5, 1]`, 1) + `]}`, "layer 0: kernel"},
		{"output width", `{` + data + `, "layers": [` + strings.Replace(strings.Replace(goodLayer, `"q_mu": [[0], [1]]`, `"q_mu": [[0, 1], [1, 0]]`, 1), `"q_sqrt": [[[1, 0], [0.1, 1]]]`, `"q_sqrt": [[[1, 0], [0.1, 1]], [[1, 0], [0, 1]]]`, 1) + `]}`, "Y has 1"},
		{"NaN literal", `{` + data + `, "layers": [` + strings.Replace(goodLayer, `0.01`, `NaN`, 1) + `]}`, "not valid JSON"},
		{"negative jitter", `{"jitter": -1, ` + data + `, "layers": [` + goodLayer + `]}`, "jitter"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadModel(strings.NewReader(tc.json))
			if err == nil {
				t.Fatalf("accepted; want error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "engine: ") {
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
	mf, err := ReadModel(strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Evaluate(mf.Model, Options{Gradient: true})
	if !errors.Is(err, ErrNotPositiveDefinite) || !strings.Contains(err.Error(), "layer 0: inducing_inputs") {
		t.Errorf("error %v, want ErrNotPositiveDefinite naming layer 0", err)
	}
}

// TestModelFileNormalization checks the model file's one normalisation
// reader: absent means the identity, NormalizationJSON round-trips, and
// wrong lengths or invalid scales are errors naming the field.
func TestModelFileNormalization(t *testing.T) {
	b, err := os.ReadFile("testdata/step3_fitted.json")
	if err != nil {
		t.Fatal(err)
	}
	mf, err := ReadModel(bytes.NewReader(b))
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
		got, err := ReadModel(bytes.NewReader(raw))
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
