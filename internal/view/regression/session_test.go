package regression_test

import (
	"testing"

	"dgpviz/internal/admit"
	"dgpviz/internal/stream"
	"dgpviz/internal/stream/streamtest"
)

// newEnv serves sessions with the default limits and configuration on the
// default data sets and "squares" (mutate changes the options first).
func newEnv(t testing.TB, mutate func(*stream.Options)) *streamtest.Env[*stream.Server] {
	t.Helper()
	l := admit.DefaultLimits()
	o := stream.Options{Limits: l, Defaults: admit.DefaultConfig(), Workers: 1, Catalog: streamtest.Catalog(t, l.MaxRows)}
	if mutate != nil {
		mutate(&o)
	}
	srv, err := stream.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	return streamtest.Start(t, srv)
}
