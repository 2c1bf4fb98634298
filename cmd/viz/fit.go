package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/latent"
	"dgpviz/internal/modelfile"
	"dgpviz/internal/train"

	"gonum.org/v1/gonum/mat"
)

func init() {
	register(command{name: "fit", summary: "fit a deep GP to a data set and write the model file", run: runFit})
}

// fitFlags are the parsed flags of viz fit.
type fitFlags struct {
	data, hidden, kernel, out, freeze, hiddenInit, inputKernel, preset string
	optimizer                                                          train.MethodVar
	inducing, outputInducing, iters, restarts, batch, workers          int
	seed                                                               uint64
	lr, tol, tolAbs, tolDatum, hiddenNoise, outputNoise                float64
	window, horizon                                                    int
	quiet, naturalGradient, embedData                                  bool
	finalQ, fitChoice, trace                                           string
	sharded                                                            shardFlags
	maxRows                                                            int    // -max-rows
	shape                                                              [2]int // -shape
}

// datasetJSON is a model file's dataset section: the data set, with its
// file's absolute path in Spec and its sha256 when it is a file, so that
// the commands that read the model find the data from any folder and know
// them for the same (modelDataset). The names are the data's own columns,
// verbatim (a CSV's header, units and all).
type datasetJSON struct {
	Name        string   `json:"name"`
	Spec        string   `json:"spec"`
	SHA256      string   `json:"sha256,omitempty"`
	Description string   `json:"description"`
	InputNames  []string `json:"input_names"`
	OutputNames []string `json:"output_names"`
}

type initJSON struct {
	train.InitConfig
	Method        string      `json:"method"`
	Preset        *presetJSON `json:"preset,omitempty"`
	Restarts      int         `json:"restarts"`
	Chosen        int         `json:"chosen_restart"` // counted from 1
	RestartBounds []*float64  `json:"restart_bounds"`
}

// presetJSON records a preset whose restart selection started the fit:
// its restarts ran RestartIters iterations each, and the chosen one was
// then fitted to the stopping rule.
type presetJSON struct {
	Name         string `json:"name"`
	RestartIters int    `json:"restart_iters"`
}

type fitJSON struct {
	Optimizer    train.MethodVar `json:"optimizer"`
	LearningRate float64         `json:"learning_rate,omitempty"`
	BatchSize    int             `json:"batch_size,omitempty"`
	// Epochs is the passes over the data a stochastic fit's minibatches
	// made.
	Epochs   float64  `json:"epochs,omitempty"`
	Frozen   []string `json:"frozen"`
	MaxIters int      `json:"max_iters"`
	TolDatum float64  `json:"tol_datum"`
	TolAbs   float64  `json:"tol_abs"`
	Tol      float64  `json:"tol"`
	Window   int      `json:"window"`
	Horizon  int      `json:"horizon"`
	// FinalQ is "optimal" when the final layer's q(u) was kept at its
	// optimum, "parameters" when it was optimised with the rest.
	FinalQ          string  `json:"final_q"`
	NaturalGradient bool    `json:"natural_gradient"`
	Iters           int     `json:"iters"`
	Bound           float64 `json:"bound"`
	// LastRise is how far the bound rose over the last Window iterations
	// (null before a window filled), ExpectedRise that rate over Horizon.
	LastRise     *float64     `json:"last_rise"`
	ExpectedRise *float64     `json:"expected_rise"`
	Converged    bool         `json:"converged"`
	Status       train.Status `json:"status"` // why the fit stopped, in words
	Events       []string     `json:"events"`
	// TotalIters is the whole fit's iterations: every restart's and the
	// continued fit's, at most MaxIters.
	TotalIters int `json:"total_iters"`
}

// datasetSection returns the dataset section of a model of ds, loaded
// from spec: the spec with its path absolute, and the file's sha256.
func datasetSection(ds *dataset.Dataset, spec string) (datasetJSON, error) {
	abs, err := dataset.AbsSpec(spec)
	if err != nil {
		return datasetJSON{}, err
	}
	dj := datasetJSON{Name: ds.Name, Spec: abs, Description: ds.Description, InputNames: ds.InputNames, OutputNames: ds.OutputNames}
	if ds.Path != "" {
		if dj.SHA256, err = dataset.FileSHA256(ds.Path); err != nil {
			return datasetJSON{}, err
		}
	}
	return dj, nil
}

const initMethod = "per layer: inducing inputs at the quantiles (1-D) or k-means centres of the layer's input messages; " +
	"first hidden layer carries the principal components of Y (pca) or X (linear), later hidden layers the identity; " +
	"q_mu by sparse regression of those targets, q_sqrt = chol(noise ratio · Kuu); restart r: seed+r, perturbed for r > 0, " +
	"restart 1 uses the other first-hidden-layer choice; the best bound is kept"

