package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	neturl "net/url"
	"sync"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/relay"
	"dgpviz/internal/shards"
	"dgpviz/internal/train"
	"dgpviz/internal/view"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"gonum.org/v1/gonum/mat"
)

func init() {
	register(command{name: "worker", summary: "evaluate shards of a fit's data for viz fit -nats or viz serve -workers-nats on another process or machine (docs/scaling.md)", run: runWorker})
}

// shardFlags are the flags of a fit whose data are evaluated by worker
// processes (viz fit -nats, viz serve -workers-nats).
type shardFlags struct {
	nats string
	natsFlags
	fit     string
	shards  int
	dataURL string // viz fit only

	// viz serve only: -workers-embed, the fit whose workers
	// -nats-embed's server accepts, with the credentials in embedCreds;
	// embedded is that server and this process's coordinator's
	// credentials, once it runs (shareFlags.start).
	embed, embedCreds string
	embedded          *embeddedFit
}

// embeddedFit is -nats-embed's NATS server and the credentials of this
// process's coordinator of -workers-embed's fit on it.
type embeddedFit struct {
	ns    *server.Server
	creds *relay.Credentials
}

// define defines the flags, their names after prefix: "nats", …, for
// viz fit, "workers-nats", … for viz serve, whose -nats is its relays'.
func (f *shardFlags) define(fs *flag.FlagSet, prefix string) {
	fs.StringVar(&f.nats, prefix+"nats", "", "evaluate the bound of all the data on worker processes (viz worker) reached through the NATS server at this URL, with the credentials in -"+prefix+"nats-creds: each worker reads the data file itself (checked by its sha256) and evaluates the shards of rows it is given")
	fs.StringVar(&f.creds, prefix+"nats-creds", "", "with -"+prefix+"nats: the file of the fit's NATS credentials (the coordinator's role of -"+prefix+"nats-fit), readable by its owner alone (chmod 600). Never on the command line")
	fs.StringVar(&f.tls.CA, prefix+"nats-tls-ca", "", "with -"+prefix+"nats: PEM file of the certificate authority the NATS server's certificate is checked against (default: the system's)")
	fs.StringVar(&f.tls.Cert, prefix+"nats-tls-cert", "", "with -"+prefix+"nats: PEM file of this process's client certificate, if the NATS server asks for one")
	fs.StringVar(&f.tls.Key, prefix+"nats-tls-key", "", "PEM file of the private key of -"+prefix+"nats-tls-cert")
	fs.StringVar(&f.fit, prefix+"nats-fit", "default", "the name of the fit on NATS, which its workers are started with (viz worker -fit) and its credentials are for")
	if prefix == "workers-" {
		fs.StringVar(&f.embed, "workers-embed", "", "with -nats-embed: the name of a fit whose workers (viz worker -fit NAME) the embedded NATS server accepts, with the credentials it writes to -workers-embed-creds; this server's sessions of data files are fitted on them (instead of -workers-nats)")
		fs.StringVar(&f.embedCreds, "workers-embed-creds", "", "with -workers-embed: the file the workers' NATS credentials are kept in, readable by its owner alone; made if missing, reused if present (default: dgpviz/nats-worker-NAME.creds in the user's configuration folder, e.g. ~/.config)")
	}
	if prefix == "" {
		fs.StringVar(&f.dataURL, "nats-data-url", "", "with -nats: the http or https URL the workers download the data file from (kept in their data folder by its sha256, which must be the -data file's); default: each reads -data's path on its own machine")
	}
	fs.IntVar(&f.shards, prefix+"nats-shards", 0, fmt.Sprintf("shards of rows the data are split into, a worker evaluating one or more of them (0: %d of whole chunks of %d rows, fewer on fewer chunks)", shards.DefaultShards, engine.DefaultChunkRows))
}

