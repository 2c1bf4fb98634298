package autoencoder_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/stream"
	"dgpviz/internal/stream/streamtest"
	"dgpviz/internal/train"
	"dgpviz/internal/view/autoencoder"
)

// TestFreySetupAndFrames: the setup carries the frames once (x and y one
// section) and the autoencoder's section with the image shape; frames
// carry the latent (N × 2), the decoder's inducing inputs and the bound,
// and leave out the 560-column arrays.
func TestFreySetupAndFrames(t *testing.T) {
	if testing.Short() {
		t.Skip("fits the Frey preset on the fixture (seconds under -race): not in the short tier")
	}
	e := freyEnv(t, streamtest.FreyFixture(t))
	c := e.Dial(t, "data=frey&hidden=2&m=15&speed=0&play=1")
	su := c.Until("setup", streamtest.FreyWait, func(m streamtest.Msg) bool { return m.Type() == "setup" }).Frame
	n := int(streamtest.Num(streamtest.Get(su, "n")))
	if got := len(streamtest.Floats(streamtest.Get(su, "x"))); got != n*dataset.FreyPixels {
		t.Fatalf("setup x: %d values, want %d", got, n*dataset.FreyPixels)
	}
	if h, w := streamtest.Num(streamtest.Get(su, "view", "height")), streamtest.Num(streamtest.Get(su, "view", "width")); h != 28 || w != 20 {
		t.Fatalf("image %v×%v, want 28×20", h, w)
	}
	if streamtest.Get(su, "view", "kind") != autoencoder.Kind || streamtest.Get(su, "view", "preset") != train.FreyPreset(1).Name {
		t.Fatalf("view %v, preset %v", streamtest.Get(su, "view", "kind"), streamtest.Get(su, "view", "preset"))
	}
	for range 6 {
		m := c.Until("frame", streamtest.FreyWait, func(m streamtest.Msg) bool { return m.Type() == "frame" })
		f := m.Frame
		if got := len(streamtest.Floats(streamtest.Get(f, "layers", 0, "mean"))); got != 2*n {
			t.Fatalf("latent mean: %d values, want %d", got, 2*n)
		}
		if got, want := len(streamtest.Floats(streamtest.Get(f, "layers", 1, "z"))), 2*train.FreyDecoderInducing; got != want {
			t.Fatalf("decoder z: %d values, want %d (the preset's inducing points in 2-D)", got, want)
		}
		if got := len(streamtest.Floats(streamtest.Get(f, "layers", 0, "z"))); got != 0 {
			t.Fatalf("encoder z: %d values, want none (omitted)", got)
		}
		if streamtest.Get(f, "layers", 1, "mean") != nil {
			t.Fatalf("frame carries the 560-D reconstructions")
		}
		if streamtest.Get(f, "bound") == nil {
			t.Fatalf("frame without a bound")
		}
		om, _ := streamtest.Get(f, "view", "omitted").([]any)
		if len(om) != 3 {
			t.Fatalf("omitted %v, want 0.z, 1.u_mean, 1.u_var", om)
		}
	}
}

