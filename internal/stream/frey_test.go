package stream

import (
	"os"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/modelfile"
	"dgpviz/internal/stream/streamtest"
	"dgpviz/internal/train"
	"dgpviz/internal/view/autoencoder"
)

// freyEnv serves the Frey faces at path besides, with the session budget
// their preset needs (streamtest.AddFrey).
func freyEnv(t testing.TB, path string, mutate ...func(*Options)) *testEnv {
	t.Helper()
	return newEnv(t, func(o *Options) {
		o.Limits = streamtest.AddFrey(t, path, o.Catalog, o.Limits)
		for _, m := range mutate {
			m(o)
		}
	})
}

// freySnapshot is a snapshot of the Frey preset's model (the real frames
// when present, else the fixture) after iters iterations.
func freyPublication(b testing.TB, iters int) *publication {
	b.Helper()
	path := streamtest.FreyReal(b)
	if _, err := os.Stat(path); err != nil {
		path = streamtest.FreyFixture(b)
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
	fixture := streamtest.FreyFixture(t)
	e := freyEnv(t, fixture, func(o *Options) { o.Limits.SessionMemory = 1 << 30 })
	pub := freyPublicationOf(t, fixture, 3)
	ds, err := dataset.LoadFrey(fixture)
	if err != nil {
		t.Fatal(err)
	}
	nx := dataset.FitNormalizer(ds.X)
	token, err := e.Srv.ParkModel("test", &modelfile.File{Model: pub.snap.Model, NormX: nx, NormY: nx})
	if err != nil {
		t.Fatal(err)
	}
	c := e.Dial(t, "resume="+token)
	su := c.Until("setup", streamtest.FreyWait, func(m streamtest.Msg) bool { return m.Type() == "setup" }).Frame
	if streamtest.Get(su, "view", "kind") != autoencoder.Kind {
		t.Fatalf("the loaded Frey model's setup is of the %v view", streamtest.Get(su, "view", "kind"))
	}
	f := c.Until("frame", streamtest.FreyWait, func(m streamtest.Msg) bool { return m.Type() == "frame" }).Frame
	if streamtest.Get(f, "view", "omitted") == nil || streamtest.Get(f, "layers", 1, "mean") != nil {
		t.Fatalf("the loaded Frey model streams generic frames")
	}
	if d, er := c.Decode(map[string]any{"points": []float64{0, 0}}); er != nil || streamtest.Num(streamtest.Get(d, "g")) != 1 {
		t.Fatalf("decode in the loaded model's session: %v %v", d, er)
	}
}
