package montecarlo

import (
	"testing"

	"dgpviz/internal/engine"
)

func mustLayer(t testing.TB, l *engine.Layer, jitter float64) *Layer {
	t.Helper()
	ly, err := NewLayer(l, jitter)
	if err != nil {
		t.Fatalf("NewLayer: %v", err)
	}
	return ly
}
