package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"dgpviz/internal/dataset"
)

func init() {
	register(command{name: "data", summary: "get the paper's data sets (robot, frey) from their public source, checked by sha256", run: runData})
}

const dataUsage = `usage: viz data get [-dir DIR] robot|frey|all ...

Downloads each data set from its public source (docs/data.md), checks its
size and sha256, and keeps it in DIR: $DGPVIZ_DATA, else dgpviz in the
user's cache directory. Then -data robot and -data frey find it.`

func runData(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "help" {
		fmt.Fprintln(stdout, dataUsage)
		if len(args) == 0 {
			return badInput("viz data: want get")
		}
		return nil
	}
	if args[0] != "get" {
		return badInput("viz data: unknown action %q: want get", args[0])
	}
	fs := newFlags("data get", stderr)
	dir := fs.String("dir", "", "where to keep the files (empty: $"+dataset.DataDirEnv+", else dgpviz in the user's cache directory)")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{err}
	}
	var remotes []dataset.Remote
	for _, name := range fs.Args() {
		if name == "all" {
			remotes = append(remotes, dataset.Remotes...)
			continue
		}
		r, ok := dataset.RemoteNamed(name)
		if !ok {
			return badInput("viz data get: unknown data set %q: want %s or all", name, remoteNames())
		}
		remotes = append(remotes, r)
	}
	if len(remotes) == 0 {
		return badInput("viz data get: name the data sets: %s or all", remoteNames())
	}
	if *dir == "" {
		d, err := dataset.DataDir()
		if err != nil {
			return fmt.Errorf("viz data get: %w", err)
		}
		*dir = d
	}
	f := &dataset.Fetcher{Dir: *dir, Progress: newFetchProgress(stderr).show}
	for _, r := range remotes {
		fmt.Fprintf(stderr, "%s: %s\n", r.Name, r.URL)
		path, err := f.Fetch(ctx, r)
		if err != nil {
			return fmt.Errorf("viz data get: %w", err)
		}
		fmt.Fprintf(stdout, "%s: %s (%d bytes, sha256 %s)\n", r.Name, path, r.Size, r.SHA256)
	}
	return nil
}

func remoteNames() string {
	var names []string
	for _, r := range dataset.Remotes {
		names = append(names, r.Name)
	}
	return strings.Join(names, ", ")
}

// fetchProgress shows a download's progress on a terminal, redrawn in
// place at most ten times a second; elsewhere nothing (the lines before
// and after say what happened).
type fetchProgress struct {
	w    io.Writer
	tty  bool
	last time.Time
}

func newFetchProgress(w io.Writer) *fetchProgress {
	return &fetchProgress{w: w, tty: isTerminal(w)}
}

func (p *fetchProgress) show(r dataset.Remote, done, total int64) {
	if !p.tty {
		return
	}
	end := done >= total
	if now := time.Now(); now.Sub(p.last) >= 100*time.Millisecond || end {
		p.last = now
		fmt.Fprintf(p.w, "\r%s: %d of %d KiB (%.0f %%)", r.Name, done>>10, total>>10, 100*float64(done)/float64(max(total, 1)))
		if end {
			fmt.Fprintln(p.w)
		}
	}
}
