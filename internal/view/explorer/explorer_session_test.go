package explorer_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/stream"
	"dgpviz/internal/stream/streamtest"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
	"dgpviz/internal/view/explorer"
	"dgpviz/internal/wire"
)

func TestRobotSetupAndFrames(t *testing.T) {
	e := robotEnv(t)
	c := e.Dial(t, "data=robot&hidden=3,3&m=10&speed=0&play=1")
	su := c.Until("setup", streamtest.RobotWait, func(m streamtest.Msg) bool { return m.Type() == "setup" }).Frame
	n := int(streamtest.Num(streamtest.Get(su, "n")))
	nAll := int(streamtest.Num(streamtest.Get(su, "view", "n_all")))
	d := int(streamtest.Num(streamtest.Get(su, "d")))
	if streamtest.Get(su, "view", "kind") != explorer.Kind {
		t.Fatalf("view %v, want the explorer", streamtest.Get(su, "view", "kind"))
	}
	if got := len(streamtest.Floats(streamtest.Get(su, "view", "truth", "values"))); got != 2*nAll {
		t.Fatalf("truth: %d values, want %d", got, 2*nAll)
	}
	if got := len(streamtest.Floats(streamtest.Get(su, "view", "imputed"))); got != nAll*d {
		t.Fatalf("imputed: %d values, want %d", got, nAll*d)
	}
	if nAll > n {
		if got := len(streamtest.Floats(streamtest.Get(su, "view", "y_test"))); got != (nAll-n)*d {
			t.Fatalf("y_test: %d values, want %d", got, (nAll-n)*d)
		}
	}
	// The baselines' scores (null where the path has no revisits, as on
	// the fixture).
	bl, _ := streamtest.Get(su, "view", "truth", "baselines").([]any)
	if len(bl) != 2 {
		t.Fatalf("baselines %v, want the outputs' principal components and the input alone", bl)
	}
	for k := range bl {
		if sc := streamtest.Get(bl[k], "score"); sc != nil && !(streamtest.Num(sc) >= 0 && streamtest.Num(sc) <= 1) {
			t.Fatalf("baseline %v: score %v", streamtest.Get(bl[k], "name"), sc)
		}
	}
	// Frames: hidden messages in every frame; the output layer and the test
	// predictions with every new analysis; scores for both hidden layers.
	var sawTest, sawLight bool
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && !(sawTest && sawLight) {
		f := c.Until("frame", 10*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" }).Frame
		for li := 0; li < 2; li++ {
			if got := len(streamtest.Floats(streamtest.Get(f, "layers", li, "mean"))); got != 3*n {
				t.Fatalf("frame %v: layer %d mean has %d values, want %d", streamtest.Get(f, "seq"), li, got, 3*n)
			}
		}
		if got := len(streamtest.Get(f, "view", "scores").([]any)); got != 2 {
			t.Fatalf("scores: %d, want 2", got)
		}
		if streamtest.Get(f, "view", "new_output") == true {
			if got := len(streamtest.Floats(streamtest.Get(f, "layers", 2, "mean"))); got != d*n {
				t.Fatalf("output mean has %d values, want %d", got, d*n)
			}
			if nAll > n {
				if got := len(streamtest.Floats(streamtest.Get(f, "view", "test", "mean"))); got != (nAll-n)*d {
					t.Fatalf("test mean: %d values, want %d", got, (nAll-n)*d)
				}
				if r := streamtest.Num(streamtest.Get(f, "view", "test_rmse")); !(r > 0 && r < 100) {
					t.Fatalf("test_rmse %v dBm", r)
				}
			}
			sawTest = true
		} else if streamtest.Get(f, "layers", 2, "mean") == nil {
			sawLight = true
		}
	}
	if !sawTest || !sawLight {
		t.Fatalf("saw a frame with the output layer: %v; a light frame: %v", sawTest, sawLight)
	}
}

func TestRobotDatasetCommandAppliesPreset(t *testing.T) {
	e := robotEnv(t)
	c := e.Dial(t, "data=step&play=0")
	id := c.Send(map[string]any{"op": "dataset", "dataset": "robot"})
	r := c.Reply(id)
	if r["type"] != "ack" {
		t.Fatalf("reply %v", r)
	}
	cfg := r["config"].(map[string]any)
	if h := cfg["hidden"].([]any); len(h) != 2 || h[0].(float64) != 3 || h[1].(float64) != 3 {
		t.Fatalf("hidden %v, want [3 3]", h)
	}
	if m := cfg["inducing"].(float64); m != train.RobotInducing {
		t.Fatalf("inducing %v, want %d", m, train.RobotInducing)
	}
}

// TestRobotFrameEvalError: a move that makes Kuu singular gives a frame
// with eval_error and parameters only, no panic.
func TestRobotFrameEvalError(t *testing.T) {
	e := robotEnv(t)
	c := e.Dial(t, "data=robot&hidden=3,3&m=6&play=0")
	c.Until("frame", streamtest.RobotWait, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	c.Ack(map[string]any{"op": "move", "layer": 1, "index": 0, "z": []float64{0, 0, 0}})
	id := c.Ack(map[string]any{"op": "move", "layer": 1, "index": 1, "z": []float64{0, 0, 0}})
	f := c.FrameAfter(id)
	if s, _ := streamtest.Get(f, "eval_error").(string); s == "" {
		// A jittered Kuu may survive two equal inducing inputs; then the
		// frame must be complete.
		if streamtest.Get(f, "bound") == nil {
			t.Fatalf("frame has neither a bound nor eval_error")
		}
	} else if streamtest.Get(f, "layers", 1, "z") == nil {
		t.Fatalf("eval_error frame without parameters")
	}
	// The session carries on.
	c.Ack(map[string]any{"op": "step", "n": 1})
}

// TestDatasetSwitchResetsArchitecture: switching from the robot data
// (preset 3,3 with 20 inducing points) to the step data gives the step
// demo's architecture, and back gives the robot preset again.
func TestDatasetSwitchResetsArchitecture(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the robot preset's restarts: not in the short tier")
	}
	ds := streamtest.RobotData(t)
	e := newEnv(t, func(o *stream.Options) { o.Catalog.Add(ds, o.Limits.MaxRows) })
	c := e.Dial(t, streamtest.Paused+"&data=robot&hidden=3,3&m=20")
	c.Until("frame", streamtest.RobotWait, func(m streamtest.Msg) bool { return m.Type() == "frame" })
	r := c.Reply(c.Send(map[string]any{"op": "dataset", "dataset": "step"}))
	def := admit.DefaultConfig()
	if h := streamtest.Get(r, "config", "hidden"); fmt.Sprint(h) != fmt.Sprint([]any{1.0, 1.0}) || streamtest.Num(streamtest.Get(r, "config", "inducing")) != float64(def.Inducing) {
		t.Errorf("after switching to step: hidden %v inducing %v, want %v %d", h, streamtest.Get(r, "config", "inducing"), def.Hidden, def.Inducing)
	}
	r = c.Reply(c.Send(map[string]any{"op": "dataset", "dataset": "robot"}))
	if h := streamtest.Get(r, "config", "hidden"); fmt.Sprint(h) != fmt.Sprint([]any{3.0, 3.0}) {
		t.Errorf("back to robot: hidden %v, want the preset's [3 3]", h)
	}
}

// TestRobotRestartOp lists the preset's restarts in the frames and switches
// the live model to another restart: the bound becomes that restart's, the
// frames say which restart is live, undo gives the preset's model back, and
// bad input gets a clear error.
func TestRobotRestartOp(t *testing.T) {
	e := robotEnv(t)
	c := e.Dial(t, "data=robot&hidden=3,3&m=10&speed=0&play=0")
	f := c.FrameAfter(c.Ack(map[string]any{"op": "pause"}))
	if streamtest.Get(f, "iter") != 0.0 {
		t.Fatalf("paused at iteration %v, want 0", streamtest.Get(f, "iter"))
	}
	list, _ := streamtest.Get(f, "restarts", "list").([]any)
	if len(list) < 2 {
		t.Fatalf("restarts: %v, want the preset's %d", streamtest.Get(f, "restarts"), 3)
	}
	// Restarts count from 1 on the wire and in the page; r is 0-based.
	chosen := int(streamtest.Num(streamtest.Get(f, "restarts", "chosen"))) - 1
	if live := int(streamtest.Num(streamtest.Get(f, "restarts", "live"))) - 1; live != chosen {
		t.Fatalf("live restart %d, want the chosen %d", live+1, chosen+1)
	}
	bounds := make([]float64, len(list))
	for r := range list {
		if k := streamtest.Num(streamtest.Get(f, "restarts", "list", r, "restart")); int(k) != r+1 {
			t.Errorf("restart %d is numbered %v", r+1, k)
		}
		bounds[r] = streamtest.Num(streamtest.Get(f, "restarts", "list", r, "bound"))
		// The score is NaN (null) for every restart where the path has no
		// revisits, as on the small fixture used without ../shared.
		s := streamtest.Num(streamtest.Get(f, "restarts", "list", r, "score"))
		s0 := streamtest.Num(streamtest.Get(f, "restarts", "list", 0, "score"))
		if !(s >= 0 && s <= 1) && !(math.IsNaN(s) && math.IsNaN(s0)) {
			t.Errorf("restart %d: geometry score %v", r+1, s)
		}
		if in := streamtest.Get(f, "restarts", "list", r, "start"); in != "pca" && in != "linear" {
			t.Errorf("restart %d: start %v, want pca or linear", r+1, in)
		}
	}
	for r := range bounds {
		if bounds[r] > bounds[chosen] {
			t.Errorf("restart %d has bound %v above the chosen restart %d's %v", r, bounds[r], chosen, bounds[chosen])
		}
	}
	// The frames' bound of the untouched model is the chosen restart's.
	if b := streamtest.Num(streamtest.Get(f, "bound")); math.Abs(b-bounds[chosen]) > 1e-6*math.Abs(b) {
		t.Errorf("frame bound %v, chosen restart's %v", b, bounds[chosen])
	}
	other := (chosen + 1) % len(list)
	id := c.Ack(map[string]any{"op": "restart", "restart": other + 1})
	f = c.FrameAfter(id)
	if b := streamtest.Num(streamtest.Get(f, "bound")); math.Abs(b-bounds[other]) > 1e-6*math.Abs(b) {
		t.Errorf("after switching to restart %d: bound %v, want its %v", other, b, bounds[other])
	}
	if live := int(streamtest.Num(streamtest.Get(f, "restarts", "live"))) - 1; live != other {
		t.Errorf("live restart %d after switching to %d", live+1, other+1)
	}
	id = c.Send(map[string]any{"op": "undo"})
	if r := c.Reply(id); r["type"] != "ack" || !strings.Contains(r["message"].(string), "switch to restart") {
		t.Fatalf("undo: %v", r)
	}
	f = c.FrameAfter(id)
	if b := streamtest.Num(streamtest.Get(f, "bound")); math.Abs(b-bounds[chosen]) > 1e-6*math.Abs(b) {
		t.Errorf("after undo: bound %v, want the chosen restart's %v", b, bounds[chosen])
	}
	if live := int(streamtest.Num(streamtest.Get(f, "restarts", "live"))) - 1; live != chosen {
		t.Errorf("live restart %d after undo, want %d", live+1, chosen+1)
	}
	for _, tc := range []struct {
		cmd  map[string]any
		want string
	}{
		{map[string]any{"op": "restart"}, `missing "restart"`},
		{map[string]any{"op": "restart", "restart": 0}, "there is no restart 0"},
		{map[string]any{"op": "restart", "restart": 99}, "there is no restart 99 (the preset ran restarts 1…"},
		{map[string]any{"op": "restart", "restart": "one"}, `field "restart"`},
		{map[string]any{"op": "restart", "restart": 1.5}, `field "restart"`},
	} {
		r := c.Reply(c.Send(tc.cmd))
		if r["type"] != "error" || !strings.Contains(fmt.Sprint(r["error"]), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.cmd, r, tc.want)
		}
	}
	// The session carries on.
	c.Ack(map[string]any{"op": "step", "n": 1})
}

