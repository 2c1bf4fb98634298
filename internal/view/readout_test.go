package view

import (
	"encoding/json"
	"math"
	"testing"

	"dgpviz/internal/engine"
	"dgpviz/internal/train"
)

// TestTermsOf: the readout's terms are the evaluation's, layer by layer,
// with a term that is not a number sent as null; no evaluation, no terms.
func TestTermsOf(t *testing.T) {
	if BoundTermsOf(nil) != nil {
		t.Fatal("terms without an evaluation")
	}
	ev := &train.Evaluation{Bound: -3.5, Likelihood: -1, Layers: []engine.LayerTerms{{KL: 0.5, Compression: 1, Propagation: 0.25}, {KL: 0.75, Compression: math.NaN(), Propagation: 0}}}
	b, err := json.Marshal(BoundTermsOf(ev))
	want := `{"bound":-3.5,"likelihood":-1,"kl":[0.5,0.75],"compression":[1,null],"propagation":[0.25,0]}`
	if err != nil || string(b) != want {
		t.Errorf("terms %s (%v), want %s", b, err, want)
	}
}