// coordinator connects to NATS and returns the fit's coordinator for the
// data read from spec, normalised with nx and ny into x and y; stop
// disconnects.
func (f *shardFlags) coordinator(cmd, spec string, ds *dataset.Dataset, nx, ny dataset.Normalizer, x, y *mat.Dense, log *slog.Logger) (co *shards.Coordinator, stop func(), err error) {
	nc, err := f.connectFit(cmd, "")
	if err != nil {
		return nil, nil, err
	}
	data, err := shards.DataOf(spec, ds, nx, ny)
	if err != nil {
		nc.Close()
		return nil, nil, badInput("%s: %v", cmd, err)
	}
	data.URL = f.dataURL
	if u, err := neturl.Parse(f.dataURL); f.dataURL != "" && (err != nil || u.Scheme != "http" && u.Scheme != "https") {
		nc.Close()
		return nil, nil, badInput("%s: -nats-data-url %q: want an http or https URL", cmd, f.dataURL)
	}
	co, err = shards.NewCoordinator(nc, f.fit, data, shards.Options{Shards: f.shards, X: x, Y: y, Logger: log})
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return co, func() { co.Close(); nc.Close() }, nil
}

// connectFit checks the flags and connects to NATS as the fit's
// coordinator.
func (f *shardFlags) connectFit(cmd, prefix string) (*nats.Conn, error) {
	if err := relay.CheckFitName(f.fit); err != nil {
		return nil, badInput("%s: -%snats-fit: %v", cmd, prefix, err)
	}
	if f.shards < 0 {
		return nil, badInput("%s: -%snats-shards %d: want 0 (automatic) or more", cmd, prefix, f.shards)
	}
	if f.creds == "" {
		return nil, badInput("%s: -%snats-creds is required: the file of the fit's NATS credentials (the coordinator's)", cmd, prefix)
	}
	return f.connect(cmd, relay.Coordinator, f.nats, "dgpviz fit "+f.fit, nil)
}

// sessions connects to NATS for viz serve -workers-nats and returns what
// gives a session's fit its evaluator on the workers: one coordinator
// per data file, bound to the data as the sessions normalise them
// (sessions of uploads, of data not read from a file, or of points a
// person edited are fitted in this process). Without -workers-nats it
// returns nil.
func (f *shardFlags) sessions(log *slog.Logger) (func(d *view.Data) train.Evaluator, func(), error) {
	var nc *nats.Conn
	switch {
	case f.embedded != nil:
		if f.nats != "" || f.creds != "" || !f.tls.Empty() {
			return nil, func() {}, badInput("viz serve: give -workers-nats or -workers-embed, not both (-workers-embed's workers connect to -nats-embed's server)")
		}
		f.fit = f.embed
		var err error
		if nc, err = relay.Connect(f.embedded.ns.ClientURL(), relay.ConnectOptions{Name: "dgpviz fit " + f.fit, Credentials: f.embedded.creds, Server: f.embedded.ns, Logger: log}); err != nil {
			return nil, nil, badInput("viz serve: -workers-embed: %v", err)
		}
	case f.nats == "":
		if f.creds != "" || !f.tls.Empty() {
			return nil, func() {}, badInput("viz serve: the -workers-nats-… flags need -workers-nats")
		}
		return nil, func() {}, nil
	default:
		var err error
		if nc, err = f.connectFit("viz serve", "workers-"); err != nil {
			return nil, nil, err
		}
	}
	var mu sync.Mutex
	cos := map[*dataset.Dataset]*shards.Coordinator{}
	stop := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, co := range cos {
			co.Close()
		}
		nc.Close()
	}
	return func(d *view.Data) train.Evaluator {
		ds := d.Set
		if ds.Path == "" || d.Edited {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if co, ok := cos[ds]; ok {
			if co == nil { // a data set the workers cannot read
				return nil
			}
			return co
		}
		spec := ds.Path
		if ds.Source != nil {
			spec = ds.Source.Name + ":" + ds.Path
		} else if !dataset.IsFileSpec(spec) {
			return nil
		}
		data, err := shards.DataOf(spec, ds, d.NormX, d.NormY)
		if err == nil {
			var co *shards.Coordinator
			co, err = shards.NewCoordinator(nc, f.fit, data, shards.Options{Shards: f.shards, X: d.X, Y: d.Y, Logger: log})
			if err == nil {
				log.Info("fits of this data set run on the workers", "dataset", ds.Name, "fit", f.fit)
				cos[ds] = co
				return co
			}
		}
		log.Warn("fits of this data set run here, not on the workers", "dataset", ds.Name, "err", err)
		cos[ds] = nil
		return nil
	}, stop, nil
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
