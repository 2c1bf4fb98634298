//go:build !race

package streamtest

// RaceEnabled: the tests run under the race detector, which slows fits
// tenfold; measurements of live rates skip.
const RaceEnabled = false
