package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dgpviz/internal/relay"
)

func TestRelayFlags(t *testing.T) {
	creds := []string{"-nats", "nats://127.0.0.1:4222", "-nats-creds", "relay.creds"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "-nats is required"},
		{[]string{"-nats", "nats://127.0.0.1:4222"}, "-nats-creds is required"},
		{append(creds, "-max-conns-per-ip", "0"), "-max-conns-per-ip 0"},
		{append(creds, "-max-followers", "0"), "at least 1"},
		{append(creds, "-public-url", "ftp://x/"), "-public-url"},
		{append(creds, "-public-url", "http://x/?a=1"), "-public-url"},
	} {
		_, err := parseRelay(tc.args, io.Discard)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error mentioning %q", tc.args, err, tc.want)
		}
	}
	o, err := parseRelay(append(creds, "-addr", "127.0.0.1:0", "-public-url", "http://10.0.0.5:8090/", "-max-followers", "5000", "-nats-tls-ca", "ca.pem"), io.Discard)
	if err != nil || o.o.PublicURL != "http://10.0.0.5:8090/" || o.o.MaxFollowers != 5000 || o.addr != "127.0.0.1:0" || o.creds != "relay.creds" || o.tls.CA != "ca.pem" {
		t.Errorf("parse: %+v, %v", o, err)
	}
}

// TestServeShareFlags: -nats and -nats-embed exclude each other;
// -nats-embed starts a NATS server for the publisher, writes the relays'
// credentials (0600) and says where, and keeps them when started again;
// the public URL defaults to -addr's; a -share-url that is not a page
// address is refused.
func TestServeShareFlags(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	dir := t.TempDir()
	for _, tc := range []struct {
		f    shareFlags
		want string
	}{
		{shareFlags{nats: "nats://127.0.0.1:1", embed: "127.0.0.1:0"}, "not both"},
		{shareFlags{stamp: true}, "-nats-stamp needs -nats"},
		{shareFlags{natsFlags: natsFlags{creds: "x"}}, "need -nats or -nats-embed"},
		{shareFlags{nats: "nats://127.0.0.1:1"}, "-nats-creds is required"},
		{shareFlags{nats: "nats://u:secret@127.0.0.1:1", natsFlags: natsFlags{creds: "x"}}, "put credentials in a file (-nats-creds)"},
		{shareFlags{nats: "nats://127.0.0.1:1", relayCreds: "x"}, "-nats-relay-creds is -nats-embed's"},
		{shareFlags{embed: "127.0.0.1:0", natsFlags: natsFlags{creds: "x"}}, "-nats-creds is -nats's"},
		{shareFlags{embed: "127.0.0.1:0", natsFlags: natsFlags{tls: relay.TLSFiles{CA: "ca.pem"}}}, "give -nats-tls-cert and -nats-tls-key"},
	} {
		_, _, err := tc.f.start("127.0.0.1:8080", &shardFlags{}, log, io.Discard)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want a usage error mentioning %q", tc.f, err, tc.want)
		}
	}

	path := filepath.Join(dir, "conf", "relay.creds")
	var keys []string
	for i := range 2 {
		f := shareFlags{embed: "127.0.0.1:0", relayCreds: path}
		var out strings.Builder
		o, stop, err := f.start("127.0.0.1:8080", &shardFlags{}, log, &out)
		if err != nil {
			t.Fatal(err)
		}
		stop()
		if o.Publisher == nil || o.PublicURL != "http://127.0.0.1:8080/" {
			t.Errorf("share options %+v", o)
		}
		if verb := []string{"written to", "kept in"}[i]; !strings.Contains(out.String(), "relays' credentials "+verb+" "+path) {
			t.Errorf("start %d printed %q, want the credentials' path", i+1, out.String())
		}
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("the relays' credentials: %v, %v; want mode 0600", st, err)
		}
		c, err := relay.ReadCredentials(path)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, c.PublicKey())
	}
	if keys[0] != keys[1] {
		t.Error("-nats-embed made new relays' credentials although the file was there")
	}
	os.Chmod(path, 0o644)
	f := shareFlags{embed: "127.0.0.1:0", relayCreds: path}
	if _, _, err := f.start("127.0.0.1:8080", &shardFlags{}, log, io.Discard); err == nil || !strings.Contains(err.Error(), "chmod 600 "+path) {
		t.Errorf("relays' credentials others can read: %v, want a refusal saying chmod 600", err)
	}

	err := run(context.Background(), []string{"serve", "-addr", "127.0.0.1:0", "-share-url", "lecture.example.org"}, io.Discard, io.Discard)
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "follow URL") {
		t.Errorf("-share-url without a scheme: %v, want a usage error about the follow URL", err)
	}
}

// TestRelayRefused: a relay with credentials the NATS server does not
// accept ends at once, saying which file and flag.
func TestRelayRefused(t *testing.T) {
	dir := t.TempDir()
	f := shareFlags{embed: "127.0.0.1:0", relayCreds: filepath.Join(dir, "relay.creds")}
	var out strings.Builder
	_, stop, err := f.start("127.0.0.1:8080", &shardFlags{}, slog.New(slog.DiscardHandler), &out)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	url := strings.Fields(strings.TrimPrefix(out.String(), "dgpviz: NATS on "))[0]
	url = strings.TrimSuffix(url, ";")
	other, err := relay.NewCredentials()
	if err != nil {
		t.Fatal(err)
	}
	wrong := filepath.Join(dir, "other.creds")
	if err := relay.WriteCredentials(wrong, other, "not the relays'"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = run(ctx, []string{"relay", "-nats", url, "-nats-creds", wrong, "-addr", "127.0.0.1:0"}, io.Discard, io.Discard)
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), "-nats-creds "+wrong+" holds no key it accepts for this relay") {
		t.Errorf("a relay with credentials NATS does not accept: %v, want a refusal naming -nats-creds and the file", err)
	}
	// The relays' credentials given to the presenter's server connect, but
	// may not do a presenter's work.
	relays := filepath.Join(dir, "relay.creds")
	err = run(ctx, []string{"serve", "-addr", "127.0.0.1:0", "-nats", url, "-nats-creds", relays}, io.Discard, io.Discard)
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "-nats-creds "+relays+" is not a presenter's key") {
		t.Errorf("viz serve -nats with the relays' credentials: %v, want a refusal naming -nats-creds and the file", err)
	}
}
