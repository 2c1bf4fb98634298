package autoencoder_test

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
	return streamtest.New(t, stream.Options{Limits: l, Defaults: admit.DefaultConfig(), Workers: 1, Catalog: streamtest.Catalog(t, l.MaxRows)}, mutate, stream.NewServer)
}

// freyEnv serves the Frey faces at path besides, with the session budget
// their preset needs (streamtest.AddFrey).
func freyEnv(t testing.TB, path string, mutate ...func(*stream.Options)) *streamtest.Env[*stream.Server] {
	t.Helper()
	return newEnv(t, func(o *stream.Options) {
		o.Limits = streamtest.AddFrey(t, path, o.Catalog, o.Limits)
		for _, m := range mutate {
			m(o)
		}
	})
}
