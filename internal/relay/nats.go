package relay

import (
	"crypto/tls"
	"crypto/x509"
	"dgpviz/internal/wire"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// MaxPayload is the largest NATS message the embedded server takes: the
// largest setup (the Frey faces', 2.2 MB) and then some. A NATS server of
// your own needs max_payload at least this large for the Frey view.
const MaxPayload = 8 << 20

// ConnectOptions configure Connect.
type ConnectOptions struct {
	// Name names the connection in NATS's monitoring.
	Name string
	// Credentials authenticate the connection (required: dgpviz never
	// connects anonymously).
	Credentials *Credentials
	// TLS is the client's TLS (TLSFiles.Client); nil: TLS only if the
	// server requires it, checked against the system's certificates.
	TLS *tls.Config
	// Server, if set, is an embedded NATS server to connect to in this
	// process (viz serve -nats-embed), not through the network: the
	// server's TLS does not apply; its users and permissions do.
	Server *server.Server
	Logger *slog.Logger
}

// ErrRefused is the error of a connection whose credentials (or client
// certificate) the NATS server refused.
var ErrRefused = errors.New("the NATS server refused this connection")

// ErrOpenServer is the error of a connection to a NATS server that lets
// anyone in: dgpviz does not publish to it.
var ErrOpenServer = errors.New("this NATS server lets anyone in (it has no users): anyone who reaches it could watch every shared session and draw on followers' screens; give it users and permissions (docs/scaling.md, \"Across machines, safely\")")

// Connect connects to the NATS server at url as a presenter's server or a
// relay. It keeps trying: a NATS server that is down at the start or
// restarts later is reconnected to, every ReconnectWait, for as long as
// the process runs. A server that refuses the credentials (ErrRefused),
// whose certificate does not check, or that lets anyone in
// (ErrOpenServer) is an error at once.
func Connect(url string, o ConnectOptions) (*nats.Conn, error) {
	if o.Credentials == nil {
		return nil, errors.New("NATS credentials are required")
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts := []nats.Option{
		nats.Name(o.Name),
		o.Credentials.option(),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(ReconnectWait),
		nats.ReconnectJitter(100*time.Millisecond, 100*time.Millisecond),
		// A NATS server restarted with other users is not given up on:
		// it may be set right while this process runs.
		nats.IgnoreAuthErrorAbort(),
		nats.ConnectHandler(connected(log, url, "connected")),
		nats.ReconnectHandler(connected(log, url, "reconnected")),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Warn("NATS: disconnected", "err", err) }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { log.Warn("NATS", "err", err) }),
	}
	if o.TLS != nil {
		opts = append(opts, nats.Secure(o.TLS))
	}
	if o.Server != nil {
		opts = append(opts, nats.InProcessServer(o.Server))
	}
	// The first try tells a refusal, which no retry mends, from a server
	// not up yet, which later tries reach.
	nc, err := nats.Connect(url, opts...)
	if err == nil {
		return nc, nil
	}
	if untrusted(err) {
		return nil, fmt.Errorf("NATS at %s: TLS: %w (%s)", url, ErrUntrusted, plain(err))
	}
	if tlsFailed(err) {
		return nil, fmt.Errorf("NATS at %s: TLS: %s", url, plain(err))
	}
	if errors.Is(err, nats.ErrNkeysNotSupported) {
		return nil, fmt.Errorf("NATS at %s: %w", url, ErrOpenServer)
	}
	if refused(err) {
		return nil, fmt.Errorf("NATS at %s: %w (%s)", url, ErrRefused, plain(err))
	}
	nc, err = nats.Connect(url, append(opts, nats.RetryOnFailedConnect(true))...)
	if err != nil {
		return nil, fmt.Errorf("NATS at %s: %s", url, plain(err))
	}
	return nc, nil
}

// plain is err's text without the NATS and TLS libraries' prefixes.
func plain(err error) string {
	return strings.NewReplacer("nats: ", "", "tls error: ", "", "tls: ", "").Replace(err.Error())
}

// ErrWrongRole is the error of a connection whose credentials the NATS
// server accepts for another role than the one asked for.
var ErrWrongRole = errors.New("credentials of another role")

