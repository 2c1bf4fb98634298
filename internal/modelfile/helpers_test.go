package modelfile

import (
	"testing"

	"dgpviz/internal/engine"
)

func mustEval(t testing.TB, m *engine.Model, opt engine.Options) (*engine.Result, *engine.Gradient) {
	t.Helper()
	r, g, err := engine.Evaluate(m, opt)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	return r, g
}
