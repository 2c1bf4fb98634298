// Package linalg holds the dense linear algebra that dgpviz's numerical
// packages share for the small matrices of a sparse GP layer (M ≤ a few
// hundred inducing points): Cholesky factorisation, triangular solves,
// the inverse from a factor and the log-determinant, on row-major
// []float64 storage.
//
// For matrices this small, plain loops beat LAPACK's blocking, and gonum's
// factorisation also estimates a condition number that nothing here uses.
// There is one implementation of each operation: the engine (bound,
// posterior, model edits) and the optimizer (whitened parameters) both call
// these, so they agree to the last bit.
package linalg
