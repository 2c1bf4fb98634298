package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"dgpviz/internal/loadtest"
)

func init() {
	register(command{name: "loadtest", summary: "drive websocket sessions against a server on loopback and report frame rates, latency, RSS and close codes", run: runLoadtest})
}

// loadtestOptions are the parsed flags of viz loadtest.
type loadtestOptions struct {
	lt      loadtest.Options
	json    bool
	verbose bool
}

func parseLoadtest(args []string, stderr io.Writer) (loadtestOptions, error) {
	var o loadtestOptions
	fs := newFlags("loadtest", stderr)
	fs.IntVar(&o.lt.N, "n", 16, "sessions (modes sessions and slow: the normal clients; slow adds n/4 slow ones) or connections (churn)")
	fs.DurationVar(&o.lt.Duration, "duration", loadtestDefaultDuration, "how long to measure (churn: the longest it may run)")
	fs.StringVar(&o.lt.Query, "query", steadyQuery, "the sessions' URL query (as /ws?…), e.g. 'play=1&hidden=2,2'; the default keeps them fitting at 60 iterations/s")
	fs.StringVar(&o.lt.Mode, "mode", loadtest.ModeSessions, "sessions: n sessions playing; churn: n connections dropped in every way, then goroutines and new sessions checked; slow: n sessions, then n/4 clients that read slowly or never; followers: one presenter session and n read-only followers of it; relays: one presenter's server (viz serve -nats), an embedded NATS server, -relays relays (viz relay) and n followers spread over them; attack: n victims, then one client's -attack while honest newcomers arrive (victims' frame rates, newcomers admitted, RSS against the memory budget)")
	fs.StringVar(&o.lt.Attack, "attack", "", "-mode attack's attack: "+strings.Join(loadtest.Attacks, ", "))
	fs.IntVar(&o.lt.AttackClients, "attack-clients", 1, "-mode attack: how many clients run the attack, each from an address of its own")
	fs.StringVar(&o.lt.AttackQuery, "attack-query", "", "-mode attack: the attacker's sessions' URL query (default: the attack's own, e.g. add-data's 'play=0&hidden=8,8,8,8,8&m=64')")
	fs.Func("data", "the in-process server's data sets, as viz serve -data; repeatable (default: the step data)", func(s string) error {
		o.lt.Data = append(o.lt.Data, s)
		return nil
	})
	fs.Float64Var(&o.lt.PoolShare, "background-share", 0, "the in-process server's -background-share")
	returnMemory := fs.Bool("return-memory", true, "the in-process server returns freed memory at once, as viz serve -return-memory")
	fs.StringVar(&o.lt.URL, "url", "", "an external server's websocket URL (ws://host:port/ws; start it with -max-conns-per-ip above n, the clients all come from one address, and with -trust-proxy, so that each client counts as the address it names); empty: start a server in this process on 127.0.0.1:0 with the default step data set (its goroutines are counted, but its RSS includes the clients', and past a few dozen sessions the clients queue behind the optimizers in one scheduler: measure rates and latency at high loads with -url)")
	fs.IntVar(&o.lt.PID, "pid", 0, "the external server's process id, to read its RSS from /proc (with -url)")
	fs.IntVar(&o.lt.MaxSessions, "max-sessions", 0, "the in-process server's session limit (0: at least n)")
	fs.DurationVar(&o.lt.ReplyEvery, "reply-every", 0, "how often each session sends a speed command and times its ack (0: 1s)")
	fs.IntVar(&o.lt.Concurrency, "concurrency", 0, "churn: connections in flight at once (0: 32)")
	fs.IntVar(&o.lt.Relays, "relays", 0, "relays: relay processes (0: 4)")
	fs.Func("faults", "relays: failures to cause, comma-separated: kill-relay (a relay killed a third into the run), restart-nats (NATS restarted at two thirds), presenter-leaves (at the end)", func(s string) error {
		o.lt.Faults = strings.Split(s, ",")
		return nil
	})
	fs.BoolVar(&o.json, "json", false, "write the report as JSON")
	fs.BoolVar(&o.verbose, "v", false, "progress notes on stderr")
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	o.lt.KeepFreedMemory = !*returnMemory
	if o.lt.Mode == loadtest.ModeRelays {
		o.lt.Exec = vizCommand
	}
	if err := o.lt.Check(); err != nil {
		return o, badInput("viz loadtest: %v", err)
	}
	return o, nil
}

const loadtestDefaultDuration = 10 * time.Second

func runLoadtest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseLoadtest(args, stderr)
	if err != nil {
		return err
	}
	if o.verbose {
		o.lt.Progress = func(s string) { fmt.Fprintln(stderr, "viz loadtest:", s) }
	}
	r, err := loadtest.Run(ctx, o.lt)
	if err != nil {
		return fmt.Errorf("viz loadtest: %w", err)
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	r.WriteText(stdout)
	return nil
}

// vizCommand runs this program with args (the relays mode's presenter's
// server and relays). Tests set it to run the test binary as viz.
var vizCommand = func(args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return exec.Command(exe, args...)
}

// steadyQuery is the load test's sessions by default: the step demo with
// Adam's small steps, which fits at the page's 60 iterations a second for
// minutes. The demo's own L-BFGS converges within seconds, after which a
// session only answers commands and the frame rates measure nothing.
const steadyQuery = "play=1&opt=adam&lr=0.001"
