package stream

import (
	"net/http/httptest"
	"testing"

	"dgpviz/internal/admit"
	"dgpviz/internal/stream/streamtest"
)

type testEnv struct {
	srv  *Server
	http *httptest.Server
	url  string // ws://…/ws
}

func newEnv(t testing.TB, mutate func(*Options)) *testEnv {
	t.Helper()
	l := admit.DefaultLimits()
	// A 300-iteration baseline: the full one costs ~20 s of CPU under
	// -race beside the tests that measure timings.
	o := Options{Limits: l, Defaults: admit.DefaultConfig(), Workers: 1, BaselineIters: 300}
	o.Catalog = streamtest.Catalog(t, l.MaxRows)
	if mutate != nil {
		mutate(&o)
	}
	srv, err := NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	url, hs := streamtest.Serve(t, srv)
	return &testEnv{srv: srv, http: hs, url: url}
}

func (e *testEnv) dial(t testing.TB, query string) *streamtest.Client {
	t.Helper()
	return streamtest.Dial(t, e.url, query)
}
