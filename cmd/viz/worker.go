package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"dgpviz/internal/dataset"
	"dgpviz/internal/relay"
	"dgpviz/internal/shards"
)

func init() {
	register(command{name: "worker", summary: "evaluate shards of a fit's data for viz fit -nats or viz serve -workers-nats on another process or machine (docs/scaling.md)", run: runWorker})
}

// shardFlags are the flags of a fit whose data are evaluated by worker
// processes (viz fit -nats, viz serve -workers-nats).
type shardFlags struct {
	nats string
	natsFlags
	fit    string
	shards int
}

func (f *shardFlags) define(fs *flag.FlagSet, natsFlag string) {
	fs.StringVar(&f.nats, natsFlag, "", "evaluate the bound of all the data on worker processes (viz worker) reached through the NATS server at this URL, with the credentials in -nats-creds: each worker reads the data file itself (checked by its sha256) and evaluates the shards of rows it is given")
	f.natsFlags.define(fs, "fit")
	fs.StringVar(&f.fit, "nats-fit", "default", "the name of the fit on NATS, which its workers are started with (viz worker -fit) and its credentials are for")
	fs.IntVar(&f.shards, "nats-shards", shards.DefaultShards, "shards of rows the data are split into (at most one per chunk of 8192 rows); a worker evaluates one or more of them")
}

// coordinator connects to NATS and returns the fit's coordinator for the
// data read from spec, normalised with nx and ny; stop disconnects.
func (f *shardFlags) coordinator(cmd, spec string, ds *dataset.Dataset, nx, ny dataset.Normalizer, log *slog.Logger) (co *shards.Coordinator, stop func(), err error) {
	if err := relay.CheckFitName(f.fit); err != nil {
		return nil, nil, badInput("%s: -nats-fit: %v", cmd, err)
	}
	if f.shards < 1 {
		return nil, nil, badInput("%s: -nats-shards %d: want at least 1", cmd, f.shards)
	}
	data, err := shards.DataOf(spec, ds, nx, ny)
	if err != nil {
		return nil, nil, badInput("%s: %v", cmd, err)
	}
	nc, err := f.connect(cmd, relay.Coordinator, f.nats, "dgpviz fit "+f.fit, nil)
	if err != nil {
		return nil, nil, err
	}
	co, err = shards.NewCoordinator(nc, f.fit, data, shards.Options{Shards: f.shards, Logger: log})
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return co, func() { co.Close(); nc.Close() }, nil
}

func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("worker", stderr)
	var nf natsFlags
	url := fs.String("nats", "", "the NATS server's URL (e.g. nats://10.0.0.2:4222 or tls://…), required")
	fit := fs.String("fit", "default", "the name of the fit to serve (viz fit -nats-fit)")
	id := fs.String("id", "", "this worker's name among the fit's (default: random)")
	workers := fs.Int("workers", 0, "goroutines per evaluation (0: GOMAXPROCS)")
	quiet := fs.Bool("quiet", false, "log warnings only")
	nf.define(fs, "worker")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *url == "" {
		return badInput("viz worker: -nats is required: the URL of the NATS server the fit's coordinator uses")
	}
	if err := relay.CheckFitName(*fit); err != nil {
		return badInput("viz worker: -fit: %v", err)
	}
	if *id == "" {
		*id = shards.NewWorkerID()
	} else if err := relay.CheckFitName(*id); err != nil {
		return badInput("viz worker: -id: %v", err)
	}
	if *workers < 0 {
		return badInput("viz worker: -workers %d: want 0 (GOMAXPROCS) or more", *workers)
	}
	level := slog.LevelInfo
	if *quiet {
		level = slog.LevelWarn
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	nc, err := nf.connect("viz worker", relay.Worker, *url, "dgpviz worker "+*id, log)
	if err != nil {
		return err
	}
	defer nc.Close()
	log.Info(fmt.Sprintf("worker %s of the fit %q: waiting for its coordinator (viz fit -nats-fit %s)", *id, *fit, *fit))
	return (&shards.Worker{Fit: *fit, ID: *id, Engine: *workers, Logger: log}).Serve(ctx, nc)
}
