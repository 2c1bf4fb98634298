package admit

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"dgpviz/internal/allviews"
	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
)

// MaxSpeed is the largest iterations-per-second cap a client may set.
const MaxSpeed = 100000

// Config is a session's configuration: everything that a shared link
// reproduces. Its URL form (see Query and ParseQuery) is
//
//	?data=step&hidden=1,1&m=12&opt=lbfgs&lr=0.01&seed=1&frozen=kernel,noise&play=1&speed=60
type Config struct {
	Dataset      string       `json:"dataset"`       // a name from the server's catalogue
	Hidden       []int        `json:"hidden"`        // widths of the hidden layers; layers = len(Hidden)+1
	Inducing     int          `json:"inducing"`      // inducing points per layer
	Method       train.Method `json:"method"`        // "lbfgs", "adam" or "svi" on the wire
	LearningRate float64      `json:"learning_rate"` // adam's step size (ignored by lbfgs)
	Seed         uint64       `json:"seed"`          // initialisation and minibatch seed
	Frozen       []string     `json:"frozen"`        // frozen parameter groups (engine.Group names)
	Play         bool         `json:"play"`          // optimise from the start (and: is optimising)
	Speed        int          `json:"speed"`         // at most this many iterations per second; 0: as fast as possible
	// WatchRepair runs the repair of an edit at Speed from its first
	// iteration instead of as fast as it can until the bound settles, so
	// that a class watches the optimizer bring the layers back.
	WatchRepair bool `json:"watch_repair"`
}

// DefaultConfig is the demo: a 3-layer deep GP on the step function.
func DefaultConfig() Config {
	return Config{Dataset: "step", Hidden: []int{1, 1}, Inducing: train.DefaultInducing, Method: train.LBFGS{}, LearningRate: 0.01, Seed: 1, Frozen: []string{}, Play: true, Speed: 60}
}

// Limits bound what one session and the server may use. A command or
// configuration that exceeds a limit is refused with an error naming it.
type Limits struct {
	MaxSessions int `json:"max_sessions"` // concurrent websocket sessions
	// MaxSessionsPerClient bounds the sessions of one client (ClientOf: an
	// address, the loopback range, an IPv6 /64); 0: no bound.
	MaxSessionsPerClient int `json:"max_sessions_per_client"`
	MaxRows              int `json:"max_rows"`          // training rows of a data set
	MaxLayers            int `json:"max_layers"`        // layers (hidden widths + 1)
	MaxWidth             int `json:"max_width"`         // width of a hidden layer
	MaxInducing          int `json:"max_inducing"`      // inducing points per layer
	MaxCommandBytes      int `json:"max_command_bytes"` // size of one command message
	MaxSteps             int `json:"max_steps"`         // iterations one "step" command may ask for
	MaxFollowers         int `json:"max_followers"`     // read-only followers of shared sessions, all together
	// Budgets (EstimateSession, CheckBudget): a configuration whose estimated memory or
	// iteration time exceeds them is refused; 0 means no budget.
	SessionMemory int64         `json:"session_memory"` // bytes one session may use
	ServerMemory  int64         `json:"server_memory"`  // bytes all sessions together
	MaxIterTime   time.Duration `json:"max_iter_time"`  // one optimizer iteration (nanoseconds)
}

// DefaultMaxSessionsPerClient leaves three quarters of the default 16
// sessions to other clients whatever one client opens.
const DefaultMaxSessionsPerClient = 4

// DefaultMaxFollowers bounds the followers of all sessions together.
const DefaultMaxFollowers = 250

// DefaultLimits suit a lecture demo on a laptop.
func DefaultLimits() Limits {
	return Limits{MaxSessions: 16, MaxSessionsPerClient: DefaultMaxSessionsPerClient, MaxRows: 2000, MaxLayers: 6, MaxWidth: 8, MaxInducing: 64, MaxCommandBytes: 16 << 10, MaxSteps: 1000, MaxFollowers: DefaultMaxFollowers,
		SessionMemory: DefaultSessionMemory, ServerMemory: DefaultServerMemory, MaxIterTime: DefaultMaxIterTime}
}

// CheckModel checks the shape of a model that a session would start from
// (a loaded model file): its data's n rows, its layers, the widths of its
// hidden layers and the most inducing points of a layer.
func (l Limits) CheckModel(n, layers int, hidden []int, inducing int) error {
	switch {
	case n > l.MaxRows:
		return fmt.Errorf("the model's data has %d rows, more than the limit of %d rows (the server's %s raises it)", n, l.MaxRows, dataset.RowsFlag)
	case n < dataset.MinTrainRows:
		return fmt.Errorf("the model's data: %w", dataset.TooFewRows(n))
	case layers > l.MaxLayers:
		return fmt.Errorf("the model has %d layers, more than the limit of %d layers", layers, l.MaxLayers)
	case inducing > l.MaxInducing:
		return fmt.Errorf("the model has %d inducing points in a layer, more than the limit of %d inducing points (the server's -max-inducing raises it)", inducing, l.MaxInducing)
	}
	for i, w := range hidden {
		if w > l.MaxWidth {
			return fmt.Errorf("the model's hidden layer %d has width %d, more than the limit of %d", i+1, w, l.MaxWidth)
		}
	}
	return nil
}

