// Package train fits dgpviz's deep GPs: it initialises models from data
// (Initialize, the robot and Frey presets), optimises their bound one
// iteration at a time (Trainer) or to convergence (Fit, FitRestarts), and
// recovers from evaluations that fail along the way.
//
// As in gonum/optimize, the method is separate from the problem. The
// problem is the engine's bound in the Trainer's coordinates: logarithms of
// positive parameters, and the variational parameters whitened by Kuu's
// Cholesky factor (optim_whiten.go), where the bound is far better
// conditioned. The Method, an interface with one type per method (LBFGS,
// Adam, SVI), chooses the steps: L-BFGS's iteration is a search direction,
// a line search, then the accepted point's convergence test or the
// recovery from a search that found none (optim_lbfgs.go). Each step
// reports a typed Status (NotTerminated, GradientThreshold, …), and a fit
// reports why it stopped.
//
// A trial point whose evaluation fails (Kuu not positive definite, a bound
// or gradient that is not finite, a bound whose terms lost their precision:
// engine.ErrNotPositiveDefinite, engine.ErrNotFinite, engine.ErrImprecise)
// counts as infinitely bad; when no step succeeds the
// trainer reverts to the last good parameters, resets its memory and, for
// Cholesky failures, raises the jitter. Those events are reported in words
// in StepInfo.Event.
package train
