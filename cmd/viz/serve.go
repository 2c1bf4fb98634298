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
	logLevel slog.Level
	workers  int
	set      map[string]bool // flags given on the command line
}

func parseServe(args []string, stderr io.Writer) (serveOptions, error) {
	o := serveOptions{cfg: stream.DefaultConfig(), limits: stream.DefaultLimits()}
	fs := newFlags("serve", stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	fs.Func("data", `data set: "step", "robot:PATH", "csv:PATH" or "frey:PATH"; repeat to offer several (the first is the default)`, func(s string) error {
		o.data = append(o.data, s)
		return nil
	})
	hidden := fs.String("hidden", "1,1", "hidden layer widths, comma-separated (1,1: a 3-layer deep GP)")
	fs.IntVar(&o.cfg.Inducing, "inducing", o.cfg.Inducing, "inducing points per layer")
	fs.StringVar(&o.cfg.Method, "optimizer", o.cfg.Method, "optimizer: lbfgs or adam")
	fs.Float64Var(&o.cfg.LearningRate, "lr", o.cfg.LearningRate, "Adam's learning rate")
	fs.Uint64Var(&o.cfg.Seed, "seed", o.cfg.Seed, "initialisation seed")
	fs.IntVar(&o.cfg.Speed, "speed", o.cfg.Speed, "at most this many optimizer iterations per second, so learning can be watched (0: as fast as possible)")
	paused := fs.Bool("paused", false, "start sessions paused")
	fs.IntVar(&o.limits.MaxSessions, "max-sessions", o.limits.MaxSessions, "concurrent browser sessions")
	fs.IntVar(&o.limits.MaxInducing, "max-inducing", o.limits.MaxInducing, "inducing points per layer a client may ask for")
	fs.IntVar(&o.limits.MaxRows, "max-rows", o.limits.MaxRows, "training rows a data set may have")
	fs.IntVar(&o.workers, "workers", 1, "evaluator goroutines per session (0: one per CPU)")
	fs.Func("allow-origin", "also accept websocket connections from pages at this host pattern (e.g. '*.example.org'); repeatable", func(s string) error {
		o.origins = append(o.origins, strings.ToLower(s))
		return nil
	})
	fs.TextVar(&o.logLevel, "log-level", slog.LevelInfo, "log level: debug, info, warn, error")
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	o.cfg.Play = !*paused
	o.cfg.Hidden = []int{}
	for _, f := range strings.Split(*hidden, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		w, err := strconv.Atoi(f)
		if err != nil {
			return o, badInput("viz serve: -hidden %q: want comma-separated integers like 1,1", *hidden)
		}
		o.cfg.Hidden = append(o.cfg.Hidden, w)
	}
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
	if len(o.data) > 0 {
		o.cfg.Dataset = cat.NameOf(o.data[0])
	}
	o.cfg = robotDefaults(o, cat) // latent_serve.go
	srv, err := stream.NewServer(stream.Options{Catalog: cat, Limits: o.limits, Defaults: o.cfg, AllowedOrigins: o.origins, Workers: o.workers, Logger: log})
	if err != nil {
		return usageError{err}
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return usageError{fmt.Errorf("viz serve: %w", err)}
	}
	return serve(ctx, ln, srv, log, stdout)
}

// serve runs the HTTP server on ln until ctx ends, then shuts down: it
// stops accepting, closes every websocket session with a close frame and
// waits (at most 5 s) for handlers to finish.
func serve(ctx context.Context, ln net.Listener, srv *stream.Server, log *slog.Logger, stdout io.Writer) error {
	hs := &http.Server{
		Handler:           web.New(srv, srv, log),
		ReadHeaderTimeout: 10 * time.Second,
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
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err1 := hs.Shutdown(sctx)
	err2 := srv.Shutdown(sctx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("viz serve: %w", err)
	}
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("viz serve: shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}