// CheckRole checks that the NATS server lets nc subscribe as r does:
// credentials of another role (a relay's given to the presenter's
// server) connect, and then do nothing. A connection not up yet is not
// checked.
func CheckRole(nc *nats.Conn, r Role) error {
	if !nc.IsConnected() {
		return nil
	}
	for _, subject := range r.Permissions().Subscribe.Allow {
		sub, err := nc.SubscribeSync(subject)
		if err != nil {
			return err
		}
		err = nc.FlushTimeout(5 * time.Second) // the server's answer to the subscription comes before its pong
		sub.Unsubscribe()
		if err != nil {
			return nil // a slow or lost connection says nothing about the role
		}
		if e := nc.LastError(); errors.Is(e, nats.ErrPermissionViolation) && strings.Contains(e.Error(), subject) {
			return fmt.Errorf("%w: NATS does not let this %s subscribe to %s", ErrWrongRole, r, subject)
		}
	}
	return nil
}

// connected logs a connection, and warns if the NATS server lets anyone
// in (a user JWT is not refused by such a server, as an NKey is:
// ErrOpenServer).
func connected(log *slog.Logger, url, what string) nats.ConnHandler {
	return func(nc *nats.Conn) {
		log.Info("NATS: "+what, "url", url)
		if !nc.AuthRequired() {
			log.Warn("NATS: this NATS server accepts anonymous clients: anyone who reaches it can watch every shared session and draw on followers' screens; give it users and permissions (docs/scaling.md, \"Across machines, safely\")", "url", url)
		}
	}
}

// refused reports whether err is the NATS server's refusal of the
// credentials or of a client certificate (a TLS error that is not
// tlsFailed's: the server ended the handshake with an alert, or closed
// the connection right after it).
func refused(err error) bool {
	var op *net.OpError
	return errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) || errors.Is(err, nats.ErrAuthRevoked) || errors.Is(err, nats.ErrAccountAuthExpired) ||
		errors.Is(err, nats.ErrTLS) || errors.As(err, &op) && op.Op == "remote error" // a TLS alert from the server: "certificate required"
}

// ErrUntrusted is the error of a connection to a NATS server whose
// certificate does not check: signed by an authority this machine does
// not trust, for another host, or invalid.
var ErrUntrusted = errors.New("the server's certificate does not check")

// untrusted reports whether err is ErrUntrusted's cause.
func untrusted(err error) bool {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
	)
	return errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify)
}

// tlsFailed reports whether err is another TLS failure on our side: TLS
// required on one side only.
func tlsFailed(err error) bool {
	return errors.Is(err, nats.ErrSecureConnRequired) || errors.Is(err, nats.ErrSecureConnWanted) || errors.Is(err, nats.ErrClientCertOrRootCAsRequired)
}

// ReconnectWait is how long a lost NATS connection waits between tries.
const ReconnectWait = 250 * time.Millisecond

// ServerOptions configure StartNATS.
type ServerOptions struct {
	// Users are the users the server accepts, each with its role's
	// permissions: no one else, and never an anonymous client.
	Users []User
	// TLS is the server's TLS (TLSFiles.Server); nil: none (only on
	// loopback or a network of your own).
	TLS *tls.Config
}

// StartNATS runs a NATS server in this process, listening on addr
// (host:port; port 0 picks a free one): for tests, viz loadtest and viz
// serve -nats-embed. Its ClientURL is the URL to connect to; Shutdown
// stops it.
func StartNATS(addr string, o ServerOptions) (*server.Server, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("NATS address %q: want host:port", addr)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return nil, fmt.Errorf("NATS address %q: bad port", addr)
	}
	if p == 0 {
		p = server.RANDOM_PORT
	}
	if len(o.Users) == 0 {
		return nil, errors.New("a NATS server needs users: it accepts no anonymous client")
	}
	so := &server.Options{Host: host, Port: p, MaxPayload: MaxPayload, NoLog: true, NoSigs: true}
	for _, u := range o.Users {
		if (u.Role == Worker || u.Role == Coordinator) && CheckFitName(u.Fit) != nil {
			return nil, fmt.Errorf("the %s %s: %v", u.Role, wire.Truncate(u.Key, 60), CheckFitName(u.Fit))
		}
		if !nkeys.IsValidPublicUserKey(u.Key) {
			return nil, fmt.Errorf("%q is not a NATS user's public key", wire.Truncate(u.Key, 60))
		}
		so.Nkeys = append(so.Nkeys, &server.NkeyUser{Nkey: u.Key, Permissions: u.Permissions()})
	}
	if o.TLS != nil {
		so.TLS, so.TLSConfig = true, o.TLS
		so.TLSVerify = o.TLS.ClientAuth == tls.RequireAndVerifyClientCert
	}
	ns, err := server.NewServer(so)
	if err != nil {
		return nil, fmt.Errorf("NATS server: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("NATS server: not ready after 10 s (is " + addr + " free?)")
	}
	return ns, nil
}
