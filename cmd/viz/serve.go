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
	"strconv"
	"strings"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/stream"
	"dgpviz/web"
)

func init() {
	register(command{name: "serve", summary: "serve the live deep GP page (the default command)", run: runServe})
}

// serveOptions are the parsed flags of viz serve.
type serveOptions struct {
	addr     string
	data     []string
	cfg      stream.Config
	limits   stream.Limits
	origins  []string
	hosts    []string // host names answered (-allow-host), besides the loopback names
	perIP    int      // open connections per client address
	logLevel slog.Level
	workers  int
	set      map[string]bool // flags given on the command line
}

func parseServe(args []string, stderr io.Writer) (serveOptions, error) {
	o := serveOptions{cfg: stream.DefaultConfig(), limits: stream.DefaultLimits()}
	fs := newFlags("serve", stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	fs.Func("data", `data set: "step", "robot" or "robot:PATH" (robot WiFi readings; opens the robot view), "frey" or "frey:PATH" (the Frey faces MAT-file; opens the Frey faces view), or "csv:PATH"; repeat to offer several (the first is the default). "robot" and "frey" are the files 'viz data get' fetches. A CSV has a header row; columns whose names start with x are the inputs, those starting with y the outputs, others are ignored; values must be finite numbers`, func(s string) error {
		o.data = append(o.data, s)
		return nil
	})
	hidden := fs.String("hidden", "1,1", "hidden layer widths, comma-separated (1,1: a 3-layer deep GP)")
	fs.IntVar(&o.cfg.Inducing, "inducing", o.cfg.Inducing, "inducing points per layer")
	fs.TextVar(&o.cfg.Method, "optimizer", o.cfg.Method, "optimizer: lbfgs or adam")
	fs.Float64Var(&o.cfg.LearningRate, "lr", o.cfg.LearningRate, "Adam's learning rate")
	fs.Uint64Var(&o.cfg.Seed, "seed", o.cfg.Seed, "initialisation seed")
	fs.IntVar(&o.cfg.Speed, "speed", o.cfg.Speed, "at most this many optimizer iterations per second, so learning can be watched (0: as fast as possible)")
	paused := fs.Bool("paused", false, "start sessions paused")
	fs.IntVar(&o.limits.MaxSessions, "max-sessions", o.limits.MaxSessions, "concurrent browser sessions")
	fs.IntVar(&o.limits.MaxInducing, "max-inducing", o.limits.MaxInducing, "inducing points per layer a client may ask for")
	fs.IntVar(&o.limits.MaxRows, "max-rows", o.limits.MaxRows, "training rows a data set may have")
	fs.IntVar(&o.limits.MaxFollowers, "max-followers", o.limits.MaxFollowers, "read-only followers of shared sessions, all together (Share live)")
	fs.Func("session-memory", fmt.Sprintf("memory one session's model may be estimated to need, in MiB (0: no budget; default %d)", o.limits.SessionMemory>>20), mibFlag(&o.limits.SessionMemory))
	fs.Func("server-memory", fmt.Sprintf("memory all sessions together may be estimated to need, in MiB (0: no budget; default %d)", o.limits.ServerMemory>>20), mibFlag(&o.limits.ServerMemory))
	fs.DurationVar(&o.limits.MaxIterTime, "max-iter-time", o.limits.MaxIterTime, "longest estimated optimizer iteration a session's model may have (0: no limit)")
	fs.IntVar(&o.workers, "workers", 1, "evaluator goroutines per session (0: one per CPU)")
	fs.Func("allow-origin", "also accept websocket connections from pages at this host pattern (e.g. '*.example.org'); repeatable", func(s string) error {
		o.origins = append(o.origins, strings.ToLower(s))
		return nil
	})
	fs.Func("allow-host", "also answer requests for this host name (the loopback names and the -addr host always are; '*': any, which gives up the defence against DNS rebinding); repeatable", func(s string) error {
		o.hosts = append(o.hosts, strings.ToLower(s))
		return nil
	})
	fs.IntVar(&o.perIP, "max-conns-per-ip", 64, "open connections one client address may hold (page, assets, websocket, downloads)")
	fs.TextVar(&o.logLevel, "log-level", slog.LevelInfo, "log level: debug, info, warn, error")
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	o.cfg.Play = !*paused
	h, err := engine.ParseHidden(*hidden)
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
	cat, err := stream.NewCatalog(o.data, o.limits)
	if err != nil {
		return usageError{err}
	}
	for _, name := range cat.Names() {
		for _, w := range dataset.Warnings(cat.Get(name)) {
			log.Warn("degenerate data", "dataset", name, "warning", w)
		}
	}
	if len(o.data) > 0 {
		o.cfg.Dataset = cat.NameOf(o.data[0])
	}
	o.cfg = robotDefaults(o, cat) // robot_serve.go
	o.cfg = freyDefaults(o, cat)  // frey_serve.go
	o.limits = freyLimits(o, cat) // frey_serve.go
	srv, err := stream.NewServer(stream.Options{Catalog: cat, Limits: o.limits, Defaults: o.cfg, AllowedOrigins: o.origins, Workers: o.workers, Logger: log})
	if err != nil {
		return usageError{err}
	}
	if o.perIP < 1 {
		return usageError{fmt.Errorf("viz serve: -max-conns-per-ip %d, want ≥ 1", o.perIP)}
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return usageError{fmt.Errorf("viz serve: %w", err)}
	}
	hosts := append(web.LoopbackHosts(), o.hosts...)
	if h, _, err := net.SplitHostPort(o.addr); err == nil && h != "" && h != "0.0.0.0" && h != "::" {
		hosts = append(hosts, h)
	}
	return serve(ctx, web.LimitPerClient(ln, o.perIP), web.AllowHosts(web.New(srv, srv, log), hosts), srv, log, stdout)
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

// serve runs the HTTP server on ln until ctx ends, then shuts down:
// first every websocket session is closed with a close frame (1001) and
// the server's background work stops, then the HTTP server stops
// accepting and waits briefly for running requests, cutting off any that
// do not finish; all within 5 s.
func serve(ctx context.Context, ln net.Listener, h http.Handler, srv *stream.Server, log *slog.Logger, stdout io.Writer) error {
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
	fmt.Fprintf(stdout, "dgpviz: serving on %s\n", url)
	log.Info("serving", "url", url, "defaults", srv.Defaults().Query().Encode(), "datasets", srv.Catalog().Names())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("viz serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "sessions", srv.Sessions())
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
		return fmt.Errorf("viz serve: %w", err)
	}
	if errSessions != nil {
		return fmt.Errorf("viz serve: shutdown: %w", errSessions)
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
