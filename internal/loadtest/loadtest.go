// Package loadtest drives websocket sessions against a dgpviz server on
// loopback for a bounded time and reports what the server delivered: frames
// per second per client, reply latency, the gaps between frames, the
// server's RSS and goroutines before, during and after, and the close codes
// the clients saw. It is the logic of `viz loadtest`.
//
// Three modes:
//
//   - sessions: N sessions, each with its own model, playing;
//   - churn: N connections opened and dropped in every way (clean close,
//     TCP FIN, TCP RST, never reading, mid-handshake, refused
//     configuration, a burst of commands then gone), then a check that the
//     server's goroutines return to their baseline and new clients are
//     served;
//   - slow: N normal sessions run alone for a third of the time, then N/4
//     (at least 1) clients that read slowly or never join; the report
//     compares the normal clients' frame rates before and after;
//   - attack: N victims run alone for a third of the time, then one
//     client attacks (attack.go), while honest newcomers keep arriving.
//
// Every client is a client of its own to the server's per-client limits
// (the address it names in X-Forwarded-For: the in-process server trusts
// it; start an external one with viz serve -trust-proxy); an attack comes
// from one.
//
// With no URL the server runs in this process (the default step data set,
// as `viz serve` builds it) on 127.0.0.1:0; its goroutines are counted
// exactly (the clients' own are subtracted) but the RSS is the process's,
// clients included. Against an external server (URL) the RSS is read from
// /proc/PID when a PID is given and goroutines are not known.
package loadtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// Modes.
const (
	ModeSessions = "sessions"
	ModeChurn    = "churn"
	ModeSlow     = "slow"
	// ModeFollowers: one presenter session (the query) and N read-only
	// followers of it (/ws?follow=KEY): the followers' frame rates, the
	// presenter's, the server's memory.
	ModeFollowers = "followers"
	// ModeRelays: one presenter's server, an embedded NATS server, Relays
	// relays as processes (Exec) and N followers spread over them
	// (relays.go).
	ModeRelays = "relays"
	// ModeAttack: N victims, then one client's Attack (attack.go).
	ModeAttack = "attack"
)

// Options configure a run.
type Options struct {
	N        int           // sessions (sessions, slow) or connections (churn)
	Duration time.Duration // measurement time (churn: the longest it may run)
	Query    string        // session URL query, e.g. "play=1"
	Mode     string        // ModeSessions (""), ModeChurn or ModeSlow
	URL      string        // ws://host:port/ws of an external server; "": in process
	PID      int           // external server's process id, for its RSS (0: unknown)
	// MaxSessions is the in-process server's session limit (0: enough for
	// N sessions, at least stream's default).
	MaxSessions int
	// ReplyEvery is how often each client sends a cheap command and times
	// its ack (0: 1 s).
	ReplyEvery time.Duration
	// Concurrency is how many churn connections are in flight at once
	// (0: 32).
	Concurrency int
	// Progress, if set, receives one-line progress notes.
	Progress func(string)
	// Relays is the number of relay processes (ModeRelays; 0: 4).
	Relays int
	// Faults are ModeRelays's failures to cause (FaultKillRelay, …).
	Faults []string
	// Exec returns the command that runs viz with args (ModeRelays: the
	// presenter's server and the relays are processes).
	Exec func(args ...string) *exec.Cmd
	// Attack is ModeAttack's attack (Attacks), AttackQuery its sessions'
	// query ("": the attack's own).
	Attack, AttackQuery string
	// AttackClients is how many clients run the attack, each from an
	// address of its own (0: one).
	AttackClients int
	// Data are the in-process server's data sets (viz serve -data specs;
	// none: the step data).
	Data []string
	// KeepFreedMemory: the in-process server leaves freed memory to Go's
	// scavenger (viz serve -return-memory=false).
	KeepFreedMemory bool
	// PoolShare is the in-process server's share of each of the pool's
	// cores (viz serve -background-share; 0: the default).
	PoolShare float64
}

