package stream

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/allviews"
	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/stream/streamtest"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"
)

// robotData returns the robot WiFi training data (215 scans × 30 access
// points) from $DGPVIZ_ROBOT or the shared data folder beside the
// repository, or synthetic data of the same shape when neither exists.
func robotData(t testing.TB) *dataset.Dataset {
	paths := []string{os.Getenv("DGPVIZ_ROBOT"), filepath.Join("..", "..", "..", "shared", "data", "robot_wireless", "uw-floor.txt")}
	for _, p := range paths {
		if p == "" {
			continue
		}
		if ds, err := dataset.LoadRobot(p); err == nil {
			return ds
		}
	}
	t.Logf("robot data not found; using synthetic data of the same shape")
	return streamtest.WideData(215, 30)
}

// robotConfig is the robot configuration of the size budget: 3-D hidden
// layers, 30 inducing points.
// publicationFor fits data set ds with the configuration c for iters
// iterations and publishes the model as a session would, with the view
// that shows ds.
func publicationFor(t testing.TB, ds *dataset.Dataset, c train.InitConfig, iters int) *publication {
	t.Helper()
	d := view.NewData(1, ds)
	m, err := train.Initialize(d.X, d.Y, c)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.NewTrainer(m, train.TrainerConfig{Method: train.LBFGS{}, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range iters {
		tr.Step()
	}
	ev, ok := tr.LastEvaluation()
	if !ok {
		res, _, err := (&engine.Evaluator{Workers: 1}).Evaluate(tr.Model(), engine.Options{NoOutputMessage: true})
		if err != nil {
			t.Fatal(err)
		}
		ev = train.NewEvaluation(res)
	}
	v := allviews.For(ds, view.NewEnv(context.Background(), 300)) // as the test servers (helpers_test.go)
	snap := &view.Snapshot{Model: tr.Model().CloneParams(), Eval: ev, Data: d, Iter: tr.Iter(), Running: true, Version: 1}
	return &publication{snap: snap, view: v, method: "lbfgs", lr: 0.01, restart: -1}
}

// robotConfig is the robot configuration of the size budget: 3-D hidden
// layers, 30 inducing points.
var robotConfig = train.InitConfig{Hidden: []int{3, 3}, Inducing: 30, Seed: 1}

// TestRobotFrameSizes: a robot frame that carries a new analysis (the
// output layer's 215 × 30 messages and the held-out predictions) stays
// under 96 KB, and the frames between analyses (the hidden layers' messages
// and the penalties) under 32 KB, at any size of model the limits allow.
func TestRobotFrameSizes(t *testing.T) {
	ds := robotData(t)
	for _, c := range []train.InitConfig{robotConfig, {Hidden: []int{3}, Inducing: 30, Seed: 1}, {Hidden: []int{3, 3}, Inducing: admit.DefaultLimits().MaxInducing, Seed: 1}} {
		var f framer
		p := publicationFor(t, ds, c, 1) // a frame's size hardly depends on how far the fit went
		heavy, err := f.frame(p)
		if err != nil {
			t.Fatal(err)
		}
		light, err := f.frame(p) // the same analysis: its arrays are not sent again
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("robot %d×%d, hidden %v, %d inducing: frames of %d bytes with a new analysis, %d between", ds.X.RawMatrix().Rows, ds.Y.RawMatrix().Cols, c.Hidden, c.Inducing, len(heavy), len(light))
		if len(heavy) >= 96<<10 || len(light) >= 32<<10 {
			t.Errorf("robot frames (hidden %v, %d inducing) of %d and %d bytes, over 96 and 32 KB", c.Hidden, c.Inducing, len(heavy), len(light))
		}
		d, err := wire.Decode(heavy)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(streamtest.Floats(streamtest.Get(d, "layers", len(c.Hidden), "mean"))); n != 215*30 {
			t.Errorf("the output layer's mean has %d values", n)
		}
	}
}

func benchFrame(b *testing.B, ds *dataset.Dataset, c train.InitConfig) {
	p := publicationFor(b, ds, c, 20)
	var f framer
	var size int
	b.ResetTimer()
	for b.Loop() {
		out, err := f.frame(p)
		if err != nil {
			b.Fatal(err)
		}
		size = len(out)
	}
	b.ReportMetric(float64(size), "bytes/frame")
}

func BenchmarkFrameEncode(b *testing.B) {
	b.Run("step", func(b *testing.B) {
		benchFrame(b, dataset.Step(), train.InitConfig{Hidden: []int{1, 1}, Inducing: 12, Seed: 1})
	})
	b.Run("robot", func(b *testing.B) { benchFrame(b, robotData(b), robotConfig) })
}

// BenchmarkMoveLatency measures, over loopback while the optimizer runs at
// full speed, the time from sending a move command to receiving the first
// frame that reflects it.
func BenchmarkMoveLatency(b *testing.B) {
	e := newEnv(b, nil)
	c := e.Dial(b, "play=1&speed=0")
	c.Until("frame", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		id := c.Send(map[string]any{"op": "move", "layer": 1, "index": i % 12, "z": []float64{float64(i%7)/3 - 1}})
		c.FrameAfter(id)
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
}

// BenchmarkThroughput compares optimizer iterations alone with the same
// optimizer inside a session streaming 60 frames per second to a reading
// client; ns/op is per iteration.
func BenchmarkThroughput(b *testing.B) {
	ds := dataset.Step()
	b.Run("bare", func(b *testing.B) {
		nx, ny := dataset.FitNormalizer(ds.X), dataset.FitNormalizer(ds.Y)
		m, _ := train.Initialize(nx.Apply(ds.X), ny.Apply(ds.Y), train.InitConfig{Hidden: []int{1, 1}, Inducing: 12, Seed: 1, Perturb: 0.5})
		tr, err := train.NewTrainer(m, train.TrainerConfig{Method: train.Adam{}, Workers: 1})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			tr.Step()
		}
	})
	b.Run("streaming", func(b *testing.B) {
		e := newEnv(b, nil)
		c := e.Dial(b, "play=0&speed=0&opt=adam")
		c.Until("frame", 5*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
		_, frames := streamWhilePlaying(b, e, c, 0)
		b.ReportMetric(frames, "frames/s")
	})
}

// streamWhilePlaying plays the session on c, reading every frame as a
// browser does (decoding is the browser's work), until it has run b.N
// iterations and at least minTime; it returns iterations and frames per
// second of that stretch, timed by the benchmark.
func streamWhilePlaying(b *testing.B, e *testEnv, c *streamtest.Client, minTime time.Duration) (itersPerSec, framesPerSec float64) {
	done := make(chan int64)
	go func() {
		var frames int64
		for {
			c.Conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, r, err := c.Conn.NextReader(); err != nil {
				done <- frames
				return
			} else if _, err := io.Copy(io.Discard, r); err != nil {
				done <- frames
				return
			}
			frames++
		}
	}()
	st0 := e.Srv.SessionStats()[0]
	b.ResetTimer()
	t0 := time.Now()
	c.Conn.WriteJSON(map[string]any{"op": "play"})
	for {
		st := e.Srv.SessionStats()[0]
		if st.Iterations-st0.Iterations >= int64(b.N) && time.Since(t0) >= minTime {
			break
		}
		time.Sleep(time.Millisecond)
	}
	el := time.Since(t0)
	b.StopTimer()
	st := e.Srv.SessionStats()[0]
	c.Conn.Close()
	<-done
	return float64(st.Iterations-st0.Iterations) / el.Seconds(), float64(st.Frames-st0.Frames) / el.Seconds()
}