func runFit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fit", stderr)
	var f fitFlags
	fs.StringVar(&f.data, "data", "step", `data set: "step", "robot" or "robot:PATH", "frey" or "frey:PATH" ("robot" and "frey": the files 'viz data get' fetches), "csv:PATH", "npy:PATH", "npz:PATH" or "parquet:PATH", or a PATH ending in .csv, .npy, .npz or .parquet (`+dataset.CSVConventions+` `+dataset.NumPyConventions+` `+dataset.ParquetConventions+`)`)
	fs.StringVar(&f.preset, "preset", "", "a model and restart selection named by the data's shape: explorer (one input and several outputs: input → 3 → 3 → outputs, the paper's robot model) or autoencoder (outputs equal to the inputs: outputs → 2 → outputs, the paper's Frey model); robot and frey name them too; by default the preset that fits the data's shape, if any, unless -hidden or -inducing is given")
	fs.StringVar(&f.hidden, "hidden", "", "hidden-layer widths, comma-separated (empty: a one-layer GP; default: the preset's)")
	fs.IntVar(&f.inducing, "inducing", train.DefaultInducing, "inducing points per layer (default: the preset's)")
	fs.IntVar(&f.outputInducing, "output-inducing", 0, "the final layer's inducing points (0: -inducing; default: the preset's)")
	fs.StringVar(&f.kernel, "kernel", "rbf", "kernel of every layer: rbf, rbfiso (one shared lengthscale) or linear")
	fs.StringVar(&f.inputKernel, "input-kernel", "", "first layer's kernel if not -kernel (default: the preset's, else -kernel)")
	fs.IntVar(&f.iters, "iters", train.DefaultMaxIters, "iteration cap of the whole fit, restarts included: -restarts share it, and a preset's restart selection takes its iterations from it (the stopping rule, -tol-abs, -tol, -window and -horizon, usually stops sooner)")
	fs.StringVar(&f.fitChoice, "fit", "auto", fmt.Sprintf("full (every iteration on all the data, by -optimizer), stochastic (minibatches of -batch rows: the svi optimizer) or auto (stochastic above %d rows)", train.StochasticRows))
	fs.TextVar(&f.optimizer, "optimizer", train.MethodVar{Method: train.LBFGS{}}, "lbfgs, adam or svi (stochastic variational inference; see -fit)")
	fs.Float64Var(&f.lr, "lr", train.DefaultLearningRate, "adam learning rate (svi's too, for all but q(u))")
	fs.IntVar(&f.batch, "batch", 0, fmt.Sprintf("minibatch size: adam's (0: full batch) and svi's (0: %d)", train.DefaultStochasticBatch))
	fs.Uint64Var(&f.seed, "seed", 1, "random seed (initialisation, restarts, minibatches)")
	fs.IntVar(&f.restarts, "restarts", 1, "seeded initialisations to fit; the best bound is kept (default with a preset: its short restart selection, then the chosen one to the stopping rule)")
	fs.StringVar(&f.out, "out", "", "output model file (empty or -: standard output)")
	fs.StringVar(&f.freeze, "freeze", "", "parameter groups to keep fixed, comma-separated: kernel, noise, inducing, q_mu, q_sqrt")
	fs.Float64Var(&f.tolDatum, "tol-datum", train.DefaultTolDatum, "stop when the rise of the bound expected over the next -horizon iterations is below this many nats per datum (an observed value: rows × outputs) per minute those iterations take by the cost model (or -tol-abs nats, or -tol of the bound, whichever is largest)")
	fs.Float64Var(&f.tolAbs, "tol-abs", train.DefaultTolAbs, "stop when the rise of the bound expected over the next -horizon iterations is below this many nats (or -tol-datum per datum, or -tol of the bound, whichever is largest)")
	fs.Float64Var(&f.tol, "tol", train.DefaultTol, "stop when the rise expected over the next -horizon iterations is below this fraction of |bound| (or -tol-datum per datum, or -tol-abs nats, whichever is largest)")
	fs.IntVar(&f.window, "window", train.DefaultWindow, "iterations whose rise of the bound sets the expected rate")
	fs.IntVar(&f.horizon, "horizon", train.DefaultHorizon, "iterations over which the rise is projected")
	fs.StringVar(&f.hiddenInit, "hidden-init", "auto", "first hidden layer's start: auto, pca or linear (default: the preset's)")
	fs.Float64Var(&f.hiddenNoise, "hidden-noise", train.DefaultHiddenNoise, "hidden layers' initial noise variance relative to their output variance")
	fs.Float64Var(&f.outputNoise, "output-noise", train.DefaultOutputNoise, "initial likelihood noise variance relative to var(Y)")
	fs.StringVar(&f.finalQ, "final-q", "optimal", "the final layer's q(u): optimal (kept at its optimum given the rest, on the full data) or parameters (optimised with the rest)")
	fs.BoolVar(&f.naturalGradient, "natural-gradient", false, "step the hidden layers' q(u) by natural gradients within each L-BFGS step")
	fs.IntVar(&f.workers, "workers", 0, "goroutines per evaluation (0: one when the cost model puts an iteration below 0.1 s, else share the CPUs between restarts)")
	fs.BoolVar(&f.embedData, "embed-data", false, "write the data into the model file even when they are a public data set's (robot, frey); by default the file refers to that data set's file by its checksum, and readers load it from this machine")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress output")
	fs.StringVar(&f.trace, "trace", "", "write a CSV file with a row at every check of a stochastic fit: iteration, epochs, CPU and wall seconds of the fit so far (loading and the trace's own predictions excluded), the bound, and the held-out RMSE in the outputs' units of the model the fit would return there (needs a split column)")
	f.sharded.define(fs, "")
	fs.IntVar(&f.maxRows, "max-rows", 0, "refuse a data file of more rows than this, as it is read (0: no limit but memory's and the model's)")
	fs.Func("shape", "the outputs are the pixels of images of this shape, rows x columns (e.g. 28x20): the model file records it, so that viz figure faces and the page draw them as images", func(v string) (err error) {
		f.shape, err = dataset.ParseShape(v)
		return err
	})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	hidden, err := train.ParseHidden(f.hidden)
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
	if f.iters < f.restarts {
		return badInput("viz fit: -iters %d is fewer than the %d restarts: -iters caps the whole fit, at least one iteration per restart", f.iters, f.restarts)
	}
	if f.maxRows < 0 {
		return badInput("viz fit: -max-rows %d: want ≥ 0 (0: no limit)", f.maxRows)
	}
	if f.finalQ != "optimal" && f.finalQ != "parameters" {
		return badInput("viz fit: -final-q %q: want optimal or parameters", f.finalQ)
	}
	if f.maxRows < 0 {
		return badInput("viz fit: -max-rows %d: want 0 (no limit) or more", f.maxRows)
	}
	ds, err := dataset.LoadWith(f.data, dataset.LoadOptions{MaxRows: f.maxRows})
	if err != nil {
		return usageError{fmt.Errorf("viz fit: %w", err)}
	}
	if f.shape != [2]int{} {
		if err := ds.SetShape(f.shape); err != nil {
			return badInput("viz fit: -shape: %v", err)
		}
	}
	dj, err := datasetSection(ds, f.data)
	if err != nil {
		return fmt.Errorf("viz fit: %w", err)
	}
	for _, w := range dataset.Warnings(ds) {
		fmt.Fprintf(stderr, "viz fit: warning: %s\n", w)
	}
	nx, ny := dataset.FitNormalizer(ds.X), dataset.FitNormalizer(ds.Y)
	x, y := normaliseData(ds, nx, ny)
	limitMemory(x, y)

	// The preset: named, or the one the data's shape calls for. It gives
	// the defaults of the model's flags; given neither -hidden nor
	// -inducing (nor -restarts), its restart selection starts the fit.
	var preset *train.Preset
	if given["preset"] {
		p, err := train.PresetNamed(f.preset, f.seed)
		if err != nil {
			return badInput("viz fit: -preset: %v", err)
		}
		preset = &p
	} else if p, ok := train.DefaultPreset(x, y, f.seed); ok {
		preset = &p
	}
	icfg := train.InitConfig{Hidden: hidden, Inducing: f.inducing, OutputInducing: f.outputInducing, Kernel: f.kernel, InputKernel: f.inputKernel, Seed: f.seed,
		HiddenNoise: f.hiddenNoise, OutputNoise: f.outputNoise, HiddenInit: f.hiddenInit}
	usePreset := false
	if preset != nil {
		pi := preset.Init
		if !given["hidden"] {
			icfg.Hidden = pi.Hidden
		}
		if !given["inducing"] && pi.Inducing != 0 {
			icfg.Inducing = pi.Inducing
			if !given["output-inducing"] {
				icfg.OutputInducing = pi.OutputInducing
			}
		}
		if !given["kernel"] && pi.Kernel != "" {
			icfg.Kernel = pi.Kernel
		}
		if !given["input-kernel"] {
			icfg.InputKernel, icfg.InputIsoStart = pi.InputKernel, pi.InputIsoStart
		}
		if !given["hidden-init"] && pi.HiddenInit != "" {
			icfg.HiddenInit = pi.HiddenInit
		}
		usePreset = !given["hidden"] && !given["inducing"] && !given["restarts"]
		preset.Init = icfg
	}
	if _, err := icfg.Defaults(); err != nil {
		return badInput("viz fit: %v", err)
	}
	method, err := fitMethod(f.fitChoice, f.optimizer.Method, given["optimizer"], x)
	if err != nil {
		return badInput("viz fit: %v", err)
	}
	workers := f.workers
	if workers == 0 {
		workers = evalWorkers(method, x, y, icfg)
	}
	tcfg := train.TrainerConfig{Method: method, LearningRate: f.lr, BatchSize: f.batch, Frozen: frozen, Seed: f.seed, Workers: workers,
		TolDatum: f.tolDatum, TolAbs: f.tolAbs, Tol: f.tol, Window: f.window, Horizon: f.horizon, ExplicitFinalQ: f.finalQ == "parameters", NaturalGradient: f.naturalGradient}
	if err := tcfg.Check(); err != nil {
		return badInput("viz fit: %v", err)
	}
	tcfg, _ = tcfg.Defaults()
	if f.sharded.nats != "" {
		co, stop, err := f.sharded.coordinator("viz fit", f.data, ds, nx, ny, x, y, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
		if err != nil {
			return err
		}
		defer stop()
		tcfg.Evaluator = co
	} else if given["nats-creds"] || given["nats-fit"] || given["nats-shards"] || given["nats-tls-ca"] || given["nats-tls-cert"] || given["nats-tls-key"] || given["nats-data-url"] {
		return badInput("viz fit: the -nats-… flags need -nats")
	}
	opt := train.FitOptions{MaxIters: f.iters / f.restarts}
	if usePreset {
		*preset, opt.MaxIters = presetWithin(*preset, f.iters)
	}

	start := time.Now()
	if f.trace != "" {
		if method != (train.SVI{}) {
			return badInput("viz fit: -trace records a stochastic fit's checks, and this fit is full-batch (-fit stochastic makes it stochastic)")
		}
		tr, err := newFitTrace(f.trace, latent.NewHeldOut(ds, nx, ny), start, cpuSeconds())
		if err != nil {
			return badInput("viz fit: %v", err)
		}
		defer func() {
			if err := tr.close(); err != nil {
				fmt.Fprintf(stderr, "viz fit: -trace: %v\n", err)
			}
		}()
		opt.Checked = tr.checked
	}
	var (
		model *engine.Model
		best  int
		reps  []train.RestartReport
		final train.FitReport
	)
	total := 0 // iterations of the whole fit
	if usePreset {
		model, best, reps, final, err = fitPreset(ctx, *preset, x, y, tcfg, opt, f.quiet, stderr)
		total = totalIters(reps, &final)
	} else {
		var prog *progress
		var onStep func(int, train.StepInfo)
		if !f.quiet {
			prog = newProgress(stderr, f.restarts, opt.MaxIters, 0, tcfg.RiseSpan(x.RawMatrix().Rows))
			prog.workers = workersOf(tcfg)
			onStep = prog.step
		}
		model, best, reps, err = train.FitRestarts(ctx, x, y, icfg, tcfg, opt, f.restarts, onStep)
		if prog != nil {
			prog.finish()
		}
		if best >= 0 {
			final = reps[best].Report
		}
		total = totalIters(reps, nil)
	}
	interrupted := err != nil && model != nil && ctx.Err() != nil
	if err != nil && !interrupted {
		return fmt.Errorf("viz fit: %w", err)
	}
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
			fmt.Fprintf(stderr, "%s restart %d (%s): %s\n", mark, r.Restart+1, restartStart(r.Init, x), status)
		}
		fmt.Fprintf(stderr, "viz fit: bound %.10g (restart %d) in %.2fs, stopped by %s after %d iterations%s (%s); %d iterations in all, restarts included (-iters %d)\n", final.Bound, best+1, time.Since(start).Seconds(), final.Status, final.Iters, stochasticNote(final, tcfg), final.Status.Explain(), total, f.iters)
		if !math.IsNaN(final.Rise) {
			n, _ := x.Dims()
			fmt.Fprintf(stderr, "viz fit: %s\n", riseLine(final, tcfg, n))
		}
	}

	bounds := make([]*float64, len(reps))
	for i, r := range reps {
		if r.Err == nil && !math.IsNaN(r.Report.Bound) && !math.IsInf(r.Report.Bound, 0) {
			b := r.Report.Bound
			bounds[i] = &b
		}
	}
	ij := initJSON{InitConfig: reps[best].Init, Method: initMethod, Restarts: len(reps), Chosen: best + 1, RestartBounds: bounds}
	if usePreset {
		ij.Preset = &presetJSON{Name: preset.Name, RestartIters: preset.RestartIters}
	}
	finalQ := "parameters"
	if n, _ := x.Dims(); tcfg.KeepsFinalQOptimal(n) {
		finalQ = "optimal"
	}
	extra := map[string]any{
		"dataset":       dj,
		"normalization": modelfile.NormalizationJSON(nx, ny),
		"init":          ij,
		"fit": fitJSON{Optimizer: train.MethodVar{Method: tcfg.Method}, LearningRate: adamOnly(tcfg.Method, f.lr), BatchSize: tcfg.BatchSize, Epochs: final.Epochs, Frozen: frozenNames,
			MaxIters: f.iters, TolDatum: tcfg.TolDatum, TolAbs: tcfg.TolAbs, Tol: tcfg.Tol, Window: tcfg.Window, Horizon: tcfg.Horizon, FinalQ: finalQ, NaturalGradient: f.naturalGradient,
			Iters: final.Iters, TotalIters: total, Bound: final.Bound, LastRise: finite(final.Rise), ExpectedRise: finite(final.Expected),
			Converged: final.Status.Converged(), Status: final.Status, Events: nonNil(final.Events)},
	}
	raw := make(map[string]json.RawMessage, len(extra))
	for k, v := range extra {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("viz fit: %w", err)
		}
		raw[k] = b
	}
	mf := &modelfile.File{Model: model, Info: modelfile.InfoOf(ds), Data: ds, DataPath: ds.Path, Extra: raw}
	if f.embedData {
		mf.Data = nil
	}
	if err := writeModelOut(f.out, stdout, mf); err != nil {
		return fmt.Errorf("viz fit: %w", err)
	}
	if interrupted {
		// The work so far is kept; the exit status still says it stopped early.
		return fmt.Errorf("viz fit: interrupted after %d iterations; wrote the best model so far (bound %.6g)", final.Iters, final.Bound)
	}
	return nil
}

