package stream

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/modelfile"
	"dgpviz/internal/stream/streamtest"
	"dgpviz/internal/train"
	"dgpviz/internal/view/autoencoder"
	"dgpviz/internal/wire"
)

// freyFixture is the generated Frey fixture of the dataset package (60
// synthetic frames of 28 × 20 grey levels).
const freyFixture = "../dataset/testdata/frey_small.mat"

// freyWait is how long the Frey tests wait for a setup, a frame or an
// answer: the preset's restarts on the fixture take seconds, and a minute
// under -race on a busy 2-core machine.
const freyWait = 90 * time.Second

// freyRealPath is the paper's data, when present.
var freyRealPath = filepath.Join("..", "..", "..", "shared", "data", "frey_faces", "frey_rawface.mat")

func freyEnv(t testing.TB, path string, mutate ...func(*Options)) *testEnv {
	t.Helper()
	ds, err := dataset.LoadFrey(path)
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, func(o *Options) {
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

// freySnapshot is a snapshot of the Frey preset's model (the real frames
// when present, else the fixture) after iters iterations.
func freyPublication(b testing.TB, iters int) *publication {
	b.Helper()
	path := freyRealPath
	if _, err := os.Stat(path); err != nil {
		path = freyFixture
	}
	return freyPublicationOf(b, path, iters)
}

func freyPublicationOf(b testing.TB, path string, iters int) *publication {
	b.Helper()
	ds, err := dataset.LoadFrey(path)
	if err != nil {
		b.Fatal(err)
	}
	return publicationFor(b, ds, train.FreyPreset(1).Init, iters)
}

// BenchmarkFreyFrame measures building a streaming Frey frame from the
// optimizer's evaluation, with its size.
func BenchmarkFreyFrame(b *testing.B) {
	p := freyPublication(b, 5)
	if p.snap.Eval == nil {
		b.Fatal("no evaluation after 5 steps")
	}
	var f framer
	var size int
	for b.Loop() {
		p.snap.Iter++
		out, err := f.frame(p)
		if err != nil {
			b.Fatal(err)
		}
		size = len(out)
	}
	b.ReportMetric(float64(size), "bytes/frame")
}

// BenchmarkFreyStep is one optimizer iteration of the Frey preset (one
// worker, as a session's default).
func BenchmarkFreyStep(b *testing.B) {
	p := freyPublication(b, 0)
	tr, err := train.NewTrainer(p.snap.Model, train.TrainerConfig{Method: train.LBFGS{}, Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	evals, steps := 0, 0
	for b.Loop() {
		info, _ := tr.Step()
		evals += info.Evals
		steps++
	}
	b.ReportMetric(float64(evals)/float64(steps), "evals/op")
}

// TestFreyLoadedModel: a Frey autoencoder loaded from a model file (its
// data a private data set whose 560 inputs are its 560 outputs) resumes
// into the autoencoder view: small frames, not 560-column messages, and
// decode works.
func TestFreyLoadedModel(t *testing.T) {
	// The budget estimates every layer at the model's largest number of
	// inducing points (the decoder's 30): give it room.
	e := freyEnv(t, freyFixture, func(o *Options) { o.Limits.SessionMemory = 1 << 30 })
	pub := freyPublicationOf(t, freyFixture, 3)
	ds, err := dataset.LoadFrey(freyFixture)
	if err != nil {
		t.Fatal(err)
	}
	nx := dataset.FitNormalizer(ds.X)
	token, err := e.Srv.ParkModel("test", &modelfile.File{Model: pub.snap.Model, NormX: nx, NormY: nx})
	if err != nil {
		t.Fatal(err)
	}
	c := e.Dial(t, "resume="+token)
	su := c.Until("setup", freyWait, func(m streamtest.Msg) bool { return m.Type() == "setup" }).Frame
	if streamtest.Get(su, "view", "kind") != autoencoder.Kind {
		t.Fatalf("the loaded Frey model's setup is of the %v view", streamtest.Get(su, "view", "kind"))
	}
	f := c.Until("frame", freyWait, func(m streamtest.Msg) bool { return m.Type() == "frame" }).Frame
	if streamtest.Get(f, "view", "omitted") == nil || streamtest.Get(f, "layers", 1, "mean") != nil {
		t.Fatalf("the loaded Frey model streams generic frames")
	}
	if d, er := decode(c, map[string]any{"points": []float64{0, 0}}); er != nil || streamtest.Num(streamtest.Get(d, "g")) != 1 {
		t.Fatalf("decode in the loaded model's session: %v %v", d, er)
	}
}
