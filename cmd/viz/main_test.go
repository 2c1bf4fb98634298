package main

import (
	"context"
	"os"
	"os/exec"
	"testing"
)

// TestMain lets the test binary run as viz itself (VIZ_TEST_AS_VIZ=1):
// viz loadtest -mode relays starts the presenter's server and the relays
// as processes of this program.
func TestMain(m *testing.M) {
	if os.Getenv("VIZ_TEST_AS_VIZ") == "1" {
		os.Exit(exitCode(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr), os.Stderr))
	}
	vizCommand = func(args ...string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "VIZ_TEST_AS_VIZ=1")
		return cmd
	}
	os.Exit(m.Run())
}
