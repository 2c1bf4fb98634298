//go:build !race

package train

// raceBuild: see race_on_test.go.
const raceBuild = false
