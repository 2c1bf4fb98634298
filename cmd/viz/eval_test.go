package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tinyModel is a 2-layer model file small enough to check by hand: 3 data,
// 2 inducing points per layer.
const tinyModel = `{"jitter": 1e-6,
 "data": {"X": [[0], [0.5], [1]], "Y": [[0.1], [0.9], [1.0]]},
 "layers": [
  {"kernel": {"type": "rbf", "variance": 1.0, "lengthscales": [0.5]}, "noise_variance": 0.01,
   "inducing_inputs": [[0.2], [0.8]], "q_mu": [[-0.5], [0.6]], "q_sqrt": [[[0.1, 0], [0.02, 0.1]]]},
  {"kernel": {"type": "linear", "variances": [1.5]}, "noise_variance": 0.05,
   "inducing_inputs": [[-1], [1]], "q_mu": [[-0.4], [0.5]], "q_sqrt": [[[0.2], [0.05, 0.2]]]}]}`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEvalPrintsBoundMessagesGradient(t *testing.T) {
	path := writeFile(t, "m.json", tinyModel)
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"eval", "-model", path}, &out, &errb); err != nil {
		t.Fatalf("eval: %v (%s)", err, errb.String())
	}
	var got evalJSON
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	if len(got.Layers) != 2 || len(got.Messages) != 2 || len(got.Gradient.Layers) != 2 {
		t.Fatalf("want 2 layers of terms, messages and gradients, got %d %d %d", len(got.Layers), len(got.Messages), len(got.Gradient.Layers))
	}
	// The bound is the likelihood less every layer's three penalties.
	want := got.Likelihood
	for i, l := range got.Layers {
		want -= l.KL + l.Compression + l.Propagation
		if len(l.CompressionPerDatum) != 3 || len(l.PropagationPerDatum) != 3 {
			t.Errorf("layer %d: per-datum arrays of length %d, %d; want 3", i, len(l.CompressionPerDatum), len(l.PropagationPerDatum))
		}
		var sum float64
		for _, c := range l.CompressionPerDatum {
			sum += c
		}
		// 1e-8 nats: the total comes from whitened sums, the per-datum
		// values from the per-datum loop (engine.LayerTerms); on this model
		// they differ by 2.2e-9 nats, a cancellation error of ψ0 − ‖v‖².
		if math.Abs(sum-l.Compression) > 1e-8 {
			t.Errorf("layer %d: per-datum compression sums to %v, total %v", i, sum, l.Compression)
		}
	}
	if math.Abs(want-got.Bound) > 1e-9 {
		t.Errorf("bound %v, likelihood − penalties %v", got.Bound, want)
	}
	if got.Layers[0].Propagation != 0 {
		t.Errorf("layer 0 propagation %v: the input X is certain, want exactly 0", got.Layers[0].Propagation)
	}
	// Message shapes: N × D(i); the first layer's variance is the noise plus
	// the q(u) part, so it exceeds the noise variance 0.01.
	if len(got.Messages[0].Mean) != 3 || len(got.Messages[1].Var[2]) != 1 || got.Messages[0].Var[1][0] <= 0.01 {
		t.Errorf("unexpected messages %+v", got.Messages)
	}
	if q := got.Gradient.Layers[0].QSqrt[0]; q[0][1] != 0 {
		t.Errorf("q_sqrt gradient above the diagonal %v, want 0", q[0][1])
	}
	if _, ok := got.Gradient.Layers[1].Kernel["variances"]; !ok {
		t.Errorf("linear kernel gradient lacks variances: %v", got.Gradient.Layers[1].Kernel)
	}
}

func TestEvalBadInput(t *testing.T) {
	cases := []struct {
		name, content, want string
	}{
		{"malformed", `{"data": `, "not valid JSON"},
		{"negative noise", strings.Replace(tinyModel, `"noise_variance": 0.05`, `"noise_variance": -0.05`, 1), "layer 2: noise_variance"},
		{"shape", strings.Replace(tinyModel, `"inducing_inputs": [[-1], [1]]`, `"inducing_inputs": [[-1, 0], [1, 0]]`, 1), "layer 2: kernel"},
		// 1/s² overflows: a clear error naming what is not finite, not
		// "json: unsupported value: +Inf".
		{"tiny noise", strings.Replace(tinyModel, `"noise_variance": 0.05`, `"noise_variance": 1e-300`, 1), "is not finite"},
		{"singular Kuu", strings.Replace(strings.Replace(tinyModel, `[[0.2], [0.8]]`, `[[0.5], [0.5]]`, 1), `"jitter": 1e-6`, `"jitter": 0`, 1), "layer 1: inducing_inputs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "m.json", tc.content)
			var out, errb bytes.Buffer
			err := run(context.Background(), []string{"eval", "-model", path}, &out, &errb)
			if err == nil {
				t.Fatal("accepted")
			}
			if code := exitCode(err, &errb); code != 2 {
				t.Errorf("exit status %d, want 2", code)
			}
			msg := errb.String()
			if !strings.Contains(msg, tc.want) || strings.Count(strings.TrimSpace(msg), "\n") != 0 {
				t.Errorf("stderr %q, want one line containing %q", msg, tc.want)
			}
			if out.Len() != 0 {
				t.Errorf("stdout not empty: %q", out.String())
			}
		})
	}
	var errb bytes.Buffer
	if code := exitCode(run(context.Background(), []string{"eval"}, &bytes.Buffer{}, &errb), &errb); code != 2 {
		t.Errorf("eval without -model: exit %d, want 2", code)
	}
	errb.Reset()
	if code := exitCode(run(context.Background(), []string{"eval", "-model", "/nonexistent.json"}, &bytes.Buffer{}, &errb), &errb); code != 2 {
		t.Errorf("missing file: exit %d, want 2", code)
	}
}