// Check validates the options, with errors that name the flag.
func (o *Options) Check() error {
	if o.Mode == "" {
		o.Mode = ModeSessions
	}
	switch o.Mode {
	case ModeSessions, ModeChurn, ModeSlow, ModeFollowers, ModeRelays, ModeAttack:
	default:
		return fmt.Errorf("-mode %q: want sessions, churn, slow, followers, relays or attack", o.Mode)
	}
	if o.Mode == ModeAttack {
		if !slices.Contains(Attacks, o.Attack) {
			return fmt.Errorf("-attack %q: want one of %s", o.Attack, strings.Join(Attacks, ", "))
		}
		if _, err := url.ParseQuery(o.AttackQuery); err != nil {
			return fmt.Errorf("-attack-query %q: %v", o.AttackQuery, err)
		}
	} else if o.Attack != "" || o.AttackQuery != "" {
		return errors.New("-attack and -attack-query are for -mode attack")
	}
	if len(o.Data) > 0 && o.URL != "" {
		return errors.New("-data sets the in-process server's data sets; start the external server with viz serve -data instead")
	}
	if o.Mode == ModeRelays {
		if o.Relays == 0 {
			o.Relays = 4
		}
		if o.Relays < 1 || o.Relays > 64 {
			return fmt.Errorf("-relays %d: want 1…64", o.Relays)
		}
		if o.URL != "" || o.PID != 0 || o.MaxSessions != 0 {
			return errors.New("-mode relays starts its own presenter's server, NATS server and relays: -url, -pid and -max-sessions do not apply")
		}
		if o.Exec == nil {
			return errors.New("-mode relays needs the viz program to run the presenter's server and the relays")
		}
		for _, f := range o.Faults {
			if f != FaultKillRelay && f != FaultRestartNATS && f != FaultPresenterLeaves {
				return fmt.Errorf("-faults %q: want kill-relay, restart-nats and/or presenter-leaves", f)
			}
			if f == FaultKillRelay && o.Relays < 2 {
				return errors.New("-faults kill-relay needs at least 2 relays: its followers go on through another")
			}
		}
	} else if len(o.Faults) > 0 || o.Relays != 0 {
		return errors.New("-relays and -faults are for -mode relays")
	}
	if o.N < 1 || o.N > 100000 {
		return fmt.Errorf("-n %d: want 1…100000", o.N)
	}
	if o.Duration <= 0 || o.Duration > time.Hour {
		return fmt.Errorf("-duration %v: want more than 0 and at most 1h", o.Duration)
	}
	if _, err := url.ParseQuery(strings.TrimPrefix(o.Query, "?")); err != nil {
		return fmt.Errorf("-query %q: %v", o.Query, err)
	}
	o.Query = strings.TrimPrefix(o.Query, "?")
	if o.URL != "" {
		u, err := url.Parse(o.URL)
		if err != nil {
			return fmt.Errorf("-url %q: %v", o.URL, err)
		}
		if u.Scheme != "ws" && u.Scheme != "wss" {
			return fmt.Errorf("-url %q: want a ws:// or wss:// URL such as ws://127.0.0.1:8080/ws", o.URL)
		}
		if u.Host == "" || u.Hostname() == "" {
			return fmt.Errorf("-url %q: no host; want e.g. ws://127.0.0.1:8080/ws", o.URL)
		}
		if u.RawQuery != "" {
			return fmt.Errorf("-url %q: has a query; give the session's parameters with -query", o.URL)
		}
		if u.Path == "" {
			u.Path = "/ws"
			o.URL = u.String()
		}
	}
	if o.PID < 0 {
		return fmt.Errorf("-pid %d: want a process id", o.PID)
	}
	if o.PID != 0 && o.URL == "" {
		return errors.New("-pid needs -url: an in-process server's RSS is read from this process")
	}
	if o.MaxSessions < 0 {
		return fmt.Errorf("-max-sessions %d: want ≥ 0", o.MaxSessions)
	}
	if o.MaxSessions > 0 && o.URL != "" {
		return errors.New("-max-sessions sets the in-process server's limit; start the external server with viz serve -max-sessions instead")
	}
	if o.ReplyEvery <= 0 {
		o.ReplyEvery = time.Second
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 32
	}
	return nil
}

// Run runs the load test and returns its report.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if o.Mode == ModeRelays {
		r := &Report{Mode: o.Mode, N: o.N, Duration: o.Duration.Seconds(), Query: o.Query, CloseCodes: map[string]int{}}
		return r, runRelays(ctx, o, r)
	}
	t, err := newTarget(o)
	if err != nil {
		return nil, err
	}
	defer t.stop()
	r := &Report{Mode: o.Mode, N: o.N, Duration: o.Duration.Seconds(), Query: o.Query, URL: t.url, InProcess: t.srv != nil, MaxSessions: t.maxSessions, CloseCodes: map[string]int{}}
	switch o.Mode {
	case ModeChurn:
		err = runChurn(ctx, o, t, r)
	case ModeAttack:
		err = runAttack(ctx, o, t, r)
	default:
		err = runSessions(ctx, o, t, r)
	}
	return r, err
}

func (o Options) note(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}
