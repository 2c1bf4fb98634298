package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/stream"
	"dgpviz/internal/train"
	"dgpviz/web"
)

func init() {
	register(command{name: "serve", summary: "serve the live deep GP page (the default command)", run: runServe})
}

// serveOptions are the parsed flags of viz serve.
type serveOptions struct {
	addr      string
	data      []string
	cfg       admit.Config
	limits    admit.Limits
	origins   []string
	hosts     []string // host names answered (-allow-host), besides the loopback names
	perIP     int      // open connections per client address
	pool      int      // -background-cores
	poolShare float64  // -background-share
	proxy     bool     // -trust-proxy
	keep      bool     // !-return-memory
	logLevel  slog.Level
	workers   int
	shape     [2]int          // -shape: the CSV data sets' image shape
	set       map[string]bool // flags given on the command line
	share     shareFlags      // -nats…: relays (relay.go)
	workerFit shardFlags      // -workers-nats…: fits on worker processes (worker.go)
}

func parseServe(args []string, stderr io.Writer) (serveOptions, error) {
	o := serveOptions{cfg: admit.DefaultConfig(), limits: admit.DefaultLimits()}
	fs := newFlags("serve", stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	fs.Func("data", `data set: "step", "robot" or "robot:PATH" (robot WiFi readings), "frey" or "frey:PATH" (the Frey faces MAT-file), "csv:PATH", "npy:PATH", "npz:PATH" or "parquet:PATH" (or a PATH ending in .csv, .npy, .npz or .parquet); repeat to offer several (the first is the default). "robot" and "frey" are the files 'viz data get' fetches. The data's shape chooses the view: one output a regression, several outputs the latent explorer, outputs that are the inputs an autoencoder. `+dataset.CSVConventions+" "+dataset.NumPyConventions+" "+dataset.ParquetConventions, func(s string) error {
		o.data = append(o.data, s)
		return nil
	})
	fs.Func("shape", "the outputs of the data files (CSV, NumPy, Parquet) are the pixels of images of this shape, rows x columns (e.g. 28x20): the autoencoder draws them as images", func(s string) error {
		sh, err := dataset.ParseShape(s)
		o.shape = sh
		return err
	})
	hidden := fs.String("hidden", "1,1", "hidden layer widths, comma-separated (1,1: a 3-layer deep GP)")
	fs.IntVar(&o.cfg.Inducing, "inducing", o.cfg.Inducing, "inducing points per layer")
	fs.Func("optimizer", fmt.Sprintf("optimizer: lbfgs (the default; svi above %d rows), adam, or svi (stochastic at any size; docs/fitting.md)", train.StochasticRows), func(s string) error {
		m, err := train.ParseMethod(s)
		if err == nil {
			o.cfg.Method = m
		}
		return err
	})
	fs.Float64Var(&o.cfg.LearningRate, "lr", o.cfg.LearningRate, "Adam's learning rate")
	fs.Uint64Var(&o.cfg.Seed, "seed", o.cfg.Seed, "initialisation seed")
	fs.IntVar(&o.cfg.Speed, "speed", o.cfg.Speed, "at most this many optimizer iterations per second, so learning can be watched (0: as fast as possible)")
	paused := fs.Bool("paused", false, "start sessions paused")
	fs.IntVar(&o.limits.MaxSessions, "max-sessions", o.limits.MaxSessions, "concurrent browser sessions")
	fs.IntVar(&o.limits.MaxSessionsPerClient, "max-sessions-per-client", o.limits.MaxSessionsPerClient, "concurrent browser sessions of one client (an address; the loopback range and an IPv6 /64 count as one; 0: no limit)")
	fs.IntVar(&o.pool, "background-cores", 0, "cores that expensive work (depth comparisons, densities, message figures, decodes, preset builds, resets) may use at once, shared fairly among clients (0: half the machine's)")
	fs.Float64Var(&o.poolShare, "background-share", admit.DefaultPoolShare, "the share of each of its cores that expensive work uses: after a turn of t it rests t·(1/share − 1), so that live sessions keep their frame rate (1: all)")
	fs.BoolVar(&o.proxy, "trust-proxy", false, "the server is behind a reverse proxy on this machine: a request from loopback counts as the client its X-Forwarded-For header names (its last address) for the per-client limits; -max-conns-per-ip then counts the proxy's connections")
	returnMemory := fs.Bool("return-memory", true, "return freed memory to the system at once when large reservations end (false: leave it to Go's scavenger, which takes minutes)")
	fs.IntVar(&o.limits.MaxInducing, "max-inducing", o.limits.MaxInducing, "inducing points per layer a client may ask for")
	fs.IntVar(&o.limits.MaxRows, "max-rows", o.limits.MaxRows, fmt.Sprintf("training rows a data set may have, and rows an uploaded file may have (default: %d, or %d — as many as a model may have — when -addr is a loopback address, where the only client is this machine's)", o.limits.MaxRows, engine.MaxData))
	fs.IntVar(&o.limits.MaxFollowers, "max-followers", o.limits.MaxFollowers, "read-only followers of shared sessions, all together (Share live)")
	fs.Func("session-memory", fmt.Sprintf("memory one session's model may be estimated to need, in MiB (0: no budget; default %d)", o.limits.SessionMemory>>20), mibFlag(&o.limits.SessionMemory))
	fs.Func("server-memory", fmt.Sprintf("memory all sessions together may be estimated to need, in MiB (0: no budget; default %d)", o.limits.ServerMemory>>20), mibFlag(&o.limits.ServerMemory))
	fs.DurationVar(&o.limits.MaxIterTime, "max-iter-time", o.limits.MaxIterTime, "longest estimated optimizer iteration a session's model may have (0: no limit)")
	fs.IntVar(&o.workers, "workers", 1, "evaluator goroutines per session (0: one per CPU)")
	hostFlags(fs, &o.origins, &o.hosts)
	fs.IntVar(&o.perIP, "max-conns-per-ip", 64, "open connections one client address may hold (page, assets, websocket, downloads)")
	fs.TextVar(&o.logLevel, "log-level", slog.LevelInfo, "log level: debug, info, warn, error")
	o.share.define(fs)
	o.workerFit.define(fs, "workers-")
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	if !o.set["max-rows"] && isLoopbackAddr(o.addr) {
		o.limits.MaxRows = engine.MaxData
	}
	if o.limits.MaxRows < 2 {
		return o, badInput("viz serve: -max-rows %d, want ≥ 2", o.limits.MaxRows)
	}
	o.cfg.Play = !*paused
	o.keep = !*returnMemory
	if !(o.poolShare > 0 && o.poolShare <= 1) {
		return o, badInput("viz serve: -background-share %v, want more than 0 and at most 1", o.poolShare)
	}
	if o.pool < 0 {
		return o, badInput("viz serve: -background-cores %d, want ≥ 0", o.pool)
	}
	if o.limits.MaxSessionsPerClient < 0 {
		return o, badInput("viz serve: -max-sessions-per-client %d, want ≥ 0", o.limits.MaxSessionsPerClient)
	}
	h, err := train.ParseHidden(*hidden)
	if err != nil {
		return o, badInput("viz serve: -hidden: %v", err)
	}
	o.cfg.Hidden = h
	return o, nil
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseServe(args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: o.logLevel}))
	cat, err := dataset.NewCatalog(o.data, o.limits.MaxRows)
	if err != nil {
		return badInput("viz serve: -data: %v", err)
	}
	for _, name := range cat.Names() {
		for _, w := range dataset.Warnings(cat.Get(name)) {
			log.Warn("degenerate data", "dataset", name, "warning", w)
		}
	}
	if o.shape != [2]int{} {
		if err := shapeCSVs(cat, o.data, o.shape); err != nil {
			return badInput("viz serve: -shape: %v", err)
		}
	}
	if len(o.data) > 0 {
		o.cfg.Dataset = cat.NameOf(o.data[0])
	}
	o.cfg, o.limits = presetDefaults(o, cat)
	share, stopShare, err := o.share.start(o.addr, &o.workerFit, log, stdout) // relay.go
	if err != nil {
		return err
	}
	defer stopShare()
	if limit, ok := admit.MemoryLimit(o.limits, os.Getenv("GOMEMLIMIT")); ok {
		debug.SetMemoryLimit(limit)
		log.Info("memory limit", "MiB", limit>>20)
	}
	onShards, stopShards, err := o.workerFit.sessions(log) // worker.go
	if err != nil {
		return err
	}
	defer stopShards()
	srv, err := stream.NewServer(stream.Options{Catalog: cat, Limits: o.limits, Defaults: o.cfg, AllowedOrigins: o.origins, Workers: o.workers, Logger: log, Share: share,
		PoolTurns: o.pool, PoolShare: o.poolShare, TrustProxy: o.proxy, KeepFreedMemory: o.keep, Shards: onShards})
	if err != nil {
		return badInput("viz serve: %v", err)
	}
	if o.perIP < 1 {
		return usageError{fmt.Errorf("viz serve: -max-conns-per-ip %d, want ≥ 1", o.perIP)}
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return usageError{fmt.Errorf("viz serve: %w", err)}
	}
	hosts := answeredHosts(o.addr, o.hosts)
	log.Info("defaults", "config", srv.Defaults().Query().Encode(), "datasets", srv.Catalog().Names())
	return serve(ctx, web.LimitPerClient(ln, o.perIP), web.AllowHosts(web.New(srv, srv, log), hosts), sessionServer{srv, stopShards}, log, stdout)
}