// oneWorkerBelow is the cost model's time of an iteration
// (train.EstimateIter) below which a fit evaluates its bound on one
// goroutine. Its parallel regions are then too short for the evaluator's
// helpers, which spin between them, to pay for their CPU: two workers
// cost more CPU than one on the robot preset and the 20,000-row walk, and
// little more on the Frey preset, whose iterations are long
// (docs/measurements.md, "Robot seed 3's CPU").
const oneWorkerBelow = 100 * time.Millisecond

// evalWorkers is -workers 0's goroutines per evaluation for a fit of the
// model icfg (with its defaults) by method to x, y: one for a fit whose
// iterations the cost model puts below oneWorkerBelow, else 0 (the CPUs,
// shared between restarts).
func evalWorkers(method train.Method, x, y *mat.Dense, icfg train.InitConfig) int {
	c, err := icfg.Defaults()
	if err != nil {
		return 0
	}
	n, q := x.Dims()
	_, d := y.Dims()
	widths := append(append([]int{q}, c.Hidden...), d)
	if train.EstimateIter(method, n, widths, max(c.Inducing, c.OutputInducing), 0).Time < oneWorkerBelow {
		return 1
	}
	return 0
}

// normaliseData returns the data set's inputs and outputs standardised.
// A public data set's originals are kept beside them (the model file
// refers to its file when they normalise to the model's data bit for
// bit); any other's are standardised in place, since the model file keeps
// the standardised data and the normalisation.
func normaliseData(ds *dataset.Dataset, nx, ny dataset.Normalizer) (x, y *mat.Dense) {
	if ds.Source != nil {
		return nx.Apply(ds.X), ny.Apply(ds.Y)
	}
	nx.ApplyInPlace(ds.X)
	if ds.Y != ds.X { // an autoencoder's one matrix, standardised once
		ny.ApplyInPlace(ds.Y)
	}
	return ds.X, ds.Y
}

