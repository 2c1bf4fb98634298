//go:build race

package engine

// raceBuild: the race detector slows the big-float reference about tenfold
// and has nothing to find in it (one goroutine): under it the precision
// tests check the bound only, and README's test command's second part
// differences the reference without it (refGradients).
const raceBuild = true