// Validate checks c against the limits and the catalogue.
func (c Config) Validate(l Limits, cat *dataset.Catalog) error {
	if cat != nil && cat.Get(c.Dataset) == nil {
		return fmt.Errorf("unknown data set %q (available: %s)", c.Dataset, strings.Join(cat.Names(), ", "))
	}
	if len(c.Hidden)+1 > l.MaxLayers {
		return fmt.Errorf("hidden: %d hidden layers make %d layers, more than the limit of %d layers", len(c.Hidden), len(c.Hidden)+1, l.MaxLayers)
	}
	for i, w := range c.Hidden {
		if w < 1 || w > l.MaxWidth {
			return fmt.Errorf("hidden layer %d: width %d out of range 1…%d", i+1, w, l.MaxWidth)
		}
	}
	if c.Inducing < 1 || c.Inducing > l.MaxInducing {
		if c.Inducing > l.MaxInducing {
			return fmt.Errorf("inducing: %d out of range 1…%d (the server's -max-inducing raises the limit)", c.Inducing, l.MaxInducing)
		}
		return fmt.Errorf("inducing: %d out of range 1…%d", c.Inducing, l.MaxInducing)
	}
	if !(c.LearningRate > 0) || c.LearningRate > 10 || math.IsInf(c.LearningRate, 0) {
		return fmt.Errorf("learning_rate: %v, want a number in (0, 10]", c.LearningRate)
	}
	if c.Speed < 0 || c.Speed > MaxSpeed {
		return fmt.Errorf("speed: %d iterations per second out of range 0…%d (0: as fast as possible)", c.Speed, MaxSpeed)
	}
	for _, g := range c.Frozen {
		if _, ok := engine.ParseGroup(g); !ok {
			return fmt.Errorf("frozen: unknown parameter group %q (want kernel, noise, inducing, q_mu or q_sqrt)", g)
		}
	}
	if cat != nil {
		ds := cat.Get(c.Dataset)
		n, q := ds.X.Dims()
		_, d := ds.Y.Dims()
		if err := CheckBudget(EstimateSession(c, ds, n, q, d), l); err != nil {
			return err
		}
	}
	return nil
}

// Query returns the URL query form of c.
func (c Config) Query() url.Values {
	v := url.Values{}
	v.Set("data", c.Dataset)
	hs := make([]string, len(c.Hidden))
	for i, w := range c.Hidden {
		hs[i] = strconv.Itoa(w)
	}
	v.Set("hidden", strings.Join(hs, ","))
	v.Set("m", strconv.Itoa(c.Inducing))
	if c.Method != nil { // nil: the default, lbfgs
		v.Set("opt", c.Method.String())
	}
	v.Set("lr", strconv.FormatFloat(c.LearningRate, 'g', -1, 64))
	v.Set("seed", strconv.FormatUint(c.Seed, 10))
	if len(c.Frozen) > 0 {
		v.Set("frozen", strings.Join(c.Frozen, ","))
	}
	v.Set("play", map[bool]string{true: "1", false: "0"}[c.Play])
	v.Set("speed", strconv.Itoa(c.Speed))
	return v
}

// ParseQuery reads a Config from URL parameters, starting from def for
// parameters that are absent. It does not validate limits.
func ParseQuery(q url.Values, def Config) (Config, error) {
	c := def
	c.Hidden = slices.Clone(def.Hidden)
	c.Frozen = slices.Clone(def.Frozen)
	if q.Has("data") {
		c.Dataset = q.Get("data")
	}
	if q.Has("hidden") {
		h, err := train.ParseHidden(q.Get("hidden"))
		if err != nil {
			return def, fmt.Errorf("%v", err) // names the hidden widths
		}
		c.Hidden = h
	}
	if q.Has("m") {
		m, err := strconv.Atoi(q.Get("m"))
		if err != nil {
			return def, fmt.Errorf("m: %q is not an integer", q.Get("m"))
		}
		c.Inducing = m
	}
	if q.Has("opt") {
		m, err := train.ParseMethod(q.Get("opt"))
		if err != nil {
			return def, fmt.Errorf("opt: %q, want \"lbfgs\" or \"adam\"", q.Get("opt"))
		}
		c.Method = m
	}
	if q.Has("lr") {
		lr, err := strconv.ParseFloat(q.Get("lr"), 64)
		if err != nil {
			return def, fmt.Errorf("lr: %q is not a number", q.Get("lr"))
		}
		c.LearningRate = lr
	}
	if q.Has("seed") {
		s, err := strconv.ParseUint(q.Get("seed"), 10, 64)
		if err != nil {
			return def, fmt.Errorf("seed: %q is not a non-negative integer", q.Get("seed"))
		}
		c.Seed = s
	}
	if q.Has("play") {
		switch q.Get("play") {
		case "1", "true":
			c.Play = true
		case "0", "false":
			c.Play = false
		default:
			return def, fmt.Errorf("play: %q, want 1 or 0", q.Get("play"))
		}
	}
	if q.Has("speed") {
		sp, err := strconv.Atoi(q.Get("speed"))
		if err != nil {
			return def, fmt.Errorf("speed: %q is not an integer", q.Get("speed"))
		}
		c.Speed = sp
	}
	if q.Has("frozen") {
		c.Frozen = []string{}
		for _, g := range strings.Split(q.Get("frozen"), ",") {
			if g = strings.TrimSpace(g); g != "" && !slices.Contains(c.Frozen, g) {
				c.Frozen = append(c.Frozen, g)
			}
		}
	}
	return c, nil
}

