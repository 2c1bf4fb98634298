// Command viz is dgpviz's one binary: it serves the live deep GP page
// (the default) and fits, evaluates, predicts, samples and draws figures
// from the command line.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand. run parses its own flags from args.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

// register adds a subcommand; each subcommand's file registers itself.
func register(c command) { commands[c.name] = c }

// usageError marks bad input (flags, files): exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// errHelp is returned after a command printed its -h usage: exit 0.
var errHelp = errors.New("help shown")

func badInput(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(exitCode(run(ctx, os.Args[1:], os.Stdout, os.Stderr), os.Stderr))
}

// run dispatches to a subcommand; with no subcommand it serves the page.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	name := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	if name == "help" || name == "-h" {
		usage(stdout)
		return nil
	}
	c, ok := commands[name]
	if !ok {
		usage(stderr)
		return badInput("viz: unknown command %q", name)
	}
	return c.run(ctx, args, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: viz [command] [flags]   (no command: serve the live page)")
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "run 'viz COMMAND -h' for a command's flags")
}

// exitCode prints err (one line, for people: no error text carries a
// package prefix, TestErrorTextsAreForPeople) and maps it to an exit
// status: 0 for success, 2 for bad input, 1 otherwise.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, errHelp) {
		return 0
	}
	fmt.Fprintln(stderr, err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}
