package relay

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"dgpviz/internal/wire"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// A Role is what a NATS user of dgpviz may do: which subjects it may
// publish to and subscribe to (Permissions). The NATS server enforces it,
// so a relay's credentials, stolen or misused, cannot draw on a lecture's
// screens.
type Role int

const (
	// Presenter is the presenter's server (viz serve -nats): it publishes
	// the sessions' streams and answers relays' requests.
	Presenter Role = iota + 1
	// Relay is a relay (viz relay): it follows the streams and asks the
	// presenter's server for snapshots and forks.
	Relay
	// Worker is a worker of a sharded fit (viz worker): it announces
	// itself and answers its fit's requests for the parts of the bound,
	// on its fit's subjects (FitSubject) alone: User.Fit names the fit.
	Worker
	// Coordinator is a sharded fit's optimizer (viz fit -nats, viz serve
	// -workers-nats): it asks its fit's workers for their parts.
	Coordinator
)

// FitSubject is the prefix of a sharded fit's subjects, dgpviz.fit.FIT:
// its workers' announcements (.hello) and requests (.work.WORKER).
func FitSubject(fit string) string { return "dgpviz.fit." + fit }

// CheckFitName checks that a sharded fit's name is one NATS subject
// token of letters, digits, '-' and '_' (at most 64), so that a role's
// permissions cannot reach past it.
func CheckFitName(fit string) error {
	if fit == "" || len(fit) > 64 {
		return fmt.Errorf("fit name %q: want 1 to 64 letters, digits, '-' or '_'", wire.Truncate(fit, 70))
	}
	for _, c := range fit {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("fit name %q: want letters, digits, '-' or '_' only", wire.Truncate(fit, 70))
		}
	}
	return nil
}

func (r Role) String() string {
	switch r {
	case Presenter:
		return "presenter"
	case Relay:
		return "relay"
	case Worker:
		return "worker"
	case Coordinator:
		return "coordinator"
	}
	return "unknown role"
}

// Permissions returns what the NATS server lets r publish and subscribe
// to (docs/protocol.md, "Relays (NATS)"; docs/scaling.md shows them as a
// nats-server configuration).
//
// Replies go to the asker's inbox (_INBOX.…): the presenter's server may
// publish there only in answer to a request it received, at most
// joinParts messages within askTimeout (NATS's allow_responses); a relay
// may publish to no inbox, so it cannot feed another relay a snapshot.
func (r Role) Permissions() *server.Permissions {
	switch r {
	case Presenter:
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{"dgpviz.share.*.*"}},
			Subscribe: &server.SubjectPermission{Allow: []string{"dgpviz.session.*.*"}},
			Response:  &server.ResponsePermission{MaxMsgs: joinParts, Expires: askTimeout},
		}
	case Relay:
		return &server.Permissions{
			Publish: &server.SubjectPermission{Allow: []string{
				"dgpviz.session.*.join", "dgpviz.session.*.alive", "dgpviz.session.*.ask", "dgpviz.session.*.watching", subjectRelays,
			}},
			Subscribe: &server.SubjectPermission{Allow: []string{"dgpviz.share.*.*", subjectRelays, "_INBOX.>"}},
		}
	}
	// Nothing: an unknown role, or a fit's role without its fit
	// (User.Permissions), may do nothing at all.
	return &server.Permissions{Publish: &server.SubjectPermission{Deny: []string{">"}}, Subscribe: &server.SubjectPermission{Deny: []string{">"}}}
}

// A User is a NATS user an embedded NATS server accepts: the public part
// of its NKey, and its role.
type User struct {
	Key  string // a user NKey's public key, U…
	Role Role
	Fit  string // the sharded fit of a Worker or Coordinator (CheckFitName)
}

// Permissions returns what the NATS server lets u publish and subscribe
// to: its role's, and for a Worker or Coordinator its fit's subjects
// alone (FitSubject). A worker may publish its announcements and answer
// the requests it receives, one reply each within ten minutes (a large
// shard on a slow machine); a coordinator may send
// requests to its fit's workers and hear their announcements and
// replies.
func (u User) Permissions() *server.Permissions {
	if u.Role != Worker && u.Role != Coordinator {
		return u.Role.Permissions()
	}
	if CheckFitName(u.Fit) != nil {
		return Role(0).Permissions()
	}
	fit := FitSubject(u.Fit)
	if u.Role == Worker {
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{fit + ".hello"}},
			Subscribe: &server.SubjectPermission{Allow: []string{fit + ".work.*"}},
			Response:  &server.ResponsePermission{MaxMsgs: 1, Expires: fitReplyWithin},
		}
	}
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{fit + ".work.*"}},
		Subscribe: &server.SubjectPermission{Allow: []string{fit + ".hello", "_INBOX.>"}},
	}
}

// fitReplyWithin is how long a worker may take to answer a request.
const fitReplyWithin = 10 * time.Minute

// Credentials are a NATS user's: its NKey seed, with which it answers the
// NATS server's challenge, and for a NATS server in operator mode its
// user JWT.
type Credentials struct {
	kp  nkeys.KeyPair
	jwt string // "" for a plain NKey user
}

// NewCredentials returns a new user NKey.
func NewCredentials() (*Credentials, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	return &Credentials{kp: kp}, nil
}