func (c Config) String() string { return fmt.Sprint(c.Query().Encode()) }

// WithPreset returns c with the architecture v shows its data with: its
// preset's hidden widths and inducing points (capped by the limits), or
// def's when it has none.
func WithPreset(c Config, v view.View, def Config, l Limits) Config {
	a, ok := v.Preset(nil)
	if !ok {
		c.Hidden, c.Inducing = slices.Clone(def.Hidden), def.Inducing
		return c
	}
	c.Hidden, c.Inducing = slices.Clone(a.Hidden), a.Inducing
	if l.MaxInducing > 0 {
		c.Inducing = min(c.Inducing, l.MaxInducing)
	}
	return c
}

// PresetConfig returns c with the architecture of the preset of the view
// that shows ds, when it has one (the latent explorer's and the
// autoencoder's), capped by the limits; otherwise c as it is.
func PresetConfig(c Config, ds *dataset.Dataset, l Limits) Config {
	if v := allviews.For(ds, nil); hasPreset(v) {
		return WithPreset(c, v, c, l)
	}
	return c
}

// LinkPreset returns cfg, read from the link parameters q, with the
// architecture of the preset of the view that shows the data set q names
// for what q leaves out (hidden, m), when that view differs from the one
// of def's data set: a link to another data set opens in its view's
// preset, as choosing it in the page's data menu does.
func LinkPreset(cfg Config, q url.Values, def Config, l Limits, cat *dataset.Catalog) Config {
	next, cur := cat.Get(cfg.Dataset), cat.Get(def.Dataset)
	if !q.Has("data") || next == nil || cur != nil && allviews.Kind(next) == allviews.Kind(cur) {
		return cfg
	}
	p := WithPreset(cfg, allviews.For(next, nil), def, l)
	if !q.Has("hidden") {
		cfg.Hidden = p.Hidden
	}
	if !q.Has("m") {
		cfg.Inducing = p.Inducing
	}
	return cfg
}

// PresetLimits returns l with a per-session memory budget large enough for
// the preset of every data set in cat (the autoencoder's on 1965 Frey
// faces is estimated at about 400 MiB), when the budget is set and
// smaller; the server-wide budget is left as it is. viz serve applies it
// when -session-memory is not given.
func PresetLimits(l Limits, cat *dataset.Catalog) Limits {
	if l.SessionMemory <= 0 {
		return l
	}
	for _, name := range cat.Names() {
		ds := cat.Get(name)
		if !hasPreset(allviews.For(ds, nil)) {
			continue
		}
		n, q := ds.X.Dims()
		_, d := ds.Y.Dims()
		// The build's peak (the restarts side by side) is what a client
		// must be able to reserve (reserve: one client's share is at
		// least a session's budget).
		e := EstimateSession(PresetConfig(DefaultConfig(), ds, l), ds, n, q, d)
		if need := max(e.Bytes, e.Build); need > l.SessionMemory {
			l.SessionMemory = (need + (1 << 20) - 1) >> 20 << 20
		}
	}
	return l
}

func hasPreset(v view.View) bool {
	_, ok := v.Preset(nil)
	return ok
}

// LiveMethod is the method a session of c on n rows runs: the one
// asked for, except that L-BFGS (the default) gives way to SVI above
// train.StochasticRows rows, as viz fit's automatic choice does.
func (c Config) LiveMethod(n int) train.Method {
	if c.Method == nil || c.Method == (train.LBFGS{}) {
		return train.ChooseMethod(n)
	}
	return c.Method
}

// Arch is the part of c that shapes and starts the model.
func (c Config) Arch() view.Arch {
	return view.Arch{Hidden: slices.Clone(c.Hidden), Inducing: c.Inducing, Seed: c.Seed}
}

// Trainer is the optimizer's configuration for c on n rows,
// with workers evaluator workers. L-BFGS steps on every row: above
// train.StochasticRows rows the session fits by SVI instead, the choice
// viz fit makes by itself (train.ChooseMethod); adam and svi are as
// asked.
func (c Config) Trainer(workers, n int) train.TrainerConfig {
	method := c.LiveMethod(n)
	fr := map[engine.Group]bool{}
	for _, g := range c.Frozen {
		if gg, ok := engine.ParseGroup(g); ok {
			fr[gg] = true
		}
	}
	return train.TrainerConfig{Method: method, LearningRate: c.LearningRate, Frozen: fr, Seed: c.Seed, Workers: workers}
}
