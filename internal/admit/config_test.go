package admit

import (
	"math"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/train"

	"gonum.org/v1/gonum/mat"
)

// TestLinkPreset: a link to data of another view opens in that view's
// preset unless it gives the architecture; a link to data of the same
// view keeps the server's default.
func TestLinkPreset(t *testing.T) {
	l := DefaultLimits()
	cat, err := dataset.NewCatalog([]string{"csv:../../examples/loop.csv", "csv:../dataset/testdata/good.csv"}, l.MaxRows)
	if err != nil {
		t.Fatal(err)
	}
	def := DefaultConfig() // the step demo: hidden 1,1
	robot := train.RobotPreset(0).Init
	for _, c := range []struct {
		query    string
		hidden   []int
		inducing int
	}{
		{"data=csv:loop.csv", robot.Hidden, min(robot.Inducing, l.MaxInducing)},
		{"data=csv:loop.csv&hidden=2", []int{2}, min(robot.Inducing, l.MaxInducing)},
		{"data=csv:loop.csv&m=7", robot.Hidden, 7},
		{"data=csv:good.csv", def.Hidden, def.Inducing}, // one output: the step demo's view
		{"seed=3", def.Hidden, def.Inducing},
	} {
		q, _ := url.ParseQuery(c.query)
		cfg, err := ParseQuery(q, def)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		cfg = LinkPreset(cfg, q, def, l, cat)
		if !slices.Equal(cfg.Hidden, c.hidden) || cfg.Inducing != c.inducing {
			t.Errorf("%s: hidden %v, %d inducing points; want %v, %d", c.query, cfg.Hidden, cfg.Inducing, c.hidden, c.inducing)
		}
	}
}

func TestConfigQueryRoundTrip(t *testing.T) {
	c := Config{Dataset: "robot", Hidden: []int{3, 2}, Inducing: 20, Method: train.Adam{}, LearningRate: 0.003, Seed: 42, Frozen: []string{"kernel", "q_sqrt"}, Play: false, Speed: 200}
	got, err := ParseQuery(c.Query(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != c.String() {
		t.Fatalf("round trip: %v → %v", c, got)
	}
	for _, bad := range []string{"hidden=a", "m=x", "lr=fast", "seed=-1", "play=maybe", "speed=quick"} {
		q, _ := url.ParseQuery(bad)
		if _, err := ParseQuery(q, DefaultConfig()); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// TestPresetLimitsAdmitTheBuild: viz serve raises the session budget to
// what a preset's build needs at its peak (its restarts side by side), so
// that one client can open it: the Frey-shaped autoencoder (1965 frames of
// 560 pixels) was refused with the default limits, its build estimated
// above the 512 MiB one client may use.
func TestPresetLimitsAdmitTheBuild(t *testing.T) {
	const n, d = 1965, 560
	y := mat.NewDense(n, d, nil)
	for i := range n {
		for j := range d {
			y.Set(i, j, math.Sin(float64(i)/40+float64(j)/9))
		}
	}
	ds := &dataset.Dataset{Name: "frames", X: y, Y: y}
	l := DefaultLimits()
	cat, err := dataset.NewCatalog(nil, l.MaxRows)
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Add(ds, l.MaxRows); err != nil {
		t.Fatal(err)
	}
	raised := PresetLimits(l, cat)
	e := EstimateSession(PresetConfig(DefaultConfig(), ds, raised), ds, n, d, d)
	share := NewLedger(raised, &sync.Mutex{}, false).ClientShare()
	if need := max(e.Bytes, e.Build); raised.SessionMemory < need || share < need {
		t.Errorf("session budget %d MiB, one client's share %d MiB; the preset's build needs %d MiB", raised.SessionMemory>>20, share>>20, need>>20)
	}
}

// TestCheckModel: a loaded model's shape is held to every limit, and the
// refusal counts layers from 1 and names the flag that raises the limit
// where there is one.
func TestCheckModel(t *testing.T) {
	l := DefaultLimits()
	for _, c := range []struct {
		n, layers int
		hidden    []int
		inducing  int
		want      string // "" for none
	}{
		{100, 3, []int{2, 2}, 20, ""},
		{l.MaxRows + 1, 3, []int{2, 2}, 20, "-max-rows"},
		{dataset.MinTrainRows - 1, 3, []int{2, 2}, 20, "a fit needs at least"},
		{100, l.MaxLayers + 1, []int{2, 2}, 20, "layers"},
		{100, 3, []int{2, 2}, l.MaxInducing + 1, "-max-inducing"},
		{100, 3, []int{2, l.MaxWidth + 1}, 20, "hidden layer 2 has width"},
	} {
		err := l.CheckModel(c.n, c.layers, c.hidden, c.inducing)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want an error containing %q", c, err, c.want)
		}
	}
}