// TestFreyDecode: faces at latent points (grey levels, positive variance,
// different at different points) and the reconstruction of frames beside
// the frames themselves.
func TestFreyDecode(t *testing.T) {
	if testing.Short() {
		t.Skip("fits the Frey preset on the fixture (seconds under -race): not in the short tier")
	}
	e := freyEnv(t, streamtest.FreyFixture(t))
	c := e.Dial(t, "data=frey&hidden=2&m=15&play=0")
	su := c.Until("setup", streamtest.FreyWait, func(m streamtest.Msg) bool { return m.Type() == "setup" }).Frame
	c.Until("frame", streamtest.FreyWait, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	d, er := c.Decode(map[string]any{"points": []float64{0, 0, 1.5, -1}, "frames": []int{0, 7}})
	if er != nil {
		t.Fatalf("decode: %v", er)
	}
	if g := streamtest.Num(streamtest.Get(d, "g")); g != 2 {
		t.Fatalf("g = %v", g)
	}
	mean, vr := streamtest.Floats(streamtest.Get(d, "mean")), streamtest.Floats(streamtest.Get(d, "var"))
	if len(mean) != 2*560 || len(vr) != 2*560 {
		t.Fatalf("mean %d, var %d values", len(mean), len(vr))
	}
	var diff float64
	for k := range 560 {
		if !(mean[k] > -60 && mean[k] < 320) || !(vr[k] > 0) {
			t.Fatalf("pixel %d: mean %v, var %v: not grey levels", k, mean[k], vr[k])
		}
		diff += math.Abs(mean[k] - mean[560+k])
	}
	if diff/560 < 0.5 {
		t.Errorf("faces at (0,0) and (1.5,−1) differ by %.3g grey levels on average: the decoder ignores its input?", diff/560)
	}
	orig, rec := streamtest.Floats(streamtest.Get(d, "original")), streamtest.Floats(streamtest.Get(d, "recon_mean"))
	if len(orig) != 2*560 || len(rec) != 2*560 {
		t.Fatalf("original %d, recon %d values", len(orig), len(rec))
	}
	x := streamtest.Floats(streamtest.Get(su, "x"))
	nx := streamtest.Get(su, "norm_x")
	mu, sc := streamtest.Floats(streamtest.Get(nx, "mean")), streamtest.Floats(streamtest.Get(nx, "scale"))
	if len(mu) == 0 {
		ms, _ := streamtest.Get(nx, "mean").([]any)
		ss, _ := streamtest.Get(nx, "scale").([]any)
		for k := range ms {
			mu, sc = append(mu, streamtest.Num(ms[k])), append(sc, streamtest.Num(ss[k]))
		}
	}
	var rms float64
	for k := range 560 {
		if want := x[7*560+k]*sc[k] + mu[k]; math.Abs(orig[560+k]-want) > 0.05*sc[k]+0.01 {
			t.Fatalf("frame 7 pixel %d: original %v, setup says %v", k, orig[560+k], want)
		}
		rms += (rec[k] - orig[k]) * (rec[k] - orig[k])
	}
	t.Logf("frame 0 reconstructed to %.1f grey levels RMS; decode took %v ms", math.Sqrt(rms/560), streamtest.Get(d, "ms"))
}

// TestFreyDecodeBadInput: every malformed decode gets an error naming the
// problem, and the session carries on.
func TestFreyDecodeBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("fits the Frey preset on the fixture (seconds under -race): not in the short tier")
	}
	e := freyEnv(t, streamtest.FreyFixture(t))
	c := e.Dial(t, "data=frey&hidden=2&m=15&play=0")
	c.Until("frame", streamtest.FreyWait, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	many := make([]float64, 2*(autoencoder.MaxDecodePoints+1))
	for _, tc := range []struct {
		cmd  map[string]any
		want string
	}{
		{map[string]any{}, "give \"points\""},
		{map[string]any{"points": []float64{1, 2, 3}}, "multiple of the latent dimension 2"},
		{map[string]any{"points": many}, "at most 144"},
		{map[string]any{"points": []float64{0, 5000}}, "out of range"},
		{map[string]any{"frames": []int{-1}}, "there is no row 0 (the data have rows 1…60)"},
		{map[string]any{"frames": []int{60}}, "there is no row 61 (the data have rows 1…60)"},
		{map[string]any{"frames": make([]int, autoencoder.MaxDecodeRows+1)}, "at most 16"},
		{map[string]any{"points": "zero"}, "is not a"},
		{map[string]any{"points": []float64{0, 0}, "hue": 1}, "unknown field"},
	} {
		d, er := c.Decode(tc.cmd)
		if d != nil || er == nil || er["type"] != "error" {
			t.Errorf("%v: got %v %v, want an error", tc.cmd, d, er)
			continue
		}
		if msg, _ := er["error"].(string); !strings.Contains(msg, tc.want) {
			t.Errorf("%v: error %q, want it to say %q", tc.cmd, msg, tc.want)
		}
	}
	// A flood: at most decodeQueue wait, the others are refused at once;
	// every request is answered exactly once.
	ids := map[int64]bool{}
	for range 40 {
		ids[c.Send(map[string]any{"op": "decode", "points": make([]float64, 2*autoencoder.MaxDecodePoints)})] = true
	}
	var ok, refused int
	for len(ids) > 0 {
		m := c.Until("answers", 60*time.Second, func(m streamtest.Msg) bool { return m.Type() == "decoded" || m.Type() == "error" })
		var id float64
		if m.Text != nil {
			id, _ = m.Text["id"].(float64)
			refused++
		} else {
			id, _ = m.Frame["id"].(float64)
			ok++
		}
		if !ids[int64(id)] {
			t.Fatalf("answer for id %v twice or unknown", id)
		}
		delete(ids, int64(id))
	}
	t.Logf("flood of 40: %d decoded, %d refused", ok, refused)
	if ok == 0 {
		t.Errorf("no request of the flood was decoded")
	}
	c.Ack(map[string]any{"op": "step", "n": 1})
}

