// Package montecarlo computes the ground truth that the deep GP's Gaussian
// messages approximate, and the data of the paper's message figure.
//
// The true response of a GP layer to a Gaussian input x ~ N(μ, diag s) is
// the distribution of y = f(x) + ε, where u ~ q(u), f(x) | u is the GP
// conditional with mean k(x,Z)Kuu⁻¹u and variance
// k(x,x) − k(x,Z)Kuu⁻¹k(Z,x), and ε is the layer's Gaussian noise. It is
// not Gaussian in general; the nested variational compression bound
// (Hensman & Lawrence 2014) replaces it with a Gaussian message whose mean
// is exact and whose variance falls short of the true variance by exactly
// 2σ²(compression/D + propagation_d). The package samples the true
// response of one layer (Layer.Sample, Layer.Moments) and of whole chains
// through a model (ChainMoments, SampleChain), estimates densities from
// samples (KDE, NewHistogram), measures how far a Gaussian is from the
// samples (Compare: moment errors, KL divergence and Wasserstein-1
// distance with Monte Carlo standard errors), and assembles and renders
// the message figure (MessageFigure, InputSets, RenderMessageFigure) and the
// fit figure (FitFigure, RenderFit).
//
// Sampling is seeded and reproducible: samples are drawn in fixed chunks
// of ChunkSize, each from its own random stream derived from the seed and
// the chunk's index, so results do not depend on the number of goroutines.
// Given x, the layer's output f_d(x) is Gaussian once u is integrated out,
// with mean k(x,Z)Kuu⁻¹m_d and variance
// k(x,x) − k(x,Z)Kuu⁻¹k(Z,x) + k(x,Z)Kuu⁻¹S_dKuu⁻¹k(Z,x); the samplers draw
// from that Gaussian directly, which is the same distribution as drawing
// u ~ q(u) and then f | u, without the M-dimensional draw of u.
//
// Indices of layers are 0-based in this package, as in engine.Model.Layers.
package montecarlo
