package engine

import "gonum.org/v1/gonum/mat"

// Message is the Gaussian message out of a layer: a mean and a variance
// for every datum and output (N × D each).
type Message struct {
	Mean, Var *mat.Dense
}

// LayerTerms are one layer's contributions to the bound, with the data
// terms already scaled for a minibatch.
type LayerTerms struct {
	KL          float64
	Compression float64
	Propagation float64
	// Per-datum penalties (unscaled), in the order of the evaluated rows.
	// Compression and Propagation are computed from whitened sums, which
	// on a badly conditioned Kuu are more accurate than the sum of these
	// (they agree to ~1e-7 of the totals at cond(Kuu) = 1e7).
	CompressionPerDatum []float64
	PropagationPerDatum []float64
}

// Result is an evaluation of the bound.
type Result struct {
	Bound      float64
	Likelihood float64
	Layers     []LayerTerms
	// FinalQ is the final layer's q(u) at its optimum, at which the bound,
	// terms and messages above were evaluated (Options.OptimalFinalQ), or
	// nil.
	FinalQ *OptimalQ
	// Messages[i] is the message out of layer i. The last layer's variance
	// is nil unless Options.OutputVariance was set; its message is zero
	// with Options.NoOutputMessage.
	Messages []Message
}

// LayerGradient is the gradient of the bound w.r.t. one layer's parameters
// in their natural parametrisation (as written in the model file).
type LayerGradient struct {
	Kernel         []float64 // w.r.t. Kernel.Params()
	NoiseVariance  float64
	InducingInputs *mat.Dense   // M × Q
	QMu            *mat.Dense   // M × D
	QSqrt          []*mat.Dense // D of M × M, zero above the diagonal
}

// Gradient is the gradient of the bound w.r.t. every layer's parameters.
type Gradient struct {
	Layers []LayerGradient
}

// Options select what an evaluation computes.
type Options struct {
	// Rows, when not nil, evaluates a minibatch: the likelihood and the
	// per-datum penalties are summed over these rows and scaled by
	// N/len(Rows). The KL terms are not scaled.
	Rows []int
	// Gradient requests the gradient.
	Gradient bool
	// OutputVariance requests the last layer's message variance, which the
	// bound itself does not need.
	OutputVariance bool
	// OptimalFinalQ evaluates the bound with the final layer's q(u) at its
	// optimum given everything else, computed from this evaluation's Ψ
	// statistics (the collapsed bound; see collapsed.go), instead of the
	// model's: Result.FinalQ holds it. The gradient is the collapsed
	// bound's: its final-layer q_mu and q_sqrt entries are zero, since the
	// bound no longer depends on them, and the others are the gradient at
	// the optimum (the envelope theorem). It needs all the data (Rows nil).
	OptimalFinalQ bool
	// NoOutputMessage leaves the last layer's message out of the Result
	// (Messages[last] is zero): an optimizer's evaluation, which does not
	// read the N×D output mean, saves its copy.
	NoOutputMessage bool
	// NoCompensation sums ΣΨ2 and whitens it in float64 even in a layer
	// whose Kuu is conditioned badly enough that the engine would sum it
	// from double-double entries and whiten it in compensated arithmetic
	// (compensateAbove), at many times the cost. On fitted models with
	// cond(Kuu) up to 1e8 the bound is then off by up to 2e-9 of it and
	// the gradient by up to 3e-5 of its largest entry
	// (TestNoCompensation): it is for evaluations that tolerate that, a
	// minibatch's estimate, whose sampling error is far larger, or a
	// stochastic fit's check, whose stopping rule's tolerance is 1e-6 of
	// the bound.
	NoCompensation bool
}