// TestRestartOpWithoutRestarts: outside the robot preset there is nothing
// to switch to.
func TestRestartOpWithoutRestarts(t *testing.T) {
	e := newEnv(t, nil)
	c := e.Dial(t, "")
	r := c.Reply(c.Send(map[string]any{"op": "restart", "restart": 1}))
	if r["type"] != "error" || !strings.Contains(fmt.Sprint(r["error"]), "not chosen among restarts") {
		t.Fatalf("restart on the step data: %v", r)
	}
}

// TestRobotRestartsReproduce: every restart's kept model is the one the
// restart ended with — its bound is the bound the restart reported, so the
// table's numbers are what switching gives.
func TestRobotRestartsReproduce(t *testing.T) {
	ds := streamtest.RobotData(t)
	d := view.NewData(1, ds)
	m, reps, err := view.StartPreset(context.Background(), train.RobotPreset(1), d, view.Arch{Hidden: []int{3, 3}, Inducing: 10, Seed: 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	rs := view.NewRestarts(reps, 1, "", nil)
	if rs == nil || len(rs.List) < 2 {
		t.Fatalf("restarts %v", rs)
	}
	for k, e := range rs.List {
		if e.Model == nil {
			t.Fatalf("restart %d: no model (%s)", k+1, e.Failure)
		}
		if r := reps[k].Report.Bound; math.Abs(e.Bound-r) > 1e-9*math.Abs(r) {
			t.Errorf("restart %d: kept model's bound %v, the restart reported %v", k+1, e.Bound, r)
		}
		t.Logf("restart %d (%s start, seed %d): bound %.4f", k+1, e.Start, e.Init.Seed, e.Bound)
	}
	ev := engine.Evaluator{Workers: 1}
	res, _, err := ev.Evaluate(m, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Bound != rs.List[rs.Chosen].Bound {
		t.Errorf("the preset's model has bound %v, its restart %d in the table %v", res.Bound, rs.Chosen+1, rs.List[rs.Chosen].Bound)
	}
}

// TestExplorerFromCSV: the robot data written as a CSV (time, the signals,
// the true path as ground truth, the split) and uploaded open the latent
// explorer with the same numbers as the robot reader's data: the same
// model, the same geometry scores and baselines, the same held-out error.
func TestExplorerFromCSV(t *testing.T) {
	ds := streamtest.RobotData(t)
	e := newEnv(t, func(o *stream.Options) {
		o.Defaults.Play = false
		if err := o.Catalog.Add(ds, o.Limits.MaxRows); err != nil {
			t.Fatal(err)
		}
	})
	token, _, err := e.Srv.ParkData("test", streamtest.ViaCSV(t, ds, dataset.CSVOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	first := func(c *streamtest.Client) (setup, frame wire.Decoded) {
		su := c.Until("setup", 60*time.Second, func(m streamtest.Msg) bool { return m.Type() == "setup" }).Frame
		// A paused session's first frame that carries the analysis.
		f := c.Until("frame", 60*time.Second, func(m streamtest.Msg) bool {
			return m.Type() == "frame" && streamtest.Get(m.Frame, "view", "new_output") == true
		}).Frame
		return su, f
	}
	s1, f1 := first(e.Dial(t, fmt.Sprintf("data=robot&hidden=3,3&m=%d&seed=1&play=0", train.RobotInducing)))
	s2, f2 := first(e.Dial(t, "resume="+token))
	if streamtest.Get(s2, "view", "kind") != explorer.Kind {
		t.Fatalf("the CSV opens the %v view", streamtest.Get(s2, "view", "kind"))
	}
	for _, path := range [][]any{{"view", "truth", "revisits"}, {"view", "truth", "min_lag"}, {"view", "truth", "radius"},
		{"view", "truth", "baselines", 0, "score"}, {"view", "truth", "baselines", 1, "score"}, {"view", "n_train"}, {"view", "n_all"}} {
		if a, b := streamtest.Get(s1, path...), streamtest.Get(s2, path...); fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("setup %v: %v from the robot reader, %v from the CSV", path, a, b)
		}
	}
	for _, path := range [][]any{{"bound"}, {"view", "scores", 0}, {"view", "scores", 1}, {"view", "test_rmse"}, {"view", "mean_rmse"}} {
		if a, b := streamtest.Get(f1, path...), streamtest.Get(f2, path...); fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("frame %v: %v from the robot reader, %v from the CSV", path, a, b)
		}
	}
	t.Logf("geometry h1 %v, h2 %v; baselines %v %v; test RMSE %v dBm", streamtest.Get(f1, "view", "scores", 0), streamtest.Get(f1, "view", "scores", 1),
		streamtest.Get(s1, "view", "truth", "baselines", 0, "score"), streamtest.Get(s1, "view", "truth", "baselines", 1, "score"), streamtest.Get(f1, "view", "test_rmse"))
}

// TestExplorerWithoutTruth: five signals over time, with neither ground
// truth nor a test split, open the latent explorer with no geometry score
// and no held-out error.
func TestExplorerWithoutTruth(t *testing.T) {
	ds := streamtest.WideData(60, 5)
	e := newEnv(t, func(o *stream.Options) {
		if err := o.Catalog.Add(ds, o.Limits.MaxRows); err != nil {
			t.Fatal(err)
		}
	})
	c := e.Dial(t, "data=wide&hidden=3,3&m=10&play=0")
	su := c.Until("setup", 60*time.Second, func(m streamtest.Msg) bool { return m.Type() == "setup" }).Frame
	if streamtest.Get(su, "view", "kind") != explorer.Kind || streamtest.Get(su, "view", "truth") != nil || streamtest.Get(su, "view", "x_test") != nil {
		t.Fatalf("view %v, truth %v, test set %v", streamtest.Get(su, "view", "kind"), streamtest.Get(su, "view", "truth"), streamtest.Get(su, "view", "x_test"))
	}
	f := c.Until("frame", 60*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" }).Frame
	if sc, _ := streamtest.Get(f, "view", "scores").([]any); len(sc) != 0 || streamtest.Get(f, "view", "test_rmse") != nil {
		t.Fatalf("scores %v, test RMSE %v without ground truth or test split", sc, streamtest.Get(f, "view", "test_rmse"))
	}
	if got := len(streamtest.Floats(streamtest.Get(f, "layers", 0, "mean"))); got != 3*60 {
		t.Fatalf("hidden layer 1: %d values, want %d", got, 3*60)
	}
}

// TestExplorerLargeDataSample: above explorer.SampleRows rows the setup
// carries the sample's rows (n) and says the data's (n_rows), and frames
// carry the sample's hidden means.
func TestExplorerLargeDataSample(t *testing.T) {
	ds := streamtest.WideData(5000, 4)
	e := newEnv(t, func(o *stream.Options) {
		o.Limits.MaxRows = 5000
		if err := o.Catalog.Add(ds, o.Limits.MaxRows); err != nil {
			t.Fatal(err)
		}
	})
	c := e.Dial(t, "data=wide&hidden=3,3&m=10&play=0")
	su := c.Until("setup", 60*time.Second, func(m streamtest.Msg) bool { return m.Type() == "setup" }).Frame
	n, rows := int(streamtest.Num(streamtest.Get(su, "n"))), int(streamtest.Num(streamtest.Get(su, "n_rows")))
	if n != explorer.SampleRows || rows != 5000 || len(streamtest.Floats(streamtest.Get(su, "x"))) != n || len(streamtest.Floats(streamtest.Get(su, "view", "sample", "train"))) != n {
		t.Fatalf("setup: n %d, n_rows %d, %d inputs, %d sample ids; want %d of 5000", n, rows, len(streamtest.Floats(streamtest.Get(su, "x"))), len(streamtest.Floats(streamtest.Get(su, "view", "sample", "train"))), explorer.SampleRows)
	}
	f := c.Until("frame", 60*time.Second, func(m streamtest.Msg) bool { return m.Type() == "frame" }).Frame
	if got := len(streamtest.Floats(streamtest.Get(f, "layers", 0, "mean"))); got != 3*n {
		t.Fatalf("hidden layer 1: %d values, want %d (the sample's rows)", got, 3*n)
	}
	if streamtest.Get(f, "view", "density") == nil {
		t.Fatal("a paused frame came without the density of every row")
	}
}
