package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestRelayFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "-nats is required"},
		{[]string{"-nats", "nats://127.0.0.1:4222", "-max-conns-per-ip", "0"}, "-max-conns-per-ip 0"},
		{[]string{"-nats", "nats://127.0.0.1:4222", "-max-followers", "0"}, "at least 1"},
		{[]string{"-nats", "nats://127.0.0.1:4222", "-public-url", "ftp://x/"}, "-public-url"},
		{[]string{"-nats", "nats://127.0.0.1:4222", "-public-url", "http://x/?a=1"}, "-public-url"},
	} {
		_, err := parseRelay(tc.args, io.Discard)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error mentioning %q", tc.args, err, tc.want)
		}
	}
	o, err := parseRelay([]string{"-nats", "nats://127.0.0.1:4222", "-addr", "127.0.0.1:0", "-public-url", "http://10.0.0.5:8090/", "-max-followers", "5000"}, io.Discard)
	if err != nil || o.o.PublicURL != "http://10.0.0.5:8090/" || o.o.MaxFollowers != 5000 || o.addr != "127.0.0.1:0" {
		t.Errorf("parse: %+v, %v", o, err)
	}
}

// TestServeShareFlags: -nats and -nats-embed exclude each other;
// -nats-embed starts a NATS server for the publisher; the public URL
// defaults to -addr's; a -share-url that is not a page address is refused.
func TestServeShareFlags(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	f := shareFlags{nats: "nats://127.0.0.1:1", embed: "127.0.0.1:0"}
	if _, _, err := f.start("127.0.0.1:8080", log); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("-nats with -nats-embed: %v", err)
	}
	f = shareFlags{stamp: true}
	if _, _, err := f.start("127.0.0.1:8080", log); err == nil || !strings.Contains(err.Error(), "-nats-stamp needs -nats") {
		t.Errorf("-nats-stamp alone: %v", err)
	}
	f = shareFlags{embed: "127.0.0.1:0"}
	o, stop, err := f.start("127.0.0.1:8080", log)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if o.Publisher == nil || o.PublicURL != "http://127.0.0.1:8080/" {
		t.Errorf("share options %+v", o)
	}
	err = run(context.Background(), []string{"serve", "-addr", "127.0.0.1:0", "-share-url", "lecture.example.org"}, io.Discard, io.Discard)
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "follow URL") {
		t.Errorf("-share-url without a scheme: %v, want a usage error about the follow URL", err)
	}
}
