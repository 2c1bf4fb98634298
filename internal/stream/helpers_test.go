package stream

import (
	"fmt"
	"math"
	"net/http/httptest"
	"testing"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/stream/streamtest"

	"gonum.org/v1/gonum/mat"
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

// wideDataset is robot-shaped synthetic data: n scans in time, d smooth
// signals.
func wideDataset(n, d int) *dataset.Dataset {
	x := mat.NewDense(n, 1, nil)
	y := mat.NewDense(n, d, nil)
	names := make([]string, d)
	for j := range d {
		names[j] = fmt.Sprintf("ap%d", j)
	}
	for i := range n {
		t := float64(i)
		x.Set(i, 0, t)
		for j := range d {
			y.Set(i, j, math.Sin(t/20+float64(j))+0.1*math.Cos(t*float64(j+1)))
		}
	}
	return &dataset.Dataset{Name: "wide", Description: "synthetic robot-shaped data", X: x, Y: y, InputNames: []string{"time"}, OutputNames: names}
}
