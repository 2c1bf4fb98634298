package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"dgpviz/internal/dataset"
)

func init() {
	register(command{name: "data", summary: "get the paper's data sets (robot, frey) from their public source, checked by sha256; write a synthetic walk", run: runData})
}

const dataUsage = `usage: viz data get [-dir DIR] robot|frey|all ...
       viz data walk [-rows N] [-seed S] -o FILE.csv|FILE.npy|FILE.npz|FILE.parquet

get downloads each data set from its public source (docs/data.md), checks
its size and sha256, and keeps it in DIR: $DGPVIZ_DATA, else dgpviz in the
user's cache directory. Then -data robot and -data frey find it.

walk writes a synthetic robot-like walk of N rows, shaped as the robot data
(input x_time in s; outputs y_ap1…y_ap30, signal strengths in dBm with 2 dBm
of noise; truth_x, truth_y in m; every 10th row split=test), so that the
robot preset applies; the same seed gives the same file (docs/data.md).`

func runData(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "help" {
		fmt.Fprintln(stdout, dataUsage)
		if len(args) == 0 {
			return badInput("viz data: want get or walk")
		}
		return nil
	}
	if args[0] == "walk" {
		return runDataWalk(args[1:], stdout, stderr)
	}
	if args[0] != "get" {
		return badInput("viz data: unknown action %q: want get or walk", args[0])
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
	if configureFetcher != nil {
		configureFetcher(f)
	}
	for _, r := range remotes {
		fmt.Fprintf(stderr, "%s: %s\n", r.Name, r.URL)
		path, err := f.Fetch(ctx, r)
		if err != nil {
			return fmt.Errorf("viz data get: %w; %s", err, haveFileHint(r, *dir))
		}
		fmt.Fprintf(stdout, "%s: %s (%d bytes, sha256 %s)\n", r.Name, path, r.Size, r.SHA256)
	}
	return nil
}

// runDataWalk writes a walk (dataset.WriteWalkCSV) to the file -o names.
func runDataWalk(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("data walk", stderr)
	rows := fs.Int("rows", 10000, "rows to write")
	seed := fs.Uint64("seed", 1, "the noise's seed: the same seed gives the same file")
	out := fs.String("o", "", "the file to write, its format by its extension: .csv, .npy (a structured array of the CSV's columns) .npz (arrays x_time, y, truth, split) or .parquet (the CSV's columns); - : CSV to standard output")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *rows < 1 {
		return badInput("viz data walk: -rows %d: want ≥ 1", *rows)
	}
	if *out == "" {
		return badInput("viz data walk: name the file to write with -o (for example -o walk.csv; -o - writes to standard output)")
	}
	if *out == "-" {
		return dataset.WriteWalkCSV(stdout, *rows, *seed)
	}
	write, ok := map[string]func(io.Writer, int, uint64) error{
		".csv": dataset.WriteWalkCSV, ".npy": dataset.WriteWalkNPY, ".npz": dataset.WriteWalkNPZ, ".parquet": dataset.WriteWalkParquet,
	}[strings.ToLower(filepath.Ext(*out))]
	if !ok {
		return badInput("viz data walk: -o %s: want a file ending in .csv, .npy, .npz or .parquet", *out)
	}
	f, err := os.Create(*out)
	if err != nil {
		return usageError{fmt.Errorf("viz data walk: %w", err)}
	}
	if err := write(f, *rows, *seed); err != nil {
		f.Close()
		return fmt.Errorf("viz data walk: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("viz data walk: %w", err)
	}
	fmt.Fprintf(stderr, "viz data walk: %d rows (seed %d) in %s\n", *rows, *seed, *out)
	return nil
}

// configureFetcher, when not nil, adjusts viz data get's Fetcher: the
// tests take it offline.
var configureFetcher func(*dataset.Fetcher)

// haveFileHint says what to do with r's file when it is on this machine
// already but cannot be downloaded (offline): use it where it is, or put
// it where the data sets are looked for.
func haveFileHint(r dataset.Remote, dir string) string {
	return fmt.Sprintf("if you have the file %s, use it where it is with -data %s:PATH, or copy it to %s (set %s to keep the data sets elsewhere)",
		r.File, r.Name, filepath.Join(dir, r.Dir, r.File), dataset.DataDirEnv)
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
