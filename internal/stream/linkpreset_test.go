package stream

import (
	"net/url"
	"slices"
	"testing"

	"dgpviz/internal/train"
)

// TestLinkPreset: a link to data of another view opens in that view's
// preset unless it gives the architecture; a link to data of the same
// view keeps the server's default.
func TestLinkPreset(t *testing.T) {
	l := DefaultLimits()
	cat, err := NewCatalog([]string{"csv:../../examples/loop.csv", "csv:../../internal/dataset/testdata/good.csv"}, l)
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
