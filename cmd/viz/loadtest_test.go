package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"dgpviz/internal/loadtest"
)

func TestLoadtestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "0"}, "-n 0: want 1…100000"},
		{[]string{"-n", "many"}, "invalid value"},
		{[]string{"-url", "localhost:8080"}, "want a ws:// or wss:// URL"},
		{[]string{"-url", "ws://127.0.0.1:8080/ws?play=1"}, "give the session's parameters with -query"},
		{[]string{"-mode", "storm"}, "want sessions, churn, slow, followers, relays or attack"},
		{[]string{"-duration", "-1s"}, "-duration"},
		{[]string{"-pid", "1"}, "-pid needs -url"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		_, err := parseLoadtest(tc.args, io.Discard)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error mentioning %q", tc.args, err, tc.want)
		}
	}
	o, err := parseLoadtest([]string{"-n", "64", "-mode", "slow", "-url", "ws://127.0.0.1:8080/ws", "-pid", "42", "-json"}, io.Discard)
	if err != nil || o.lt.N != 64 || o.lt.Mode != "slow" || o.lt.PID != 42 || !o.json || o.lt.Query != steadyQuery {
		t.Errorf("parse: %+v, %v", o, err)
	}
	if _, err := parseLoadtest([]string{"-h"}, io.Discard); !errors.Is(err, errHelp) {
		t.Errorf("-h: %v, want errHelp", err)
	}
}

// TestLoadtestRelays runs viz loadtest -mode relays briefly, with every
// fault: a presenter's server and two relays as processes (this test
// binary as viz), eight followers. Every follower gets frames; the
// followers of the killed relay go on through the other; NATS's restart
// ends no follower's connection; when the presenter leaves every
// follower is told with 1001. Rates and costs are logged, not asserted.
func TestLoadtestRelays(t *testing.T) {
	var out strings.Builder
	err := run(context.Background(), []string{"loadtest", "-mode", "relays", "-n", "8", "-relays", "2", "-duration", "3s", "-faults", "kill-relay,restart-nats,presenter-leaves", "-json"}, &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var r loadtest.Report
	if err := json.Unmarshal([]byte(out.String()), &r); err != nil {
		t.Fatal(err)
	}
	rr := r.Relays
	t.Logf("%s", out.String())
	if r.Clients != 8 || r.FPS.Min <= 0 || rr == nil || rr.LatencyMS.N == 0 {
		t.Fatalf("followers %d, frames/s %+v, relays report %+v", r.Clients, r.FPS, rr)
	}
	if rr.Moved != 4 || rr.Stranded != 0 {
		t.Errorf("after the kill %d followers went on through another relay and %d were stranded, want 4 and 0", rr.Moved, rr.Stranded)
	}
	if rr.NATSErrors != 0 {
		t.Errorf("%d follower connections ended while NATS restarted, want none (a pause)", rr.NATSErrors)
	}
	if rr.Leave1001 != 8 {
		t.Errorf("%d followers told with 1001 when the presenter left (others: %v), want 8", rr.Leave1001, rr.LeaveOther)
	}
}
