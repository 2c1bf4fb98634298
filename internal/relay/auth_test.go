package relay

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"dgpviz/internal/wire"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// TestAnonymousRefused: an embedded NATS server refuses a client without
// credentials and one whose key it does not list, at once and as
// ErrRefused; it accepts the users it lists; it does not start without
// users.
func TestAnonymousRefused(t *testing.T) {
	w := newWorld(t)
	url := "nats://" + w.natsAddr
	if nc, err := nats.Connect(url); err == nil || !errors.Is(err, nats.ErrAuthorization) {
		if nc != nil {
			nc.Close()
		}
		t.Errorf("an anonymous client: %v, want an authorization violation", err)
	}
	start := time.Now()
	_, err := Connect(url, ConnectOptions{Credentials: newCreds(t)})
	if !errors.Is(err, ErrRefused) {
		t.Errorf("a key the server does not list: %v, want ErrRefused", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the refusal took %v: a refused connection is not retried", d)
	}
	if _, err := Connect(url, ConnectOptions{}); err == nil {
		t.Error("Connect without credentials did not fail")
	}
	for _, r := range []Role{Presenter, Relay} {
		nc := w.connect(r.String(), r) // fails the test if refused
		if !nc.IsConnected() {
			t.Errorf("the %s is not connected", r)
		}
	}
	if _, err := StartNATS("127.0.0.1:0", ServerOptions{}); err == nil || !strings.Contains(err.Error(), "no anonymous client") {
		t.Errorf("a NATS server without users: %v", err)
	}
}

// violations collects a connection's permission violations, which the
// NATS server reports asynchronously.
type violations chan error

func (w *world) connectWatched(name string, r Role) (*nats.Conn, violations) {
	w.t.Helper()
	v := make(violations, 16)
	c := w.creds[r]
	nc, err := nats.Connect("nats://"+w.natsAddr, nats.Name(name), c.option(), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrPermissionViolation) {
			select {
			case v <- err:
			default:
			}
		}
	}))
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(nc.Close)
	return nc, v
}

// wait returns the next violation, or nil if none came within d.
func (v violations) wait(d time.Duration) error {
	select {
	case err := <-v:
		return err
	case <-time.After(d):
		return nil
	}
}

