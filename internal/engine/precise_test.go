package engine

import (
	"errors"
	"strings"
	"testing"
)

// TestPrecise: a layer's KL, compression and propagation are never
// negative; rounding may take a total a little below zero (impreciseBelow,
// −1 nat), anything further is a lost precision that names its layer,
// counted from 1, and term.
func TestPrecise(t *testing.T) {
	for _, c := range []struct {
		name  string
		terms []LayerTerms
		want  string // "" for no error
	}{
		{"all zero", []LayerTerms{{}, {}}, ""},
		{"rounding below zero", []LayerTerms{{KL: -1e-9, Compression: -0.5}, {Propagation: -0.999}}, ""},
		{"at the limit", []LayerTerms{{Propagation: -1}}, ""},
		{"the step model's propagation", []LayerTerms{{KL: 125.3}, {KL: 46124.4, Compression: 0.16, Propagation: -242933.3}}, "layer 2's propagation"},
		{"a KL", []LayerTerms{{KL: -1.5}}, "layer 1's KL"},
		{"a compression", []LayerTerms{{}, {}, {Compression: -3}}, "layer 3's compression"},
	} {
		err := (&Result{Layers: c.terms}).Precise()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !errors.Is(err, ErrImprecise) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an ErrImprecise naming %q", c.name, err, c.want)
		}
	}
}

// TestFittedModelsPrecise: the models a person loads and the fits the
// tests use are far from the limit, so Precise never rejects a point of an
// ordinary fit.
func TestFittedModelsPrecise(t *testing.T) {
	for _, path := range []string{"testdata/step2_fitted.json", "testdata/step3_fitted.json", "testdata/step3_stalled.json"} {
		mf, err := readFixture(path)
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := Evaluate(mf.Model, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Precise(); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}