// TestDecodeOnOtherData: decode on the step demo says that its view has no
// such command.
func TestFreyDecodeOnOtherData(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, "data=step&play=0")
	c.Until("frame", streamtest.FreyWait, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	_, er := c.Decode(map[string]any{"points": []float64{0}})
	if msg, _ := er["error"].(string); !strings.Contains(msg, "regression view, which has no such command") {
		t.Fatalf("decode on step data: %v", er)
	}
}

// TestFreyMoveDecoderInducing: dragging a decoder inducing input (layer 1)
// with the move op changes the bound and the frame shows it.
func TestFreyMoveDecoderInducing(t *testing.T) {
	if testing.Short() {
		t.Skip("fits the Frey preset on the fixture (seconds under -race): not in the short tier")
	}
	e := freyEnv(t, streamtest.FreyFixture(t))
	c := e.Dial(t, "data=frey&hidden=2&m=15&play=0")
	f0 := c.Until("frame", streamtest.FreyWait, func(m streamtest.Msg) bool { return m.Type() == "frame" }).Frame
	z := streamtest.Floats(streamtest.Get(f0, "layers", 1, "z"))
	id := c.Ack(map[string]any{"op": "move", "layer": 1, "index": 3, "z": []float64{z[6] + 0.8, z[7] - 0.5}})
	f1 := c.FrameAfter(id)
	if b0, b1 := streamtest.Num(streamtest.Get(f0, "bound")), streamtest.Num(streamtest.Get(f1, "bound")); b0 == b1 {
		t.Fatalf("bound %v unchanged by the move", b0)
	}
	if z1 := streamtest.Floats(streamtest.Get(f1, "layers", 1, "z")); math.Abs(z1[6]-(z[6]+0.8)) > 1e-4 {
		t.Fatalf("moved z %v, want %v", z1[6], z[6]+0.8)
	}
}

