//go:build !race

package loadtest

const raceEnabled = false
