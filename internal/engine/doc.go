// Package engine is the numerical core of dgpviz: kernels, psi statistics,
// Gaussian messages, the nested variational compression bound of a deep
// Gaussian process (Hensman & Lawrence, 2014) and its exact gradients.
//
// A model has L layers. Layer i maps its input message — a mean and a
// diagonal variance per datum — to an output message through a sparse GP
// with inducing inputs Z_i and a variational q(u_id) = N(m_id, S_id) per
// output d. The bound is
//
//	bound = likelihood − Σ_i ( kl_i + Σ_n compression_in + Σ_n propagation_in )
//
// where the compression term charges for the part of the GP that the
// inducing points do not explain and the propagation term for the
// non-linearity of the layer under the spread of its input. Both are exactly
// the variance that the Gaussian message leaves out.
//
// Gradients are hand-derived reverse mode, evaluated over chunks of data in
// parallel. Chunks are reduced in a fixed order, so the result does not
// depend on the number of workers; and every datum gets the same
// arithmetic wherever it sits in a batch, so a prediction does not depend
// on what is predicted with it. EvaluateChunked (and EvaluateAll above
// ChunkAbove rows) takes the data in consecutive chunks of rows and adds
// them up, so that an evaluation's workspace does not grow with the data.
// EvaluateRange, FinalStats and EvaluateBatchPart evaluate a range or some
// rows apart, and SumParts adds the parts, so that processes holding
// different rows (package shards) evaluate the bound together; the engine
// knows nothing of how the parts travel.
//
// On amd64 CPUs with AVX2 and FMA the hot loops — the exponential, the Ψ2
// pair loop and the matrix products — run in assembly (simd_amd64.s);
// elsewhere, or built with the purego tag, in Go. Tests run both and
// compare them.
package engine