// PublicKey returns the user's public NKey, the one a NATS server's
// configuration lists.
func (c *Credentials) PublicKey() string {
	pub, _ := c.kp.PublicKey() // a key pair made from a seed has a public key
	return pub
}

// String names c by its public key: a seed is never printed.
func (c *Credentials) String() string { return "the NATS user " + c.PublicKey() }

// User returns c's public key with role r.
func (c *Credentials) User(r Role) User { return User{Key: c.PublicKey(), Role: r} }

// maxCredentialsFile bounds a credentials file: a user JWT with its seed
// is about 1 kB.
const maxCredentialsFile = 64 << 10

// ParseCredentials reads a credentials file's contents: a user NKey seed
// (SU…, bare or between the BEGIN/END lines WriteCredentials writes), or
// a NATS .creds file (a user JWT and its seed, as nsc writes it).
func ParseCredentials(b []byte) (*Credentials, error) {
	if len(b) > maxCredentialsFile {
		return nil, fmt.Errorf("%d bytes, too large for credentials (a NATS .creds file is about 1 kB)", len(b))
	}
	kp, err := nkeys.ParseDecoratedUserNKey(b)
	if err != nil {
		return nil, errors.New("no NATS user NKey seed (a line SU…) in it")
	}
	c := &Credentials{kp: kp}
	if bytes.Contains(b, []byte("BEGIN NATS USER JWT")) {
		jwt, err := nkeys.ParseDecoratedJWT(b)
		if err != nil || jwt == "" || strings.ContainsAny(jwt, " \n") {
			return nil, errors.New("a NATS .creds file whose user JWT cannot be read")
		}
		c.jwt = jwt
	}
	return c, nil
}

// ReadCredentials reads a credentials file (ParseCredentials), which must
// be readable by its owner alone: a seed others can read is anyone's.
func ReadCredentials(path string) (*Credentials, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := ownerOnly(path, st.Mode()); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxCredentialsFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	c, err := ParseCredentials(b)
	clear(b) // the seed is not left in memory for longer than needed
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return c, nil
}

// ownerOnly refuses a file others may read or write (on Windows, whose
// permissions are ACLs, it checks nothing).
func ownerOnly(path string, m fs.FileMode) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	if !m.IsRegular() {
		return fmt.Errorf("%s is not a file", path)
	}
	if m.Perm()&0o077 != 0 {
		return fmt.Errorf("%s can be read by other users (mode %04o): a NATS seed must be its owner's alone (chmod 600 %s)", path, m.Perm(), path)
	}
	return nil
}

// WriteCredentials writes c's seed to path, readable by its owner alone
// (0600), with note as a comment above it. The directory is made (0700)
// if it does not exist; an existing file is replaced whole.
func WriteCredentials(path string, c *Credentials, note string) error {
	seed, err := c.kp.Seed()
	if err != nil {
		return err
	}
	if c.jwt != "" {
		return errors.New("credentials with a user JWT are written by nsc, not here")
	}
	var b bytes.Buffer
	for line := range strings.Lines(note) {
		b.WriteString("# " + strings.TrimRight(line, "\n") + "\n")
	}
	b.WriteString("-----BEGIN USER NKEY SEED-----\n")
	b.Write(seed)
	b.WriteString("\n------END USER NKEY SEED------\n")
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".dgpviz-creds-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	_, err = tmp.Write(b.Bytes())
	clear(b.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// option is the nats.go option that authenticates with c.
func (c *Credentials) option() nats.Option {
	if c.jwt != "" {
		return nats.UserJWT(func() (string, error) { return c.jwt, nil }, c.kp.Sign)
	}
	return nats.Nkey(c.PublicKey(), c.kp.Sign)
}

// TLSFiles name PEM files for TLS on NATS connections.
type TLSFiles struct {
	// CA is the certificate authority a client checks the NATS server's
	// certificate against (default: the system's), or a server checks
	// its clients' (then every client must present one).
	CA string
	// Cert and Key are this side's certificate and private key: the
	// server's, or a client's when the server asks for one.
	Cert, Key string
}

// Empty reports whether no file is named.
func (f TLSFiles) Empty() bool { return f == TLSFiles{} }

// Client returns a NATS client's TLS configuration (nil if f is empty).
func (f TLSFiles) Client() (*tls.Config, error) {
	if f.Empty() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.CA != "" {
		pool, err := certPool(f.CA)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if f.Cert != "" || f.Key != "" {
		cert, err := keyPair(f)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// Server returns a NATS server's TLS configuration: Cert and Key are
// required; with CA, clients must present a certificate it signed.
func (f TLSFiles) Server() (*tls.Config, error) {
	if f.Cert == "" || f.Key == "" {
		return nil, errors.New("a NATS server's TLS needs a certificate and its key")
	}
	cert, err := keyPair(f)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if f.CA != "" {
		pool, err := certPool(f.CA)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

func certPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", path)
	}
	return pool, nil
}

func keyPair(f TLSFiles) (tls.Certificate, error) {
	if f.Cert == "" || f.Key == "" {
		return tls.Certificate{}, errors.New("a TLS certificate needs its key, and a key its certificate")
	}
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return cert, fmt.Errorf("the certificate %s with the key %s: %v", f.Cert, f.Key, err)
	}
	return cert, nil
}
