package loadtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/stream"
	"dgpviz/web"
)

// target is the server under test: in process (srv set) or external.
type target struct {
	url         string // ws://host:port/ws
	srv         *stream.Server
	hs          *http.Server
	pid         int // external server's process, 0: unknown
	maxSessions int // in-process limit (0: unknown)
}

// clientGoroutines counts this package's client goroutines, so that an
// in-process server's goroutines are the process's minus these.
var clientGoroutines atomic.Int64

// spawn runs f in a counted client goroutine.
func spawn(f func()) {
	clientGoroutines.Add(1)
	go func() {
		defer clientGoroutines.Add(-1)
		f()
	}()
}

// newTarget starts the in-process server (as viz serve builds it, with the
// default step data set) or describes the external one.
func newTarget(o Options) (*target, error) {
	if o.URL != "" {
		return &target{url: o.URL, pid: o.PID}, nil
	}
	limits := admit.DefaultLimits()
	if o.Mode == ModeChurn { // n counts connections, at most Concurrency at once
		// Room for sessions the server is still ending after their
		// clients dropped: a 1013 here would test the limit, not the churn.
		limits.MaxSessions = max(limits.MaxSessions, 4*o.Concurrency)
	} else {
		limits.MaxSessions = max(limits.MaxSessions, o.N+max(1, o.N/4))
	}
	if o.MaxSessions > 0 {
		limits.MaxSessions = o.MaxSessions
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cat, err := dataset.NewCatalog(o.Data, limits.MaxRows)
	if err != nil {
		return nil, err
	}
	def := admit.DefaultConfig()
	if len(o.Data) > 0 {
		def.Dataset = cat.NameOf(o.Data[0])
		def = admit.PresetConfig(def, cat.Get(def.Dataset), limits)
		limits = admit.PresetLimits(limits, cat)
	}
	// As viz serve: the memory limit the budget implies. The clients are
	// clients of their own by the address they name (client.go), as
	// behind a proxy.
	if limit, ok := admit.MemoryLimit(limits, os.Getenv("GOMEMLIMIT")); ok {
		debug.SetMemoryLimit(limit)
	}
	srv, err := stream.NewServer(stream.Options{Catalog: cat, Limits: limits, Defaults: def, Workers: 1, Logger: log, TrustProxy: true, KeepFreedMemory: o.KeepFreedMemory, PoolShare: o.PoolShare})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	// All clients come from loopback, one client to the listener (they
	// name their own addresses in a header it does not see): allow them
	// all (viz serve's -max-conns-per-ip defaults to 64).
	perIP := max(1024, o.N+64, 4*o.Concurrency)
	hs := &http.Server{
		Handler:           web.AllowHosts(web.New(srv, srv, log), web.LoopbackHosts()),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go hs.Serve(web.LimitPerClient(ln, perIP))
	return &target{url: "ws://" + ln.Addr().String() + "/ws", srv: srv, hs: hs, maxSessions: limits.MaxSessions}, nil
}

func (t *target) stop() {
	if t.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	t.srv.Shutdown(ctx)
	t.hs.Shutdown(ctx)
	t.hs.Close()
}

// Sample is the server's state at one moment. Goroutines is -1 when
// unknown (an external server), RSSMB 0 when unknown.
type Sample struct {
	At         float64 `json:"at_s"` // seconds since the run started
	RSSMB      float64 `json:"rss_mb"`
	Goroutines int     `json:"goroutines"`
	Sessions   int     `json:"sessions"` // open sessions (in process; -1: unknown)
}

func (t *target) sample(t0 time.Time) Sample {
	s := Sample{At: time.Since(t0).Seconds(), Goroutines: -1, Sessions: -1}
	if t.srv != nil {
		s.Goroutines = t.goroutines()
		s.Sessions = t.srv.Sessions()
		s.RSSMB = rssMB("/proc/self/status")
	} else if t.pid > 0 {
		s.RSSMB = rssMB("/proc/" + strconv.Itoa(t.pid) + "/status")
	}
	return s
}

// goroutines returns the process's goroutines less the clients'.
func (t *target) goroutines() int {
	return runtime.NumGoroutine() - int(clientGoroutines.Load())
}

// rssMB reads VmRSS from a /proc status file (0 if it cannot).
func rssMB(path string) float64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb / 1024
		}
	}
	return 0
}

// settle waits up to d for the in-process server to have no sessions and
// its goroutines to be back at base (at most base+slack), and returns the
// last sample and how long it took.
func (t *target) settle(t0 time.Time, base, slack int, d time.Duration) (Sample, float64, bool) {
	start := time.Now()
	for {
		s := t.sample(t0)
		ok := t.srv == nil || (s.Sessions == 0 && s.Goroutines <= base+slack)
		if ok || time.Since(start) > d {
			if t.srv == nil {
				time.Sleep(min(d, 2*time.Second)) // let an external server free its sessions
				s = t.sample(t0)
			}
			return s, time.Since(start).Seconds(), ok
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sampler samples the server every second until stop is closed.
type sampler struct {
	mu      sync.Mutex
	samples []Sample
	done    chan struct{}
}

func startSampler(t *target, t0 time.Time, stop <-chan struct{}) *sampler {
	s := &sampler{done: make(chan struct{})}
	spawn(func() {
		defer close(s.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				x := t.sample(t0)
				s.mu.Lock()
				s.samples = append(s.samples, x)
				s.mu.Unlock()
			}
		}
	})
	return s
}

// sofar returns the samples taken so far.
func (s *sampler) sofar() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.samples)
}

// wait waits for the sampler to stop and returns its samples.
func (s *sampler) wait() []Sample {
	<-s.done
	return s.sofar()
}
