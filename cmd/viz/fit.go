package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/train"
)

func init() {
	register(command{name: "fit", summary: "fit a deep GP to a data set and write the model file", run: runFit})
}

// fitFlags are the parsed flags of viz fit.
type fitFlags struct {
	data, hidden, kernel, out, freeze, hiddenInit, inputKernel string
	optimizer                                                  train.Method
	inducing, iters, restarts, batch, workers                  int
	seed                                                       uint64
	lr, tol, hiddenNoise, outputNoise                          float64
	window                                                     int
	quiet                                                      bool
}

type datasetJSON struct {
	Name        string   `json:"name"`
	Spec        string   `json:"spec"`
	Description string   `json:"description"`
	InputNames  []string `json:"input_names"`
	OutputNames []string `json:"output_names"`
}

type initJSON struct {
	train.InitConfig
	Method        string     `json:"method"`
	Restarts      int        `json:"restarts"`
	Chosen        int        `json:"chosen_restart"`
	RestartBounds []*float64 `json:"restart_bounds"`
}

type fitJSON struct {
	Optimizer    train.Method `json:"optimizer"`
	LearningRate float64      `json:"learning_rate,omitempty"`
	BatchSize    int          `json:"batch_size,omitempty"`
	Frozen       []string     `json:"frozen"`
	MaxIters     int          `json:"max_iters"`
	Tol          float64      `json:"tol"`
	Window       int          `json:"window"`
	Iters        int          `json:"iters"`
	Bound        float64      `json:"bound"`
	Converged    bool         `json:"converged"`
	Status       train.Status `json:"status"` // why the fit stopped, in words
	Events       []string     `json:"events"`
}

const initMethod = "per layer: inducing inputs at the quantiles (1-D) or k-means centres of the layer's input messages; " +
	"first hidden layer carries the principal components of Y (pca) or X (linear), later hidden layers the identity; " +
	"q_mu by sparse regression of those targets, q_sqrt = chol(noise ratio · Kuu); restart r: seed+r, perturbed for r > 0, " +
	"restart 1 uses the other first-hidden-layer choice; the best bound is kept"

