package stream

import (
	"context"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/stream/streamtest"
	"dgpviz/internal/train"
)

func robotEnv(t testing.TB) *testEnv {
	ds := streamtest.RobotData(t)
	return newEnv(t, func(o *Options) {
		if err := o.Catalog.Add(ds, o.Limits.MaxRows); err != nil {
			t.Fatal(err)
		}
	})
}

func robotPublication(b testing.TB, iters int) *publication {
	return publicationFor(b, streamtest.RobotData(b), train.InitConfig{Hidden: []int{3, 3}, Inducing: 20, Seed: 1}, iters)
}

// BenchmarkRobotFrame measures building a streaming robot frame: the first
// frame analyses synchronously, later ones reuse the background analysis
// (the writer's steady state while the optimizer runs).
func BenchmarkRobotFrame(b *testing.B) {
	p := robotPublication(b, 20)
	var f framer
	if _, err := f.frame(p); err != nil {
		b.Fatal(err)
	}
	var size int
	for b.Loop() {
		p.snap.Iter++ // a newer state; background analyses start every 200 ms
		out, err := f.frame(p)
		if err != nil {
			b.Fatal(err)
		}
		size = len(out)
	}
	b.ReportMetric(float64(size), "bytes/frame")
}

// BenchmarkRobotStreaming runs the robot preset in a session at full speed
// with a reading client and reports optimizer iterations/s and frames/s.
func BenchmarkRobotStreaming(b *testing.B) {
	e := robotEnv(b)
	c := e.Dial(b, "data=robot&hidden=3,3&m=20&speed=0&play=0")
	c.Until("frame", streamtest.RobotWait, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	// Wait for the one-off baselines (a one-layer GP fit) to finish: they
	// share the CPU with the session only once per data set.
	for range 300 {
		c.Ack(map[string]any{"op": "pause"})
		if f := c.Until("frame", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" }).Frame; streamtest.Get(f, "view", "gp1_rmse") != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	iters, frames := streamWhilePlaying(b, e, c, 2*time.Second)
	b.ReportMetric(iters, "iters/s")
	b.ReportMetric(frames, "frames/s")
}

// TestShutdownStopsBaselines checks that work the views share across a
// server's sessions (the explorer's baseline, fitted once per data set in
// the background) belongs to its server: Shutdown cancels it and waits for
// it, and a second server computes its own.
func TestShutdownStopsBaselines(t *testing.T) {
	l := admit.DefaultLimits()
	srv, err := NewServer(Options{Limits: l, Defaults: admit.DefaultConfig(), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	key := struct{ name string }{"baseline"}
	m := srv.env.Once(key, func(ctx context.Context) any { <-ctx.Done(); return ctx.Err() })
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with a baseline running: %v", err)
	}
	if _, ok := m.Value(); !ok {
		t.Fatal("Shutdown returned before the baseline stopped")
	}
	t.Logf("shutdown stopped the baseline in %v", time.Since(start).Round(time.Millisecond))
	srv2, err := NewServer(Options{Limits: l, Defaults: admit.DefaultConfig(), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv2.Shutdown(context.Background())
	if srv2.env.Once(key, func(context.Context) any { return nil }) == m {
		t.Error("a second server shares the first one's baselines")
	}
}
