//go:build !race

package dataset

// raceEnabled: the race detector counts allocations of its own.
const raceEnabled = false
