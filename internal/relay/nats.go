package relay

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// MaxPayload is the largest NATS message the embedded server takes: the
// largest setup (the Frey faces', 2.2 MB) and then some. A NATS server of
// your own needs max_payload at least this large for the Frey view.
const MaxPayload = 8 << 20

// Connect connects to the NATS server at url for a presenter's server or
// a relay (name says which, in NATS's monitoring). It keeps trying: a
// NATS server that is down at the start or restarts later is reconnected
// to, every ReconnectWait, for as long as the process runs.
func Connect(url, name string, log *slog.Logger) (*nats.Conn, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	nc, err := nats.Connect(url,
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(ReconnectWait),
		nats.ReconnectJitter(100*time.Millisecond, 100*time.Millisecond),
		nats.RetryOnFailedConnect(true),
		nats.ConnectHandler(func(*nats.Conn) { log.Info("NATS: connected", "url", url) }),
		nats.ReconnectHandler(func(*nats.Conn) { log.Info("NATS: reconnected", "url", url) }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Warn("NATS: disconnected", "err", err) }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { log.Warn("NATS", "err", err) }),
	)
	if err != nil {
		return nil, fmt.Errorf("NATS at %s: %w", url, err)
	}
	return nc, nil
}

// ReconnectWait is how long a lost NATS connection waits between tries.
const ReconnectWait = 250 * time.Millisecond

// StartNATS runs a NATS server in this process, listening on addr
// (host:port; port 0 picks a free one): for tests, viz loadtest and a
// single machine (viz serve -nats-embed). Its ClientURL is the URL to
// connect to; Shutdown stops it.
func StartNATS(addr string) (*server.Server, error) {
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
	ns, err := server.NewServer(&server.Options{Host: host, Port: p, MaxPayload: MaxPayload, NoLog: true, NoSigs: true})
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
