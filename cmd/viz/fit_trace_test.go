package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"dgpviz/internal/dataset"
)

// TestFitTrace: viz fit -trace writes a row at every check of a
// stochastic fit, its clocks never run backwards, and its last row's
// held-out RMSE is the one viz latent computes, independently, from the
// model file the fit wrote (the fit ends at its best check).
func TestFitTrace(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "walk.csv")
	f, err := os.Create(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := dataset.WriteWalkCSV(f, 1200, 2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	trace, model := filepath.Join(dir, "trace.csv"), filepath.Join(dir, "m.json")
	// 1,080 training rows in batches of 100: a check every 20 steps
	// (-window), 10 in 200 steps.
	args := []string{"fit", "-data", data, "-fit", "stochastic", "-batch", "100", "-window", "20", "-iters", "200",
		"-hidden", "2", "-inducing", "8", "-restarts", "1", "-quiet", "-trace", trace, "-out", model}
	var stderr bytes.Buffer
	if err := run(context.Background(), args, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("viz %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	tf, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	recs, err := csv.NewReader(tf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 11 || !slices.Equal(recs[0], fitTraceHeader) {
		t.Fatalf("trace has %d lines, header %v; want 11, %v", len(recs), recs[0], fitTraceHeader)
	}
	prev := make([]float64, len(fitTraceHeader))
	var last float64
	for i, r := range recs[1:] {
		v := make([]float64, len(r))
		for j, s := range r {
			if v[j], err = strconv.ParseFloat(s, 64); err != nil || math.IsNaN(v[j]) {
				t.Fatalf("row %d: column %s is %q", i+1, fitTraceHeader[j], s)
			}
		}
		if v[0] != float64(20*(i+1)) {
			t.Errorf("row %d: iteration %v, want %d", i+1, v[0], 20*(i+1))
		}
		for _, j := range []int{1, 2, 3} { // epochs, CPU, wall
			if v[j] < prev[j] {
				t.Errorf("row %d: %s %v after %v", i+1, fitTraceHeader[j], v[j], prev[j])
			}
		}
		if i > 0 && v[4] < prev[4] {
			t.Errorf("row %d: best checked bound %v fell from %v", i+1, v[4], prev[4])
		}
		prev, last = v, v[5]
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"latent", "-model", model, "-data", "csv:" + data, "-gp-iters", "0"}, &out, &stderr); err != nil {
		t.Fatalf("viz latent: %v\n%s", err, stderr.String())
	}
	var lj struct {
		HeldOut struct {
			RMSE *float64 `json:"rmse"`
		} `json:"held_out"`
	}
	if err := json.Unmarshal(out.Bytes(), &lj); err != nil || lj.HeldOut.RMSE == nil {
		t.Fatalf("viz latent's output %s: %v", out.String(), err)
	}
	if got := *lj.HeldOut.RMSE; math.Abs(got-last) > 1e-6*got {
		t.Errorf("trace's last held-out RMSE %.9g, viz latent's of the written model %.9g", last, got)
	}

	// A full-batch fit has no checks to trace.
	err = run(context.Background(), []string{"fit", "-data", data, "-fit", "full", "-trace", trace, "-quiet", "-out", model}, &bytes.Buffer{}, &bytes.Buffer{})
	var ue usageError
	if err == nil || !strings.Contains(err.Error(), "-fit stochastic") || !errors.As(err, &ue) {
		t.Errorf("-trace of a full-batch fit: %v; want a usage error naming -fit stochastic", err)
	}
}
