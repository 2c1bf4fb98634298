package autoencoder_test

import (
	"path/filepath"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/stream"
	"dgpviz/internal/stream/streamtest"
	"dgpviz/internal/wire"
)

// freyFixture is the generated Frey fixture of the dataset package (60
// synthetic frames of 28 × 20 grey levels).
var freyFixture = filepath.Join("..", "..", "dataset", "testdata", "frey_small.mat")

// freyWait is how long the Frey tests wait for a setup, a frame or an
// answer: the preset's restarts on the fixture take seconds, and a minute
// under -race on a busy 2-core machine.
const freyWait = 90 * time.Second

// freyRealPath is the paper's data, when present.
var freyRealPath = filepath.Join("..", "..", "..", "..", "shared", "data", "frey_faces", "frey_rawface.mat")

// newEnv serves sessions with the default limits and configuration on the
// default data sets and "squares" (mutate changes the options first).
func newEnv(t testing.TB, mutate func(*stream.Options)) *streamtest.Env[*stream.Server] {
	t.Helper()
	l := admit.DefaultLimits()
	return streamtest.New(t, stream.Options{Limits: l, Defaults: admit.DefaultConfig(), Workers: 1, Catalog: streamtest.Catalog(t, l.MaxRows)}, mutate, stream.NewServer)
}

// freyEnv serves the Frey faces at path besides, with the session budget
// their preset needs (admit.PresetLimits).
func freyEnv(t testing.TB, path string, mutate ...func(*stream.Options)) *streamtest.Env[*stream.Server] {
	t.Helper()
	ds, err := dataset.LoadFrey(path)
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, func(o *stream.Options) {
		if err := o.Catalog.Add(ds, o.Limits.MaxRows); err != nil {
			t.Fatal(err)
		}
		o.Limits = admit.PresetLimits(o.Limits, o.Catalog)
		for _, m := range mutate {
			m(o)
		}
	})
}

// decode sends a decode command and returns the decoded message or the
// error reply.
func decode(c *streamtest.Client, cmd map[string]any) (wire.Decoded, map[string]any) {
	cmd["op"] = "decode"
	return c.Answer(c.Send(cmd), "decoded", freyWait)
}
