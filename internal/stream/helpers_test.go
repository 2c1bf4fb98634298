package stream

import (
	"testing"

	"dgpviz/internal/admit"
	"dgpviz/internal/stream/streamtest"
)

// testEnv is a served session server.
type testEnv = streamtest.Env[*Server]

func newEnv(t testing.TB, mutate func(*Options)) *testEnv {
	t.Helper()
	l := admit.DefaultLimits()
	// A 300-iteration baseline: the full one costs ~20 s of CPU under
	// -race beside the tests that measure timings.
	return streamtest.New(t, Options{Limits: l, Defaults: admit.DefaultConfig(), Workers: 1, BaselineIters: 300, Catalog: streamtest.Catalog(t, l.MaxRows)}, mutate, NewServer)
}
