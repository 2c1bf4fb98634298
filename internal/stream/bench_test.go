package stream

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/train"
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
	return wideDataset(215, 30)
}

// robotConfig is the robot configuration of the size budget: 3-D hidden
// layers, 30 inducing points.
var robotConfig = InitLike{Hidden: []int{3, 3}, Inducing: 30}

type InitLike struct {
	Hidden   []int
	Inducing int
}

func snapshotFor(t testing.TB, ds *dataset.Dataset, c InitLike, iters int) *snapshot {
	t.Helper()
	nx, ny := dataset.FitNormalizer(ds.X), dataset.FitNormalizer(ds.Y)
	m, err := train.Initialize(nx.Apply(ds.X), ny.Apply(ds.Y), train.InitConfig{Hidden: c.Hidden, Inducing: c.Inducing, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.NewTrainer(m, train.TrainerConfig{Method: train.LBFGS, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range iters {
		tr.Step()
	}
	return &snapshot{model: tr.Model().Clone(), iter: tr.Iter(), method: "lbfgs", lr: 0.01, running: true, dataID: 1}
}

func TestRobotFrameUnder64KB(t *testing.T) {
	ds := robotData(t)
	for _, c := range []InitLike{robotConfig, {Hidden: []int{3}, Inducing: 30}, {Hidden: []int{3, 3}, Inducing: DefaultLimits().MaxInducing}} {
		steps := 5
		if testing.Short() {
			steps = 1 // a frame's size hardly depends on how far the fit went
		}
		f := newFramer()
		b, err := f.frame(snapshotFor(t, ds, c, steps))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("robot %d×%d, hidden %v, %d inducing: frame %d bytes", ds.X.RawMatrix().Rows, ds.Y.RawMatrix().Cols, c.Hidden, c.Inducing, len(b))
		if len(b) >= 64<<10 {
			t.Errorf("robot frame (hidden %v, %d inducing) is %d bytes, over 64 KB", c.Hidden, c.Inducing, len(b))
		}
		d, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(floats(get(d, "layers", 2, "mean"))); len(c.Hidden) == 2 && n != 215*30 {
			t.Errorf("last layer mean has %d values", n)
		}
	}
}

// TestQuantisationError checks the q16 encoding's error bound.
func TestQuantisationError(t *testing.T) {
	v := make([]float64, 1000)
	for i := range v {
		v[i] = float64(i*i)/1000 - 3
	}
	var e encoder
	r := e.arr(v)
	b, err := e.finish(&frameHeader{Layers: []layerFrame{{Z: r}}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	got := floats(get(d, "layers", 0, "z"))
	lo, hi := slices.Min(v), slices.Max(v)
	for i := range v {
		if diff := got[i] - v[i]; diff > (hi-lo)/65534 || -diff > (hi-lo)/65534 {
			t.Fatalf("value %d: %v decoded as %v", i, v[i], got[i])
		}
	}
	if e.secs[0].T != "q16" {
		t.Fatalf("section type %s, want q16", e.secs[0].T)
	}
}

func benchFrame(b *testing.B, ds *dataset.Dataset, c InitLike) {
	snap := snapshotFor(b, ds, c, 20)
	f := newFramer()
	var size int
	b.ResetTimer()
	for b.Loop() {
		out, err := f.frame(snap)
		if err != nil {
			b.Fatal(err)
		}
		size = len(out)
	}
	b.ReportMetric(float64(size), "bytes/frame")
}

func BenchmarkFrameEncode(b *testing.B) {
	b.Run("step", func(b *testing.B) { benchFrame(b, dataset.Step(), InitLike{Hidden: []int{1, 1}, Inducing: 12}) })
	b.Run("robot", func(b *testing.B) { benchFrame(b, robotData(b), robotConfig) })
}

// BenchmarkMoveLatency measures, over loopback while the optimizer runs at
// full speed, the time from sending a move command to receiving the first
// frame that reflects it.
func BenchmarkMoveLatency(b *testing.B) {
	e := newEnv(b, nil)
	c := e.dial(b, "play=1&speed=0")
	c.until("frame", 5*time.Second, func(m msg) bool { return m.typ() == "frame" })
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		id := c.send(map[string]any{"op": "move", "layer": 1, "index": i % 12, "z": []float64{float64(i%7)/3 - 1}})
		c.frameAfter(id)
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
		m, _ := train.Initialize(nx.Apply(ds.X), ny.Apply(ds.Y), train.InitConfig{Hidden: []int{1, 1}, Inducing: 12, Seed: 1, Perturb: initPerturb})
		tr, err := train.NewTrainer(m, train.TrainerConfig{Method: train.Adam, Workers: 1})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			tr.Step()
		}
	})
	b.Run("streaming", func(b *testing.B) {
		e := newEnv(b, nil)
		c := e.dial(b, "play=0&speed=0&opt=adam")
		c.until("frame", 5*time.Second, func(m msg) bool { return m.typ() == "frame" })
		_, frames := streamWhilePlaying(b, e, c, 0)
		b.ReportMetric(frames, "frames/s")
	})
}

// streamWhilePlaying plays the session on c, reading every frame as a
// browser does (decoding is the browser's work), until it has run b.N
// iterations and at least minTime; it returns iterations and frames per
// second of that stretch, timed by the benchmark.
func streamWhilePlaying(b *testing.B, e *testEnv, c *client, minTime time.Duration) (itersPerSec, framesPerSec float64) {
	done := make(chan int64)
	go func() {
		var frames int64
		for {
			c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, r, err := c.c.NextReader(); err != nil {
				done <- frames
				return
			} else if _, err := io.Copy(io.Discard, r); err != nil {
				done <- frames
				return
			}
			frames++
		}
	}()
	st0 := e.srv.SessionStats()[0]
	b.ResetTimer()
	t0 := time.Now()
	c.c.WriteJSON(map[string]any{"op": "play"})
	for {
		st := e.srv.SessionStats()[0]
		if st.Iterations-st0.Iterations >= int64(b.N) && time.Since(t0) >= minTime {
			break
		}
		time.Sleep(time.Millisecond)
	}
	el := time.Since(t0)
	b.StopTimer()
	st := e.srv.SessionStats()[0]
	c.c.Close()
	<-done
	return float64(st.Iterations-st0.Iterations) / el.Seconds(), float64(st.Frames-st0.Frames) / el.Seconds()
}