// TestRolePermissions: each role may publish and subscribe to its
// subjects only. A message a role may not publish never reaches anyone
// (an observer that may subscribe to it gets nothing, and the publisher
// is told of the violation); one it may publish does.
func TestRolePermissions(t *testing.T) {
	w := newWorld(t)
	const key = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		from, observer Role
		subject        string
		allowed        bool
	}{
		{Presenter, Relay, streamSubject(key, "frame"), true},
		{Presenter, Relay, streamSubject(key, "end"), true},
		{Relay, Relay, streamSubject(key, "frame"), false},
		{Relay, Relay, streamSubject(key, "setup"), false},
		{Relay, Relay, streamSubject(key, "presentation"), false},
		{Relay, Relay, streamSubject(key, "end"), false},
		{Relay, Relay, "_INBOX.another.relays", false}, // a forged snapshot part
		{Presenter, Relay, "_INBOX.another.relays", false},
		{Relay, Presenter, sessionSubject(key, "ask"), true},
		{Relay, Presenter, sessionSubject(key, "join"), true},
		{Relay, Presenter, sessionSubject(key, "watching"), true},
		{Presenter, Presenter, sessionSubject(key, "ask"), false},
		{Relay, Relay, subjectRelays, true},
		{Presenter, Relay, subjectRelays, false},
	} {
		name := fmt.Sprintf("%s publishes %s", tc.from, tc.subject)
		obs, _ := w.connectWatched("observer", tc.observer)
		sub, err := obs.SubscribeSync(tc.subject)
		if err != nil {
			t.Fatal(err)
		}
		obs.Flush()
		pub, v := w.connectWatched("publisher", tc.from)
		payload := []byte("from the " + tc.from.String())
		pub.Publish(tc.subject, payload)
		pub.Flush()
		if err := v.wait(map[bool]time.Duration{true: 100 * time.Millisecond, false: 5 * time.Second}[tc.allowed]); (err == nil) != tc.allowed {
			t.Errorf("%s: violation %v, want allowed %v", name, err, tc.allowed)
		}
		m, err := sub.NextMsg(map[bool]time.Duration{true: 5 * time.Second, false: 200 * time.Millisecond}[tc.allowed])
		if got := err == nil && bytes.Equal(m.Data, payload); got != tc.allowed {
			t.Errorf("%s: delivered %v, want %v", name, got, tc.allowed)
		}
		obs.Close()
		pub.Close()
	}
	for _, tc := range []struct {
		r       Role
		subject string
		allowed bool
	}{
		{Presenter, "dgpviz.share.>", false},
		{Presenter, ">", false},
		{Presenter, sessionSubject(key, "ask"), true},
		{Relay, sessionSubject(key, "ask"), false}, // another relay's followers' commands
		{Relay, "dgpviz.>", false},
		{Relay, streamSubject(key, "frame"), true},
		{Relay, "_INBOX.x.y", true},
	} {
		nc, v := w.connectWatched("subscriber", tc.r)
		nc.SubscribeSync(tc.subject)
		nc.Flush()
		if err := v.wait(map[bool]time.Duration{true: 100 * time.Millisecond, false: 5 * time.Second}[tc.allowed]); (err == nil) != tc.allowed {
			t.Errorf("the %s subscribes to %s: violation %v, want allowed %v", tc.r, tc.subject, err, tc.allowed)
		}
		nc.Close()
	}
}

// TestCheckRole: credentials of one role are told from another's.
func TestCheckRole(t *testing.T) {
	w := newWorld(t)
	for _, has := range []Role{Presenter, Relay} {
		nc := w.connect(has.String(), has)
		for _, want := range []Role{Presenter, Relay} {
			if err := CheckRole(nc, want); (err == nil) != (has == want) || err != nil && !errors.Is(err, ErrWrongRole) {
				t.Errorf("the %s's credentials checked as the %s's: %v", has, want, err)
			}
		}
	}
}

// TestForgedFrame: a frame published with a relay's credentials never
// reaches a relay's follower, who goes on getting the presenter's frames;
// the same frame from the presenter's identity does reach it, so it is
// NATS's permissions, not the relay's checks, that kept it out.
func TestForgedFrame(t *testing.T) {
	w := newWorld(t)
	a := w.relay("relay A")
	p := dialPeer(t, strings.Replace(w.pURL, "http", "ws", 1)+"ws?play=0&speed=0")
	key, _ := p.until("hello", isType("hello")).text["share_key"].(string)
	step := func() uint64 {
		id := p.send(map[string]any{"op": "step", "n": 1})
		for {
			m := p.until("a frame", isType("frame"))
			if d, _ := wire.Decode(m.b); d["applied"].(float64) >= float64(id) {
				return seqOf(t, m.b)
			}
		}
	}
	step()
	f := dialPeer(t, a.ws+"?follow="+key)
	f.until("hello", isType("hello"))
	genuine := f.until("a frame", isType("frame")).b

	// The forgery: the relay's frame with another seq, well formed.
	seq := seqOf(t, genuine)
	n := binary.LittleEndian.Uint32(genuine)
	header := bytes.TrimRight(genuine[4:4+n], " ")
	old := fmt.Appendf(nil, `"seq":%d`, seq)
	if !bytes.Contains(header, old) {
		t.Fatalf("no %s in the frame's header %s", old, header)
	}
	forgedSeq := seq + 1000
	forged := binaryMsg(string(bytes.Replace(header, old, fmt.Appendf(nil, `"seq":%d`, forgedSeq), 1)), genuine[4+n:])
	if seqOf(t, forged) != forgedSeq {
		t.Fatal("the forged frame does not decode")
	}

	forger, v := w.connectWatched("forger", Relay)
	forger.Publish(FrameSubject(key), forged)
	forger.Flush()
	if err := v.wait(5 * time.Second); err == nil {
		t.Error("NATS did not refuse a frame from a relay's credentials")
	}
	want := step()
	f.until("the presenter's next frame", func(m wsMsg) bool {
		if m.typ == "frame" && seqOf(t, m.b) == forgedSeq {
			t.Fatal("a frame published with a relay's credentials reached a follower")
		}
		return m.typ == "frame" && seqOf(t, m.b) >= want
	})

	// Control: from the presenter's identity the same bytes get through.
	pres, _ := w.connectWatched("presenter's identity", Presenter)
	pres.Publish(FrameSubject(key), forged)
	pres.Flush()
	f.until("the frame from the presenter's identity", func(m wsMsg) bool { return m.typ == "frame" && seqOf(t, m.b) == forgedSeq })
}

