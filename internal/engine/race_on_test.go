//go:build race

package engine

// raceBuild: the race detector slows the big-float reference about tenfold
// (the full precision suite took 5 minutes of CI under -race), so the
// precision tests check a smaller sample under it (precision_test.go).
const raceBuild = true