// FuzzCheckDecode: no decode command, however malformed, panics the parser
// or the check, and a command that passes the check is within the limits.
func FuzzCheckDecode(f *testing.F) {
	f.Add([]byte(`{"op":"decode","points":[0,0,1,1]}`))
	f.Add([]byte(`{"op":"decode","frames":[0,59]}`))
	f.Add([]byte(`{"op":"decode","points":[1e308,-1e308],"frames":[-5]}`))
	f.Add([]byte(`{"op":"decode","points":[0,0,0]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := stream.ParseCommand(b)
		if err != nil {
			return
		}
		if autoencoder.CheckDecode(c, 2, 60) != nil {
			return
		}
		if len(c.Points)%2 != 0 || len(c.Points) > 2*autoencoder.MaxDecodePoints || len(c.Frames) > autoencoder.MaxDecodeRows || len(c.Points)+len(c.Frames) == 0 {
			t.Fatalf("accepted %s", b)
		}
		for _, i := range c.Frames {
			if i < 0 || i >= 60 {
				t.Fatalf("accepted frame %d", i)
			}
		}
	})
}

// TestFreyStreamingReal measures the live rates on the paper's 1965
// frames with one and two evaluator workers per session: optimizer
// iterations per second and frames per second while a client reads, and
// the time of decodes (logged, never asserted).
func TestFreyStreamingReal(t *testing.T) {
	freyRealPath := streamtest.FreyReal(t)
	if _, err := os.Stat(freyRealPath); err != nil {
		t.Skipf("the real Frey faces are not at %s: skipping the live-rate measurement", freyRealPath)
	}
	if testing.Short() {
		t.Skip("fits for several seconds")
	}
	if streamtest.RaceEnabled {
		t.Skip("a measurement of live rates: the race detector slows the fit tenfold, which says nothing")
	}
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) { freyStreaming(t, workers) })
	}
}

func freyStreaming(t *testing.T, workers int) {
	ds, err := dataset.LoadFrey(streamtest.FreyReal(t))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(o *stream.Options) {
		o.Workers = workers
		if err := o.Catalog.Add(ds, o.Limits.MaxRows); err != nil {
			t.Fatal(err)
		}
		o.Limits = admit.PresetLimits(o.Limits, o.Catalog)
	})
	t0 := time.Now()
	c := e.Dial(t, "data=frey&hidden=2&m=15&speed=0&play=0")
	c.Until("frame", 120*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	t.Logf("session start (preset restarts) %v", time.Since(t0).Round(time.Millisecond))
	for _, g := range []int{1, 64} {
		pts := make([]float64, 2*g)
		for k := range pts {
			pts[k] = float64(k%7)/3 - 1
		}
		start := time.Now()
		d, er := c.Decode(map[string]any{"points": pts})
		if er != nil {
			t.Fatal(er)
		}
		t.Logf("decode of %d face(s): %v ms server-side, %v round trip (paused)", g, streamtest.Get(d, "ms"), time.Since(start).Round(time.Microsecond))
	}
	st0 := e.Srv.SessionStats()[0]
	c.Send(map[string]any{"op": "play"})
	start := time.Now()
	var bytes, nframes int
	for time.Since(start) < 8*time.Second {
		m, err := c.Read(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if m.Type() == "frame" {
			nframes++
			if b, err := json.Marshal(m.Frame); err == nil {
				bytes += len(b)
			}
		}
	}
	el := time.Since(start)
	st := e.Srv.SessionStats()[0]
	t.Logf("real Frey faces, streaming for %v: %.1f optimizer iterations/s, %.1f frames/s written (%d read)",
		el.Round(time.Millisecond), float64(st.Iterations-st0.Iterations)/el.Seconds(), float64(st.Frames-st0.Frames)/el.Seconds(), nframes)
	start = time.Now()
	d, er := c.Decode(map[string]any{"points": []float64{0.3, -0.2}})
	if er != nil {
		t.Fatal(er)
	}
	t.Logf("decode of 1 face while streaming: %v ms server-side, %v round trip", streamtest.Get(d, "ms"), time.Since(start).Round(time.Microsecond))
}

// TestAutoencoderFromCSV: the Frey fixture written as a CSV of its pixels
// with its image shape, and a generated set of small images, open the
// autoencoder view with their image shape, and decode images of it.
func TestAutoencoderFromCSV(t *testing.T) {
	if testing.Short() {
		t.Skip("fits the autoencoder preset twice (seconds under -race): not in the short tier")
	}
	frey, err := dataset.LoadFrey(streamtest.FreyFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		ds    *dataset.Dataset
		shape [2]int
	}{
		{"Frey fixture", frey, [2]int{28, 20}},
		{"generated 8×6 images", streamtest.BlobImages(40, 8, 6), [2]int{8, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(o *stream.Options) { o.Limits.SessionMemory = 1 << 30 })
			token, _, err := e.Srv.ParkData("test", streamtest.ViaCSV(t, tc.ds, dataset.CSVOptions{Shape: tc.shape}))
			if err != nil {
				t.Fatal(err)
			}
			c := e.Dial(t, "resume="+token)
			su := c.Until("setup", 60*time.Second, func(m streamtest.Msg) bool { return m.Type() == "setup" }).Frame
			if streamtest.Get(su, "view", "kind") != autoencoder.Kind || streamtest.Num(streamtest.Get(su, "view", "height")) != float64(tc.shape[0]) || streamtest.Num(streamtest.Get(su, "view", "width")) != float64(tc.shape[1]) {
				t.Fatalf("view %v, image %v×%v", streamtest.Get(su, "view", "kind"), streamtest.Get(su, "view", "height"), streamtest.Get(su, "view", "width"))
			}
			c.Until("frame", 60*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" })
			d, er := c.Decode(map[string]any{"points": []float64{0, 0, 1, 1}, "frames": []int{0}})
			if er != nil {
				t.Fatalf("decode: %v", er)
			}
			px := tc.shape[0] * tc.shape[1]
			if len(streamtest.Floats(streamtest.Get(d, "mean"))) != 2*px || streamtest.Num(streamtest.Get(d, "height")) != float64(tc.shape[0]) || len(streamtest.Floats(streamtest.Get(d, "recon_mean"))) != px {
				t.Fatalf("decoded %d values of %v×%v images", len(streamtest.Floats(streamtest.Get(d, "mean"))), streamtest.Get(d, "height"), streamtest.Get(d, "width"))
			}
		})
	}
}