// TestCredentialsFile: credentials written are the owner's alone (0600)
// and read back as the same key; a file others can read is refused with
// what to do; a NATS .creds file (user JWT and seed) is read; garbage and
// non-user seeds are refused.
func TestCredentialsFile(t *testing.T) {
	dir := t.TempDir()
	c := newCreds(t)
	path := filepath.Join(dir, "sub", "relay.creds")
	if err := WriteCredentials(path, c, "a note\nover two lines"); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("written: %v, %v; want mode 0600", st, err)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the folder made: %v, %v; want mode 0700", st, err)
	}
	got, err := ReadCredentials(path)
	if err != nil || got.PublicKey() != c.PublicKey() {
		t.Fatalf("read back: %v, %v", got, err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCredentials(path); err == nil || !strings.Contains(err.Error(), "chmod 600 "+path) {
		t.Errorf("a group-readable file: %v, want a refusal saying chmod 600", err)
	}
	if _, err := ReadCredentials(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}

	seed, _ := c.kp.Seed()
	for _, printed := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%v", []*Credentials{c})} {
		if strings.Contains(printed, string(seed)) || strings.Contains(printed, fmt.Sprint(seed)) || !strings.Contains(printed, c.PublicKey()) {
			t.Errorf("credentials printed as %q: want the public key, never the seed", printed)
		}
	}
	const jwt = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJzdWIiOiJVIn0.c2ln"
	creds := "-----BEGIN NATS USER JWT-----\n" + jwt + "\n------END NATS USER JWT------\n\n************************* IMPORTANT *************************\nNKEY Seed printed below can be used to sign and prove identity.\n\n-----BEGIN USER NKEY SEED-----\n" + string(seed) + "\n------END USER NKEY SEED------\n"
	if got, err := ParseCredentials([]byte(creds)); err != nil || got.jwt != jwt || got.PublicKey() != c.PublicKey() {
		t.Errorf(".creds file: %+v, %v", got, err)
	}
	if got, err := ParseCredentials(append(seed, '\n')); err != nil || got.PublicKey() != c.PublicKey() || got.jwt != "" {
		t.Errorf("a bare seed: %v, %v", got, err)
	}
	account, _ := nkeys.CreateAccount()
	aseed, _ := account.Seed()
	for name, b := range map[string][]byte{
		"empty":        nil,
		"garbage":      []byte("user:password\n"),
		"account seed": aseed,
		"bad checksum": append(bytes.Clone(seed[:len(seed)-2]), 'A', 'A'),
		"too large":    bytes.Repeat([]byte("x"), maxCredentialsFile+1),
	} {
		if _, err := ParseCredentials(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzCredentials: a credentials file's parser takes any bytes without
// panicking, and what it accepts is a user's key that signs.
func FuzzCredentials(f *testing.F) {
	kp, _ := nkeys.CreateUser()
	seed, _ := kp.Seed()
	f.Add(seed)
	f.Add([]byte("# note\n-----BEGIN USER NKEY SEED-----\n" + string(seed) + "\n------END USER NKEY SEED------\n"))
	f.Add([]byte("-----BEGIN NATS USER JWT-----\neyJ.e30.c2ln\n------END NATS USER JWT------\n-----BEGIN USER NKEY SEED-----\n" + string(seed) + "\n------END USER NKEY SEED------\n"))
	f.Add([]byte("-----BEGIN NATS USER JWT-----\n------END NATS USER JWT------\n"))
	f.Add([]byte("SUxyz\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCredentials(b)
		if err != nil {
			return
		}
		if !nkeys.IsValidPublicUserKey(c.PublicKey()) {
			t.Fatalf("accepted a key that is not a user's: %q", c.PublicKey())
		}
		sig, err := c.kp.Sign([]byte("nonce"))
		if err != nil || c.kp.Verify([]byte("nonce"), sig) != nil {
			t.Fatalf("accepted a key that does not sign: %v", err)
		}
	})
}

// testPKI is a certificate authority and a server and a client
// certificate it signed, as PEM files in a folder.
type testPKI struct{ ca, serverCert, serverKey, clientCert, clientKey string }

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "dgpviz test CA"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, _ := x509.MarshalECPrivateKey(k)
		return write(name+".pem", "CERTIFICATE", der), write(name+"-key.pem", "EC PRIVATE KEY", kder)
	}
	p := testPKI{ca: write("ca.pem", "CERTIFICATE", caDER)}
	p.serverCert, p.serverKey = leaf("server", 2, x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return p
}

// TestTLS: a NATS server with TLS takes a relay that checks its
// certificate against the authority; a client that cannot check it fails
// at once (no retries), saying so; with client certificates required, a
// relay without one is refused and one with it is accepted.
func TestTLS(t *testing.T) {
	pki := newTestPKI(t)
	c := newCreds(t)
	start := func(f TLSFiles) string {
		cfg, err := f.Server()
		if err != nil {
			t.Fatal(err)
		}
		ns, err := StartNATS("127.0.0.1:0", ServerOptions{Users: []User{c.User(Relay)}, TLS: cfg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ns.Shutdown)
		return "tls://" + ns.Addr().String()
	}
	connect := func(url string, f TLSFiles) error {
		cfg, err := f.Client()
		if err != nil {
			t.Fatal(err)
		}
		nc, err := Connect(url, ConnectOptions{Credentials: c, TLS: cfg})
		if err == nil {
			nc.Close()
		}
		return err
	}

	url := start(TLSFiles{Cert: pki.serverCert, Key: pki.serverKey})
	if err := connect(url, TLSFiles{CA: pki.ca}); err != nil {
		t.Errorf("a relay that trusts the authority: %v", err)
	}
	begin := time.Now()
	if err := connect(url, TLSFiles{}); !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "TLS") || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a relay that cannot check the server's certificate: %v, want ErrUntrusted", err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("a certificate that does not check took %v: it is not retried", d)
	}

	url = start(TLSFiles{Cert: pki.serverCert, Key: pki.serverKey, CA: pki.ca})
	if err := connect(url, TLSFiles{CA: pki.ca}); !errors.Is(err, ErrRefused) {
		t.Errorf("a relay without a client certificate: %v, want ErrRefused", err)
	}
	if err := connect(url, TLSFiles{CA: pki.ca, Cert: pki.clientCert, Key: pki.clientKey}); err != nil {
		t.Errorf("a relay with a client certificate: %v", err)
	}

	for name, f := range map[string]TLSFiles{
		"a certificate without its key": {Cert: pki.serverCert},
		"a missing authority":           {CA: filepath.Join(t.TempDir(), "none.pem")},
		"an authority that is a key":    {CA: pki.clientKey},
		"a key that is not the cert's":  {Cert: pki.serverCert, Key: pki.clientKey},
	} {
		if _, err := f.Client(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := (TLSFiles{CA: pki.ca}).Server(); err == nil {
		t.Error("a server's TLS without a certificate: accepted")
	}
}

// TestDocumentedNATSConfig: the nats-server configuration docs/scaling.md
// shows gives each role exactly the permissions the embedded server does,
// and a max_payload the Frey view's setup fits.
func TestDocumentedNATSConfig(t *testing.T) {
	doc, err := os.ReadFile("../../docs/scaling.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := bytes.Cut(doc, []byte("<!-- nats-server.conf -->\n```\n"))
	if ok {
		block, _, ok = bytes.Cut(block, []byte("```"))
	}
	if !ok {
		t.Fatal("docs/scaling.md has no nats-server.conf block (after <!-- nats-server.conf -->)")
	}
	pki := newTestPKI(t)
	pres, rel := newCreds(t), newCreds(t)
	conf := strings.NewReplacer("PRESENTER_PUBLIC_KEY", pres.PublicKey(), "RELAY_PUBLIC_KEY", rel.PublicKey(),
		"/etc/nats/nats-cert.pem", pki.serverCert, "/etc/nats/nats-key.pem", pki.serverKey).Replace(string(block))
	path := filepath.Join(t.TempDir(), "nats-server.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("the documented configuration: %v", err)
	}
	if o.MaxPayload < MaxPayload || o.TLSConfig == nil {
		t.Errorf("max_payload %d (want ≥ %d), TLS %v", o.MaxPayload, MaxPayload, o.TLSConfig != nil)
	}
	got := map[string]*server.Permissions{}
	for _, u := range o.Nkeys {
		got[u.Nkey] = u.Permissions
	}
	for _, u := range []User{pres.User(Presenter), rel.User(Relay)} {
		want := u.Role.Permissions()
		if !reflect.DeepEqual(got[u.Key], want) {
			t.Errorf("the %s's documented permissions %s, want %s", u.Role, jsonOf(got[u.Key]), jsonOf(want))
		}
	}
	if len(o.Nkeys) != 2 || len(o.Users) != 0 || o.NoAuthUser != "" {
		t.Errorf("the documented configuration has %d NKey users, %d others, no_auth_user %q: want the two roles only", len(o.Nkeys), len(o.Users), o.NoAuthUser)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestConnectWaitsForServer: a NATS server not up yet is not a refusal:
// Connect returns, and the connection is made when the server starts.
func TestConnectWaitsForServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := newCreds(t)
	nc, err := Connect("nats://"+addr, ConnectOptions{Credentials: c})
	if err != nil {
		t.Fatalf("no NATS server yet: %v, want a connection that keeps trying", err)
	}
	defer nc.Close()
	ns, err := StartNATS(addr, ServerOptions{Users: []User{c.User(Relay)}})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Shutdown()
	eventually(t, "connected once the NATS server started", nc.IsConnected)
}

// TestOpenServer: a NATS server that takes anonymous clients (one of
// your own, not configured) is refused by an NKey's connection, with
// what to do, and warned about by a user JWT's (which it does not
// refuse); a server with users is not.
func TestOpenServer(t *testing.T) {
	open, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go open.Start()
	if !open.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS server not ready")
	}
	defer open.Shutdown()
	start := time.Now()
	if _, err := Connect(open.ClientURL(), ConnectOptions{Credentials: newCreds(t)}); !errors.Is(err, ErrOpenServer) || time.Since(start) > 5*time.Second {
		t.Errorf("an NKey to an open NATS server: %v after %v, want ErrOpenServer at once", err, time.Since(start))
	}

	seed, _ := newCreds(t).kp.Seed()
	jwtCreds, err := ParseCredentials([]byte("-----BEGIN NATS USER JWT-----\neyJ0eXAiOiJKV1QifQ.e30.c2ln\n------END NATS USER JWT------\n-----BEGIN USER NKEY SEED-----\n" + string(seed) + "\n------END USER NKEY SEED------\n"))
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t)
	for _, tc := range []struct {
		url   string
		creds *Credentials
		warn  bool
	}{{open.ClientURL(), jwtCreds, true}, {"nats://" + w.natsAddr, w.creds[Relay], false}} {
		var buf syncBuffer
		nc, err := Connect(tc.url, ConnectOptions{Credentials: tc.creds, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "connected and logged", func() bool { return strings.Contains(buf.String(), "NATS: connected") })
		nc.Close()
		if got := strings.Contains(buf.String(), "accepts anonymous clients"); got != tc.warn {
			t.Errorf("%s: warned %v, want %v (log: %s)", tc.url, got, tc.warn, buf.String())
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a logger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDocumentedFitConfig: the nats-server configuration of a sharded
// fit that docs/scaling.md shows gives its coordinator and its workers
// exactly the permissions User.Permissions gives them.
func TestDocumentedFitConfig(t *testing.T) {
	doc, err := os.ReadFile("../../docs/scaling.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := bytes.Cut(doc, []byte("<!-- nats-server.conf fit -->\n```\n"))
	if ok {
		block, _, ok = bytes.Cut(block, []byte("```"))
	}
	if !ok {
		t.Fatal("docs/scaling.md has no fit's nats-server.conf block (after <!-- nats-server.conf fit -->)")
	}
	pki := newTestPKI(t)
	co, wo := newCreds(t), newCreds(t)
	conf := strings.NewReplacer("COORDINATOR_PUBLIC_KEY", co.PublicKey(), "WORKER_PUBLIC_KEY", wo.PublicKey(),
		"/etc/nats/nats-cert.pem", pki.serverCert, "/etc/nats/nats-key.pem", pki.serverKey).Replace(string(block))
	path := filepath.Join(t.TempDir(), "nats-server.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("the documented configuration: %v", err)
	}
	got := map[string]*server.Permissions{}
	for _, u := range o.Nkeys {
		got[u.Nkey] = u.Permissions
	}
	for _, u := range []User{{Key: co.PublicKey(), Role: Coordinator, Fit: "walk"}, {Key: wo.PublicKey(), Role: Worker, Fit: "walk"}} {
		if want := u.Permissions(); !reflect.DeepEqual(got[u.Key], want) {
			t.Errorf("the %s's documented permissions %s, want %s", u.Role, jsonOf(got[u.Key]), jsonOf(want))
		}
	}
	if len(o.Nkeys) != 2 || len(o.Users) != 0 || o.NoAuthUser != "" {
		t.Errorf("the documented configuration has %d NKey users, %d others: want the fit's two roles only", len(o.Nkeys), len(o.Users))
	}
}

// TestFitNames: a fit's name is one subject token, so that its roles'
// permissions cannot reach another fit's subjects, and a fit's role
// without its fit may do nothing.
func TestFitNames(t *testing.T) {
	for _, name := range []string{"walk", "lab-3_a"} {
		if err := CheckFitName(name); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
	for _, name := range []string{"", "a.b", "a*", ">", "a b", strings.Repeat("x", 65)} {
		if err := CheckFitName(name); err == nil {
			t.Errorf("%q: no error", name)
		}
	}
	p := User{Role: Worker}.Permissions()
	if len(p.Publish.Allow) != 0 || len(p.Subscribe.Allow) != 0 {
		t.Errorf("a worker without its fit may publish %v and subscribe %v", p.Publish.Allow, p.Subscribe.Allow)
	}
	if _, err := StartNATS("127.0.0.1:0", ServerOptions{Users: []User{{Key: newCreds(t).PublicKey(), Role: Worker, Fit: "a.>"}}}); err == nil {
		t.Error("a server of a worker whose fit is a.>: no error")
	}
}
