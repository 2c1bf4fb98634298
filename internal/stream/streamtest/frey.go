package streamtest

import (
	"path/filepath"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/wire"
)

// FreyWait is how long the Frey tests wait for a setup, a frame or an
// answer: the preset's restarts on the fixture take seconds, and a minute
// under -race on a busy 2-core machine.
const FreyWait = 90 * time.Second

// FreyFixture returns the path of the generated Frey fixture of the
// dataset package (60 synthetic frames of 28 × 20 grey levels).
func FreyFixture(t testing.TB) string {
	return filepath.Join(Root(t), "internal", "dataset", "testdata", "frey_small.mat")
}

// FreyReal returns the path of the paper's Frey faces (../shared beside
// the checkout), which may be absent.
func FreyReal(t testing.TB) string {
	return filepath.Join(Root(t), "..", "shared", "data", "frey_faces", "frey_rawface.mat")
}

// AddFrey adds the Frey faces at path to cat and returns l with the
// session budget their preset needs (admit.PresetLimits).
func AddFrey(t testing.TB, path string, cat *dataset.Catalog, l admit.Limits) admit.Limits {
	t.Helper()
	ds, err := dataset.LoadFrey(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Add(ds, l.MaxRows); err != nil {
		t.Fatal(err)
	}
	return admit.PresetLimits(l, cat)
}

// Decode sends the autoencoder's decode command and returns the decoded
// message or the error reply.
func (c *Client) Decode(cmd map[string]any) (wire.Decoded, map[string]any) {
	cmd["op"] = "decode"
	return c.Answer(c.Send(cmd), "decoded", FreyWait)
}
