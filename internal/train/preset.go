package train

import (
	"context"
	"dgpviz/internal/engine"
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// Preset is a named, ready-made model configuration with the
// initialisation that makes it work and a short restart selection by the
// bound.
type Preset struct {
	Name string
	Init InitConfig
	// Restarts short fits of RestartIters iterations are run from
	// different initialisations (see FitRestarts); the one with the best
	// bound is kept.
	Restarts, RestartIters int
	// NaturalGradient is the optimizer setting the preset's model was
	// measured fastest with (TrainerConfig.NaturalGradient): Start's
	// restarts use it, and so should the fit that continues from them
	// (Trainer).
	NaturalGradient bool
}

// Trainer returns c with the preset's optimizer settings, for the fit that
// continues from Start's model.
func (p Preset) Trainer(c TrainerConfig) TrainerConfig {
	c.NaturalGradient = c.NaturalGradient || p.NaturalGradient
	return c
}

// Robot preset sizes: the paper's 3-layer model time → 3 → 3 → 30.
const (
	// RobotInducing per layer: 15 fits better than 20 and 30 on the real
	// data by the bound (mean of 3 seeds −5417 vs −5800 and −6171 after
	// 1000 iterations), the geometry score (0.992–0.994) and the held-out
	// RMSE (10.4 vs 10.7 and 10.9 dBm), and is the cheapest
	// (TestRobotPresetStudy, DGPVIZ_ROBOT_STUDY=1).
	RobotInducing = 15
	// RobotRestarts: the principal-component start and the time-only
	// ("linear") one. A third, perturbed principal-component start often
	// won by the bound and made the model worse where it matters: the
	// held-out error, and in one seed the loop closure
	// (TestTimeToTarget; docs/measurements.md, "Time to a converged
	// model").
	RobotRestarts = 2
	// RobotRestartIters: with the final q(u) at its optimum and natural
	// gradients, the time-only ("linear") start leads the principal-
	// component starts for the first ~25–50 iterations (it led them for
	// 500–1000 without natural gradients, and 25 was the length before the
	// optimum q(u)); after 200 the restart best by bound is a principal-
	// component one in 3 of 3 seeds, ahead of the linear one by 116–502
	// nats, and the one best after 2000 iterations in 2 of 3 (the third's
	// choice ends 20 nats below it; both close the loop). In one seed the
	// best after 2000 iterations no longer closes the loop (geometry 0.28,
	// 85 nats above the one that does, 0.994) (TestPresetRestartStudy,
	// DGPVIZ_RESTART_STUDY=robot, DGPVIZ_RESTART_NG=on).
	RobotRestartIters = 200
)

// RobotPreset is the preset for one input and several outputs, named by
// that shape ("explorer"): the paper's robot WiFi model, time → 3 → 3 → 30
// access points
// (Hensman & Lawrence 2014, §robot wireless data), RobotInducing inducing
// points per layer and the principal-component initialisation of the first
// hidden layer (the leading 3 principal components of the 30 signals, which
// already place revisits of a corridor near each other), selected by the
// bound among RobotRestarts short restarts, the seed's and the time-only
// ("linear") start (perturbed), optimised with natural-gradient
// steps for the hidden layers' q(u) (measured faster on these data,
// docs/measurements.md).
func RobotPreset(seed uint64) Preset {
	return Preset{
		Name:            "1 input → 3 → 3 → outputs",
		Init:            InitConfig{Hidden: []int{3, 3}, Inducing: RobotInducing, Seed: seed, HiddenInit: "auto"},
		Restarts:        RobotRestarts,
		RestartIters:    RobotRestartIters,
		NaturalGradient: true,
	}
}

// DefaultPreset returns the preset that fits data of the shape of x, y
// (N×Q inputs, N×D outputs), chosen by the shape alone: one input and
// several outputs is a latent-variable explorer of the outputs along the
// input (RobotPreset's model), outputs equal to the inputs an autoencoder
// (FreyPreset's); other shapes have none (ok false).
func DefaultPreset(x, y *mat.Dense, seed uint64) (p Preset, ok bool) {
	if x == nil || y == nil {
		return Preset{}, false
	}
	n, q := x.Dims()
	ny, d := y.Dims()
	switch {
	case n != ny:
		return Preset{}, false
	case q == d && mat.Equal(x, y):
		return FreyPreset(seed), true
	case q == 1 && d > 1:
		return RobotPreset(seed), true
	}
	return Preset{}, false
}

// PresetNamed returns the preset named by its shape: "explorer" (one
// input, several outputs: RobotPreset) or "autoencoder" (outputs that are
// the inputs: FreyPreset). "robot" and "frey", the paper's experiments that
// they were made for, name them too.
func PresetNamed(name string, seed uint64) (Preset, error) {
	switch name {
	case "explorer", "robot":
		return RobotPreset(seed), nil
	case "autoencoder", "frey":
		return FreyPreset(seed), nil
	}
	return Preset{}, fmt.Errorf("preset %q: want explorer (one input, several outputs) or autoencoder (outputs that are the inputs)", name)
}

// Start initialises the preset's model for normalised data x, y: the best
// by bound of p.Restarts restarts of p.RestartIters iterations each (with
// Restarts ≤ 1 or RestartIters 0, simply Initialize). p.Trainer(tcfg)
// configures the restarts' trainers. progress, if not nil, is called after every
// iteration of every restart, never concurrently.
func (p Preset) Start(ctx context.Context, x, y *mat.Dense, tcfg TrainerConfig, progress func(restart int, s StepInfo)) (*engine.Model, []RestartReport, error) {
	if p.Restarts <= 1 || p.RestartIters <= 0 {
		m, err := Initialize(x, y, p.Init)
		return m, nil, err
	}
	m, best, reps, err := FitRestarts(ctx, x, y, p.Init, p.Trainer(tcfg), FitOptions{MaxIters: p.RestartIters}, p.Restarts, progress)
	if err != nil {
		return m, reps, fmt.Errorf("preset %s: %w", p.Name, err)
	}
	_ = best
	return m, reps, nil
}