func runFit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fit", stderr)
	var f fitFlags
	fs.StringVar(&f.data, "data", "step", `data set: "step", "robot" or "robot:PATH", "frey" or "frey:PATH" ("robot" and "frey": the files 'viz data get' fetches), or "csv:PATH" (a header row; columns named x… are inputs, y… outputs)`)
	fs.StringVar(&f.hidden, "hidden", "", "hidden-layer widths, comma-separated (empty: a one-layer GP)")
	fs.IntVar(&f.inducing, "inducing", train.DefaultInducing, "inducing points per layer")
	fs.StringVar(&f.kernel, "kernel", "rbf", "kernel of every layer: rbf, rbfiso (one shared lengthscale) or linear")
	fs.StringVar(&f.inputKernel, "input-kernel", "", "first layer's kernel if not -kernel (empty: rbfiso for frey data, else -kernel)")
	fs.IntVar(&f.iters, "iters", train.DefaultMaxIters, "iteration cap per restart (the convergence test, -tol and -window, usually stops sooner)")
	fs.TextVar(&f.optimizer, "optimizer", train.LBFGS, "lbfgs or adam")
	fs.Float64Var(&f.lr, "lr", train.DefaultLearningRate, "adam learning rate")
	fs.IntVar(&f.batch, "batch", 0, "adam minibatch size (0: full batch)")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed (initialisation, restarts, minibatches)")
	fs.IntVar(&f.restarts, "restarts", 1, "seeded initialisations to fit; the best bound is kept")
	fs.StringVar(&f.out, "out", "", "output model file (empty or -: standard output)")
	fs.StringVar(&f.freeze, "freeze", "", "parameter groups to keep fixed, comma-separated: kernel, noise, inducing, q_mu, q_sqrt")
	fs.Float64Var(&f.tol, "tol", train.DefaultTol, "converged when the best bound improved by less than tol·max(1, |bound|) over the last -window iterations")
	fs.IntVar(&f.window, "window", train.DefaultWindow, "iterations over which -tol is measured")
	fs.StringVar(&f.hiddenInit, "hidden-init", "auto", "first hidden layer's start: auto, pca or linear")
	fs.Float64Var(&f.hiddenNoise, "hidden-noise", train.DefaultHiddenNoise, "hidden layers' initial noise variance relative to their output variance")
	fs.Float64Var(&f.outputNoise, "output-noise", train.DefaultOutputNoise, "initial likelihood noise variance relative to var(Y)")
	fs.IntVar(&f.workers, "workers", 0, "goroutines per evaluation (0: share the CPUs between restarts)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress output")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	hidden, err := engine.ParseHidden(f.hidden)
	if err != nil {
		return badInput("viz fit: -hidden: %v", err)
	}
	frozen, frozenNames, err := parseGroups(f.freeze)
	if err != nil {
		return badInput("viz fit: -freeze: %v", err)
	}
	if f.restarts < 1 {
		return badInput("viz fit: -restarts %d: want ≥ 1", f.restarts)
	}
	if f.inducing < 1 {
		return badInput("viz fit: -inducing %d: want ≥ 1", f.inducing)
	}
	if !(f.hiddenNoise > 0) || !(f.outputNoise > 0) {
		return badInput("viz fit: -hidden-noise and -output-noise must be > 0")
	}
	if f.iters < 1 {
		return badInput("viz fit: -iters %d: want ≥ 1", f.iters)
	}
	ds, err := dataset.Load(f.data)
	if err != nil {
		return usageError{fmt.Errorf("viz fit: %w", err)}
	}
	for _, w := range dataset.Warnings(ds) {
		fmt.Fprintf(stderr, "viz fit: warning: %s\n", w)
	}
	nx, ny := dataset.FitNormalizer(ds.X), dataset.FitNormalizer(ds.Y)
	x, y := nx.Apply(ds.X), ny.Apply(ds.Y)

	if f.inputKernel == "" && ds.Name == "frey" {
		f.inputKernel = "rbfiso" // 560 pixels: one shared lengthscale (see README, Frey faces)
	}
	icfg := train.InitConfig{Hidden: hidden, Inducing: f.inducing, Kernel: f.kernel, InputKernel: f.inputKernel, Seed: f.seed,
		HiddenNoise: f.hiddenNoise, OutputNoise: f.outputNoise, HiddenInit: f.hiddenInit}
	if _, err := icfg.Defaults(); err != nil {
		return badInput("viz fit: %v", err)
	}
	tcfg := train.TrainerConfig{Method: f.optimizer, LearningRate: f.lr, BatchSize: f.batch, Frozen: frozen, Seed: f.seed, Workers: f.workers, Tol: f.tol, Window: f.window}
	if err := tcfg.Check(); err != nil {
		return badInput("viz fit: %v", err)
	}
	opt := train.FitOptions{MaxIters: f.iters}

	var prog *progress
	var onStep func(int, train.StepInfo)
	if !f.quiet {
		prog = newProgress(stderr, f.restarts, f.iters)
		onStep = prog.step
	}
	start := time.Now()
	var (
		model *engine.Model
		best  int
		reps  []train.RestartReport
	)
	model, best, reps, err = train.FitRestarts(ctx, x, y, icfg, tcfg, opt, f.restarts, onStep)
	if prog != nil {
		prog.finish()
	}
	interrupted := err != nil && model != nil && ctx.Err() != nil
	if err != nil && !interrupted {
		return fmt.Errorf("viz fit: %w", err)
	}
	final := reps[best].Report
	if !f.quiet {
		for _, r := range reps {
			status := fmt.Sprintf("bound %.6g after %d iterations", r.Report.Bound, r.Report.Iters)
			if r.Err != nil {
				status = "failed: " + r.Err.Error()
			}
			mark := " "
			if r.Restart == best {
				mark = "*"
			}
			fmt.Fprintf(stderr, "%s restart %d (seed %d, %s): %s\n", mark, r.Restart, r.Init.Seed, r.Init.HiddenInit, status)
		}
		fmt.Fprintf(stderr, "viz fit: bound %.10g (restart %d) in %.2fs, stopped by %s after %d iterations\n", final.Bound, best, time.Since(start).Seconds(), final.Status, final.Iters)
	}

	bounds := make([]*float64, len(reps))
	for i, r := range reps {
		if r.Err == nil && !math.IsNaN(r.Report.Bound) && !math.IsInf(r.Report.Bound, 0) {
			b := r.Report.Bound
			bounds[i] = &b
		}
	}
	extra := map[string]any{
		"dataset":       datasetJSON{Name: ds.Name, Spec: f.data, Description: ds.Description, InputNames: ds.InputNames, OutputNames: ds.OutputNames},
		"normalization": engine.NormalizationJSON(nx, ny),
		"init":          initJSON{InitConfig: reps[best].Init, Method: initMethod, Restarts: f.restarts, Chosen: best, RestartBounds: bounds},
		"fit": fitJSON{Optimizer: tcfg.Method, LearningRate: adamOnly(tcfg.Method, f.lr), BatchSize: f.batch, Frozen: frozenNames,
			MaxIters: f.iters, Tol: tcfg.Tol, Window: tcfg.Window, Iters: final.Iters, Bound: final.Bound, Converged: final.Status.Converged(), Status: final.Status, Events: nonNil(final.Events)},
	}
	raw := make(map[string]json.RawMessage, len(extra))
	for k, v := range extra {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("viz fit: %w", err)
		}
		raw[k] = b
	}
	var buf bytes.Buffer
	if err := engine.WriteModel(&buf, model, raw); err != nil {
		return fmt.Errorf("viz fit: %w", err)
	}
	if f.out == "" || f.out == "-" {
		if _, err := stdout.Write(buf.Bytes()); err != nil {
			return err
		}
	} else if err := os.WriteFile(f.out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("viz fit: %w", err)
	}
	if interrupted {
		// The work so far is kept; the exit status still says it stopped early.
		return fmt.Errorf("viz fit: interrupted after %d iterations; wrote the best model so far (bound %.6g)", final.Iters, final.Bound)
	}
	return nil
}