// limitMemory sets the garbage collector's soft memory limit to twice the
// data's size and 300 MB, unless GOMEMLIMIT set one: the fit holds the
// data, a chunk's workspace and two evaluations' per-datum results (the
// robot's shape at a million rows: 248 MB, ~30 MB and 2 × 144 MB), and
// without a limit the heap may grow to twice what is live before a
// collection (docs/measurements.md, "Memory at a million rows").
func limitMemory(x, y *mat.Dense) {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return // GOMEMLIMIT
	}
	r, q := x.Dims()
	_, d := y.Dims()
	debug.SetMemoryLimit(2*int64(8*r*(q+d)) + 300<<20)
}

// writeModelOut writes mf to the file out, or to stdout when out is empty
// or "-", as a stream: a million rows' file is hundreds of megabytes, which
// a buffer held besides the data. A file is written under a temporary name
// beside it and renamed when complete, so a failed write leaves no partial
// model file.
func writeModelOut(out string, stdout io.Writer, mf *modelfile.File) error {
	if out == "" || out == "-" {
		bw := bufio.NewWriterSize(stdout, 1<<16)
		if err := modelfile.Write(bw, mf); err != nil {
			return err
		}
		return bw.Flush()
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a rename, nothing to remove
	bw := bufio.NewWriterSize(tmp, 1<<16)
	err = modelfile.Write(bw, mf)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}

// fitPreset runs the preset's restart selection and fits the chosen
// restart's model to the stopping rule (or opt.MaxIters), as the live page
// does. The restarts' reports keep their short fits' bounds; final is the
// continued fit's report.
func fitPreset(ctx context.Context, p train.Preset, x, y *mat.Dense, tcfg train.TrainerConfig, opt train.FitOptions, quiet bool, stderr io.Writer) (*engine.Model, int, []train.RestartReport, train.FitReport, error) {
	// One progress for the whole fit, so that its ETA is the whole
	// fit's: the restarts, then the chosen one continued (the last slot).
	var prog *progress
	var onStep func(int, train.StepInfo)
	selection := p.Restarts > 1 && p.RestartIters > 0
	if !quiet {
		if selection {
			fmt.Fprintf(stderr, "viz fit: preset %q: %d restarts of %d iterations, then the best to the stopping rule (at most %d iterations)\n", p.Name, p.Restarts, p.RestartIters, opt.MaxIters)
		} else {
			fmt.Fprintf(stderr, "viz fit: preset %q: no restart selection within -iters; its first start fitted to the stopping rule (at most %d iterations)\n", p.Name, opt.MaxIters)
		}
		restarts := 0
		if selection {
			restarts = p.Restarts
		}
		prog = newProgress(stderr, restarts, p.RestartIters, opt.MaxIters, p.Trainer(tcfg).RiseSpan(x.RawMatrix().Rows))
		prog.workers = workersOf(tcfg)
		onStep = prog.step
	}
	m, reps, err := p.Start(ctx, x, y, tcfg, onStep)
	best := -1
	for i, r := range reps {
		if r.Model != nil && r.Model == m {
			best = i
		}
	}
	if err != nil {
		if prog != nil {
			prog.finish()
		}
		return nil, best, reps, train.FitReport{}, err
	}
	if reps == nil { // no selection: one model
		reps = []train.RestartReport{{Init: p.Init, Model: m}}
		best = 0
	}
	m = m.CloneParams() // the restart keeps its model; the data are shared
	if prog != nil {
		slot := len(prog.iters) - 1
		prog.name = func(int) string { return fmt.Sprintf("restart %d", best+1) }
		opt.Progress = func(s train.StepInfo) { prog.step(slot, s) }
	}
	fm, rep, err := train.Fit(ctx, m, p.Trainer(tcfg), opt)
	if prog != nil {
		prog.finish()
	}
	if err != nil && (ctx.Err() == nil || fm == nil) {
		return nil, best, reps, rep, err
	}
	reps[best].Model = fm
	return fm, best, reps, rep, err
}

// finite returns a pointer to v, or nil when v is NaN or infinite (JSON
// has neither).
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func adamOnly(method train.Method, lr float64) float64 {
	if method == (train.Adam{}) || method == (train.SVI{}) {
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
//
// Its ETA forecasts the time left and bounds it from both sides
// (timeLeft, etaText): the work in bound evaluations, each phase at its own pace: the restarts',
// side by side, measured from the first iteration (the initialisation
// before it, k-means and principal components, aside); the continued
// fit's, once it has run, its own, and before that the pace of one of the
// restarts at most, of all of them at least (on two busy cores a fit alone
// may run slower or faster than one restart: docs/measurements.md,
// "Loading at scale"). The work left of a fit that runs to
// the stopping rule is train.Forecast.Bounds', within its cap.
type progress struct {
	w        io.Writer
	tty      bool
	name     func(slot int) string // "restart 2"
	total    int                   // iterations of the whole fit at most
	final    int                   // the continued fit's slot, -1 without one
	par      int                   // restarts that run at once
	iters    []int
	bounds   []float64
	evals    []int // bound evaluations per slot
	start    time.Time
	last     time.Time
	interval time.Duration
	drawn    bool
	// The paces' clocks: the first iteration's time and the evaluations
	// done by then, of the restarts and of the continued fit.
	first, finalFirst           time.Time
	firstEvals, finalFirstEvals int
	// The continued fit's pace over its last recentSpan, for the least
	// time: a machine whose load falls may run it faster than its pace
	// so far (docs/measurements.md, "The ETA within 2×").
	recentAt    time.Time
	recentEvals int
	recentPace  float64
	caps        []int // iterations per slot at most
	forecasts   []*train.Forecast
	clock       func() time.Time // time.Now; tests count evaluations
	// workers, for a fit on worker processes (viz fit -nats), is how
	// many contributed to the last evaluation.
	workers func() int
}

// workersOf returns how to count the worker processes of a fit whose
// evaluations they share (nil for a fit in this process).
func workersOf(tcfg train.TrainerConfig) func() int {
	if c, ok := tcfg.Evaluator.(interface{ Contributing() int }); ok {
		return c.Contributing
	}
	return nil
}

// workersNote gives the workers contributing for a progress line ("" for
// a fit in this process).
func (p *progress) workersNote() string {
	if p.workers == nil {
		return ""
	}
	if n := p.workers(); n != 1 {
		return fmt.Sprintf(", %d workers", n)
	}
	return ", 1 worker"
}

// newProgress reports the progress of restarts fits of at most iters
// iterations each, side by side, then of a continued fit of at most final
// iterations (0: none), whose stopping rule measures the rise over
// riseSpan iterations (train.TrainerConfig.RiseSpan).
func newProgress(w io.Writer, restarts, iters, final, riseSpan int) *progress {
	slots := restarts
	p := &progress{w: w, total: restarts*iters + final, final: -1, par: max(1, min(restarts, runtime.GOMAXPROCS(0))), start: time.Now(), clock: time.Now,
		name: func(slot int) string { return fmt.Sprintf("restart %d", slot+1) }}
	for range restarts {
		p.caps = append(p.caps, iters)
	}
	if final > 0 {
		p.final = slots
		p.caps = append(p.caps, final)
		slots++
	}
	p.iters, p.bounds, p.evals = make([]int, slots), make([]float64, slots), make([]int, slots)
	for i := range p.bounds {
		p.bounds[i] = math.NaN()
		p.forecasts = append(p.forecasts, train.NewForecast(riseSpan))
	}
	p.tty = isTerminal(w)
	p.interval = 2 * time.Second
	if p.tty {
		p.interval = 100 * time.Millisecond
	}
	return p
}

// leftBounds is the iterations slot i has left at least and at most (hiKnown
// false when only its cap bounds them) and the point forecast between
// them (known with hi): a preset's short restart runs to its cap; a fit
// that runs to the stopping rule, as the rule's train.Forecast says,
// within its cap.
func (p *progress) leftBounds(i int) (lo, hi, point int, hiKnown bool) {
	rest := p.caps[i] - p.iters[i]
	if p.final >= 0 && i != p.final {
		return rest, rest, rest, true
	}
	lo, hi, hiKnown = p.forecasts[i].Bounds()
	point, _ = p.forecasts[i].Point()
	if !hiKnown {
		hi, point = rest, rest
	}
	return min(lo, rest), min(hi, rest), min(point, rest), hiKnown
}

// eta says the time left (etaText of timeLeft); "estimating…" before a
// pace is known.
func (p *progress) eta(now time.Time) string {
	l, ok := p.timeLeft(now)
	if !ok {
		return etaEstimating
	}
	return etaText(l)
}

// etaLeft is what is known of the seconds left: at least lo, at most hi
// and the point forecast between them (hiKnown false when nothing bounds
// them but the caps: a slot's rule has no measure yet).
type etaLeft struct {
	lo, hi, point float64
	hiKnown       bool
}

// timeLeft estimates the seconds left; false before a pace is known. An
// iteration takes one bound evaluation at least, so the least time counts
// one an iteration at paceSlack times the fastest pace measured (the
// restarts' together, or the continued fit's own, over its run or its
// last recentSpan: it may have every core, or a machine less busy); the
// most and the point count each phase's own evaluations per iteration so
// far, at its own pace (a continued fit not begun: one restart's).
func (p *progress) timeLeft(now time.Time) (etaLeft, bool) {
	if p.final == 0 { // a continued fit alone
		el, e := now.Sub(p.finalFirst).Seconds(), p.evals[0]-p.finalFirstEvals
		if p.iters[0] == 0 || el <= 0 || e <= 0 {
			return etaLeft{}, false
		}
		ilo, ihi, ipt, known := p.leftBounds(0)
		pace := float64(e) / el
		perIter := float64(p.evals[0]) / float64(p.iters[0])
		return etaLeft{float64(ilo) / (paceSlack * max(pace, p.recentPace)), float64(ihi) * perIter / pace, float64(ipt) * perIter / pace, known}, true
	}
	restartIters, restartEvals := 0, 0
	restartLo, restartHi, restartPt, known := 0, 0, 0, true
	for i, it := range p.iters {
		if i != p.final {
			restartIters += it
			restartEvals += p.evals[i]
			ilo, ihi, ipt, k := p.leftBounds(i)
			restartLo, restartHi, restartPt = restartLo+ilo, restartHi+ihi, restartPt+ipt
			known = known && k
		}
	}
	el := now.Sub(p.first).Seconds()
	if restartIters == 0 || el <= 0 || restartEvals == p.firstEvals {
		return etaLeft{}, false
	}
	perIter := max(1, float64(restartEvals)/float64(restartIters))
	pace := float64(restartEvals-p.firstEvals) / el // evaluations per second
	l := etaLeft{lo: float64(restartLo) / (paceSlack * pace), hi: float64(restartHi) * perIter / pace, point: float64(restartPt) * perIter / pace}
	if p.final >= 0 {
		fastest, slowest, finalPerIter := pace, pace/float64(p.par), perIter
		if el := now.Sub(p.finalFirst).Seconds(); !p.finalFirst.IsZero() && el > 0 && p.evals[p.final] > p.finalFirstEvals {
			own := float64(p.evals[p.final]-p.finalFirstEvals) / el
			fastest = max(fastest, own, p.recentPace) // its first iterations' pace is noisy
			slowest, finalPerIter = own, max(1, float64(p.evals[p.final])/float64(p.iters[p.final]))
		}
		flo, fhi, fpt, k := p.leftBounds(p.final)
		l.lo += float64(flo) / (paceSlack * fastest)
		l.hi += float64(fhi) * finalPerIter / slowest
		l.point += float64(fpt) * finalPerIter / slowest
		known = known && k
	}
	l.hiKnown = known
	return l, true
}

// recentSpan is the least time over which the continued fit's recent
// pace is measured.
const recentSpan = time.Second

// paceSlack is how many times faster than measured a fit may go on: the
// Frey preset's continued fit took 0.18 s an iteration over its first 13
// and 0.10 s after (docs/measurements.md, "The ETA, judged").
const paceSlack = 2

// etaEstimating is the ETA before the time left can be forecast.
const etaEstimating = "estimating…"

// etaText says the time left: once every slot's rule has a measure, the
// point forecast (etaPoint) with the bounds beside it, since it is a
// forecast, not a promise; where the bounds are within 4× of each other,
// their geometric mean alone, within 2× of every time between them, and
// where "at most" is 1 s or less, "under 2s" alone. Until then it says
// it is estimating, with what holds so far. The bounds read "at least
// lo" when hi is unknown, "at most hi" when lo rounds to 0, else "lo to
// hi".
func etaText(l etaLeft) string {
	switch {
	case !l.hiKnown && l.lo > 0:
		return etaEstimating + " (at least " + etaDuration(l.lo) + ")"
	case !l.hiKnown:
		return etaEstimating
	}
	bounds := etaDuration(l.lo) + " to " + etaDuration(l.hi)
	if etaDuration(l.lo) == "0s" {
		bounds = "at most " + etaDuration(l.hi)
	}
	switch {
	case l.hi <= etaResolution/2: // the bounds say no more than "under 2s"
		return etaPoint(l.hi)
	case l.hi <= 4*l.lo:
		return etaPoint(math.Sqrt(l.lo * l.hi))
	}
	return etaPoint(l.point) + " (" + bounds + ")"
}

// etaResolution is the least time a point forecast states: below it the
// line says "under 2s", which a forecast of at most half of it, within 2×
// of the time left, makes true.
const etaResolution = 2.0

// etaPoint says a point forecast of sec seconds: "under 2s" at
// etaResolution/2 or less, else the time.
func etaPoint(sec float64) string {
	if sec <= etaResolution/2 {
		return "under " + etaDuration(etaResolution)
	}
	return etaDuration(sec)
}

// etaDuration rounds seconds to a tenth below 10 s, to seconds above, so
// that the last seconds of a fit do not read "0s".
func etaDuration(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
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
	p.evals[restart] += s.Evals
	p.forecasts[restart].Add(s)
	if s.Event != "" {
		p.clear()
		fmt.Fprintf(p.w, "%s iteration %d: %s\n", p.name(restart), s.Iter, s.Event)
	}
	now := p.clock()
	switch { // the paces are timed from their first iterations
	case restart == p.final && p.finalFirst.IsZero():
		p.finalFirst, p.finalFirstEvals = now, p.evals[restart]
	case restart != p.final && p.first.IsZero():
		p.first, p.firstEvals = now, p.evals[restart]
	}
	if restart == p.final {
		if el := now.Sub(p.recentAt); p.recentAt.IsZero() || el >= recentSpan {
			if !p.recentAt.IsZero() {
				p.recentPace = float64(p.evals[restart]-p.recentEvals) / el.Seconds()
			}
			p.recentAt, p.recentEvals = now, p.evals[restart]
		}
	}
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
	rate := float64(done) / math.Max(now.Sub(p.start).Seconds(), 1e-9)
	eta := p.eta(now)
	if p.tty {
		const width = 30
		filled := min(width, width*done/max(1, p.total))
		fmt.Fprintf(p.w, "\r[%s%s] iter %d/%d  bound %.6g%s%s  %.0f it/s  ETA %s ", strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, p.total, best, epochsNote(s), p.workersNote(), rate, eta)
		p.drawn = true
		return
	}
	bound := "bound"
	if s.Estimate {
		bound = "minibatch estimate of the bound"
	}
	fmt.Fprintf(p.w, "%s iteration %d: %s %.10g%s (the whole fit: %d/%d iterations, %.1f it/s, ETA %s%s)\n", p.name(restart), s.Iter, bound, s.Bound, epochsNote(s), done, p.total, rate, eta, p.workersNote())
}

// epochsNote gives a stochastic fit's passes over the data for a progress
// line ("" for the other methods).
func epochsNote(s train.StepInfo) string {
	if s.Epochs == 0 {
		return ""
	}
	return fmt.Sprintf(", stochastic, %.3g epochs", s.Epochs)
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

// riseLine says how far the bound moved in the fit's last stretch of a fit
// on n rows, against the stopping rule's limit (r.Limit); a fit that
// stopped for another reason while the rule still expected a rise says
// so, so that the two lines never seem to disagree.
func riseLine(r train.FitReport, c train.TrainerConfig, n int) string {
	limit := r.Limit
	what := "the bound"
	if c.Method == (train.SVI{}) {
		what = "the best full-data bound of the checks"
	}
	line := fmt.Sprintf("%s rose %.3g nats over the last %d iterations: %.3g expected over the next %d (the rule stops below %.3g)",
		what, r.Rise, c.RiseSpan(n), r.Expected, c.Horizon, limit)
	if r.Status != train.FunctionConvergence && r.Expected > limit {
		line += fmt.Sprintf("; it stopped by %s first", r.Status)
	}
	return line
}

// fitMethod resolves -fit and -optimizer (given says whether it was) for
// the normalised inputs x: a full-batch fit by the optimizer, a stochastic
// one by svi, or auto, stochastic above train.StochasticRows rows unless
// an optimizer is named.
func fitMethod(choice string, optimizer train.Method, given bool, x *mat.Dense) (train.Method, error) {
	switch choice {
	case "full":
		if optimizer == (train.SVI{}) {
			return nil, fmt.Errorf("-fit full with -optimizer svi: svi is stochastic; use -optimizer lbfgs or adam, or -fit stochastic")
		}
		return optimizer, nil
	case "stochastic":
		if given && optimizer != (train.SVI{}) {
			return nil, fmt.Errorf("-fit stochastic with -optimizer %s: a stochastic fit uses svi; leave -optimizer out", optimizer)
		}
		return train.SVI{}, nil
	case "auto":
		if given {
			return optimizer, nil
		}
		n, _ := x.Dims()
		return train.ChooseMethod(n), nil
	}
	return nil, fmt.Errorf("-fit %q: want auto, full or stochastic", choice)
}

// stochasticNote describes a stochastic fit for the last line: its
// minibatches and the passes they made ("" for a full-batch fit).
func stochasticNote(r train.FitReport, c train.TrainerConfig) string {
	if c.Method != (train.SVI{}) {
		return ""
	}
	return fmt.Sprintf(" of a stochastic fit (minibatches of %d rows, %.3g epochs)", c.BatchSize, r.Epochs)
}

// restartStart names a restart's start as the page's restart table does:
// its seed and what the first hidden layer started from.
func restartStart(c train.InitConfig, x *mat.Dense) string {
	if len(c.Hidden) == 0 {
		return fmt.Sprintf("seed %d", c.Seed)
	}
	_, q := x.Dims()
	from := "the input"
	if c.FirstHiddenStart(q) == "pca" {
		from = latent.BaselinePCA
	}
	return fmt.Sprintf("seed %d, h1 started from %s", c.Seed, from)
}