// hostFlags defines -allow-origin and -allow-host (viz serve, viz relay).
func hostFlags(fs *flag.FlagSet, origins, hosts *[]string) {
	fs.Func("allow-origin", "also accept websocket connections from pages at this host pattern (e.g. '*.example.org'); repeatable", func(s string) error {
		*origins = append(*origins, strings.ToLower(s))
		return nil
	})
	fs.Func("allow-host", "also answer requests for this host name (the loopback names and the -addr host always are; '*': any, which gives up the defence against DNS rebinding); repeatable", func(s string) error {
		*hosts = append(*hosts, strings.ToLower(s))
		return nil
	})
}

// isLoopbackAddr reports whether a server on addr (host:port) listens on
// the loopback interface only: a host that is a loopback address or
// "localhost". An empty host listens on every interface.
func isLoopbackAddr(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil || h == "" {
		return false
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// answeredHosts are the host names a server on addr answers: the
// loopback names, addr's host and extra (-allow-host).
func answeredHosts(addr string, extra []string) []string {
	hosts := append(web.LoopbackHosts(), extra...)
	if h, _, err := net.SplitHostPort(addr); err == nil && h != "" && h != "0.0.0.0" && h != "::" {
		hosts = append(hosts, h)
	}
	return hosts
}

// shapeCSVs declares the outputs of the data files (CSV, NumPy, Parquet:
// dataset.IsFileSpec) among specs that have shape[0] × shape[1] of them
// images of that shape, so that one server can offer images beside other
// files; it is an error when none has.
func shapeCSVs(cat *dataset.Catalog, specs []string, shape [2]int) error {
	var csvs []*dataset.Dataset
	for _, spec := range specs {
		if dataset.IsFileSpec(spec) {
			csvs = append(csvs, cat.Get(cat.NameOf(spec)))
		}
	}
	if len(csvs) == 0 {
		return errors.New("-shape applies to data files (-data csv:PATH, a .npy, .npz or .parquet file), and none was given")
	}
	n := 0
	for _, ds := range csvs {
		if _, d := ds.Y.Dims(); d == shape[0]*shape[1] {
			if err := ds.SetShape(shape); err != nil {
				return err
			}
			n++
		}
	}
	if n == 0 {
		return csvs[0].SetShape(shape) // says what the first has
	}
	return nil
}

// presetDefaults returns the configuration and limits of viz serve: the
// default data set's view may have a preset (the latent explorer's, the
// autoencoder's), which is the architecture unless the command line gave
// one; and the per-session budget rises to what the presets of the data
// sets offered need unless the command line set it.
func presetDefaults(o serveOptions, cat *dataset.Catalog) (admit.Config, admit.Limits) {
	cfg, l := o.cfg, o.limits
	if !o.set["hidden"] && !o.set["inducing"] {
		cfg = admit.PresetConfig(cfg, cat.Get(cfg.Dataset), l)
	}
	if !o.set["session-memory"] {
		l = admit.PresetLimits(l, cat)
	}
	return cfg, l
}

// HTTP limits (the websocket route's connections are hijacked, and the
// websocket library clears these deadlines; sessions keep their own).
const (
	readHeaderTimeout = 10 * time.Second // a client must send its headers in this time
	readTimeout       = 30 * time.Second // …and its whole request
	writeTimeout      = 60 * time.Second // a response (a large figure) must be written in this time
	idleTimeout       = 60 * time.Second // an idle keep-alive connection is closed after this
	maxHeaderBytes    = 16 << 10
	// Shutdown: sessions get sessionsGrace to close with 1001, then
	// requests still running get requestsGrace before they are cut off,
	// so that the process ends within 5 s.
	sessionsGrace = 3 * time.Second
	requestsGrace = 2 * time.Second
)

// shutdowner is what serve runs: a session server or a relay.
type shutdowner interface {
	Shutdown(context.Context) error
	command() string // "serve", "relay"
}

// sessionServer is a session server whose fits may run on workers:
// stopShards ends their evaluations first, so that a session waiting on
// workers that are gone ends at once, not after the wait.
type sessionServer struct {
	*stream.Server
	stopShards func()
}

func (s sessionServer) Shutdown(ctx context.Context) error {
	s.stopShards()
	return s.Server.Shutdown(ctx)
}

func (sessionServer) command() string { return "serve" }

// serve runs the HTTP server on ln until ctx ends, then shuts down:
// first every websocket session is closed with a close frame (1001) and
// the server's background work stops, then the HTTP server stops
// accepting and waits briefly for running requests, cutting off any that
// do not finish; all within 5 s.
func serve(ctx context.Context, ln net.Listener, h http.Handler, srv shutdowner, log *slog.Logger, stdout io.Writer) error {
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	url := "http://" + ln.Addr().String() + "/"
	verb := map[string]string{"serve": "serving", "relay": "relaying"}[srv.command()]
	fmt.Fprintf(stdout, "dgpviz: %s on %s\n", verb, url)
	log.Info(verb, "url", url)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("viz %s: %w", srv.command(), err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), sessionsGrace)
	defer cancel()
	errSessions := srv.Shutdown(sctx)
	hctx, cancel2 := context.WithTimeout(context.Background(), requestsGrace)
	defer cancel2()
	if err := hs.Shutdown(hctx); err != nil {
		log.Warn("requests still running at shutdown were cut off", "err", err)
		hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("viz %s: %w", srv.command(), err)
	}
	if errSessions != nil {
		return fmt.Errorf("viz %s: stopping: %w", srv.command(), errSessions)
	}
	log.Info("stopped")
	return nil
}

// mibFlag parses a size in MiB into *dst (bytes).
func mibFlag(dst *int64) func(string) error {
	return func(s string) error {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 || v > 1<<40 {
			return fmt.Errorf("want a whole number of MiB ≥ 0")
		}
		*dst = v << 20
		return nil
	}
}