func adamOnly(method train.Method, lr float64) float64 {
	if method == train.Adam {
		return lr
	}
	return 0
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// parseGroups parses a comma-separated list of parameter group names.
func parseGroups(s string) (map[engine.Group]bool, []string, error) {
	frozen := map[engine.Group]bool{}
	names := []string{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		g, ok := engine.ParseGroup(f)
		if !ok {
			return nil, nil, fmt.Errorf("unknown group %q: want kernel, noise, inducing, q_mu or q_sqrt", f)
		}
		if !frozen[g] {
			names = append(names, g.String())
		}
		frozen[g] = true
	}
	return frozen, names, nil
}

// progress reports fitting progress on stderr: a bar redrawn in place when
// stderr is a terminal, plain lines every few seconds otherwise.
type progress struct {
	w        io.Writer
	tty      bool
	total    int // iterations over all restarts at most
	iters    []int
	bounds   []float64
	start    time.Time
	last     time.Time
	interval time.Duration
	drawn    bool
}

func newProgress(w io.Writer, restarts, iters int) *progress {
	p := &progress{w: w, total: restarts * iters, iters: make([]int, restarts), bounds: make([]float64, restarts), start: time.Now()}
	for i := range p.bounds {
		p.bounds[i] = math.NaN()
	}
	p.tty = isTerminal(w)
	p.interval = 2 * time.Second
	if p.tty {
		p.interval = 100 * time.Millisecond
	}
	return p
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func (p *progress) step(restart int, s train.StepInfo) {
	p.iters[restart] = s.Iter
	p.bounds[restart] = s.Bound
	if s.Event != "" {
		p.clear()
		fmt.Fprintf(p.w, "restart %d iteration %d: %s\n", restart, s.Iter, s.Event)
	}
	now := time.Now()
	if now.Sub(p.last) < p.interval && !s.Status.Converged() {
		return
	}
	p.last = now
	done := 0
	for _, it := range p.iters {
		done += it
	}
	best := math.Inf(-1)
	for _, b := range p.bounds {
		if b > best {
			best = b
		}
	}
	el := now.Sub(p.start).Seconds()
	rate := float64(done) / math.Max(el, 1e-9)
	eta := "?"
	if rate > 0 {
		eta = (time.Duration(float64(p.total-done) / rate * float64(time.Second))).Round(time.Second).String()
	}
	if p.tty {
		const width = 30
		filled := min(width, width*done/max(1, p.total))
		fmt.Fprintf(p.w, "\r[%s%s] iter %d/%d  bound %.6g  %.0f it/s  ETA ≤ %s ", strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, p.total, best, rate, eta)
		p.drawn = true
		return
	}
	fmt.Fprintf(p.w, "restart %d iteration %d: bound %.10g (all restarts: %d/%d iterations, %.0f it/s, ETA ≤ %s)\n", restart, s.Iter, s.Bound, done, p.total, rate, eta)
}

func (p *progress) clear() {
	if p.tty && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

func (p *progress) finish() {
	if p.tty && p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}
