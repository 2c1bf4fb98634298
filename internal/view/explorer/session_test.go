package explorer_test

import (
	"testing"

	"dgpviz/internal/admit"
	"dgpviz/internal/stream"
	"dgpviz/internal/stream/streamtest"
)

// newEnv serves sessions with the default limits and configuration on the
// default data sets and "squares" (mutate changes the options first), with
// a 300-iteration baseline: the full one costs ~20 s of CPU under -race
// beside the tests that measure timings.
func newEnv(t testing.TB, mutate func(*stream.Options)) *streamtest.Env[*stream.Server] {
	t.Helper()
	l := admit.DefaultLimits()
	return streamtest.New(t, stream.Options{Limits: l, Defaults: admit.DefaultConfig(), Workers: 1, BaselineIters: 300, Catalog: streamtest.Catalog(t, l.MaxRows)}, mutate, stream.NewServer)
}

// robotEnv serves the robot data (streamtest.RobotData) besides.
func robotEnv(t testing.TB) *streamtest.Env[*stream.Server] {
	ds := streamtest.RobotData(t)
	return newEnv(t, func(o *stream.Options) {
		if err := o.Catalog.Add(ds, o.Limits.MaxRows); err != nil {
			t.Fatal(err)
		}
	})
}
