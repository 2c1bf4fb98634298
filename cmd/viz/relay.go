package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	neturl "net/url"
	"os"
	"path/filepath"

	"dgpviz/internal/relay"
	"dgpviz/internal/share"
	"dgpviz/web"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

func init() {
	register(command{name: "relay", summary: "serve followers of shared sessions published to NATS by viz serve -nats (a lecture past one server; docs/scaling.md)", run: runRelay})
}

// shareFlags are viz serve's flags for relays.
type shareFlags struct {
	nats       string // NATS URL
	embed      string // run a NATS server in this process on this address
	natsFlags         // credentials and TLS
	relayCreds string // -nats-embed: the relays' credentials file
	followURL  string
	publicURL  string
	stamp      bool
}

// natsFlags are the NATS credentials and TLS flags of viz serve and viz
// relay.
type natsFlags struct {
	creds string
	tls   relay.TLSFiles
}

func (f *natsFlags) define(fs *flag.FlagSet, role string) {
	fs.StringVar(&f.creds, "nats-creds", "", "the file of this "+role+"'s NATS credentials: a user NKey seed (for a relay, the file viz serve -nats-embed writes) or a NATS .creds file; readable by its owner alone (chmod 600). Never on the command line")
	fs.StringVar(&f.tls.CA, "nats-tls-ca", "", "PEM file of the certificate authority the NATS server's certificate is checked against (default: the system's); with viz serve -nats-embed, the authority relays' client certificates must be signed by")
	fs.StringVar(&f.tls.Cert, "nats-tls-cert", "", "PEM file of a TLS certificate: with -nats, this "+role+"'s client certificate, if the NATS server asks for one; with viz serve -nats-embed, the embedded server's (relays then need TLS)")
	fs.StringVar(&f.tls.Key, "nats-tls-key", "", "PEM file of the private key of -nats-tls-cert")
}

// connect connects to the NATS server at url with the flags' credentials
// and TLS; a refusal says which file and flag to look at.
func (f *natsFlags) connect(cmd string, role relay.Role, url, name string, log *slog.Logger) (*nats.Conn, error) {
	if f.creds == "" {
		return nil, badInput("%s: -nats-creds is required: the file of this process's NATS credentials (a relay's: the file viz serve -nats-embed wrote and printed)", cmd)
	}
	if u, err := neturl.Parse(url); err == nil && u.User != nil {
		return nil, badInput("%s: -nats %s has a user or password in it, which every user of this machine can read: put credentials in a file (-nats-creds)", cmd, u.Redacted())
	}
	c, err := relay.ReadCredentials(f.creds)
	if err != nil {
		return nil, badInput("%s: -nats-creds: %v", cmd, err)
	}
	tc, err := f.tls.Client()
	if err != nil {
		return nil, badInput("%s: -nats-tls-…: %v", cmd, err)
	}
	nc, err := relay.Connect(url, relay.ConnectOptions{Name: name, Credentials: c, TLS: tc, Logger: log})
	if errors.Is(err, relay.ErrRefused) {
		return nil, badInput("%s: %v: -nats-creds %s holds no key it accepts for this %s (a relay's is the file viz serve -nats-embed printed), or it wants a client certificate (-nats-tls-cert, -nats-tls-key)", cmd, err, f.creds, role)
	}
	if errors.Is(err, relay.ErrUntrusted) && f.tls.CA == "" {
		return nil, badInput("%s: -nats: %v (a NATS server whose certificate the system does not trust: give its authority's, -nats-tls-ca)", cmd, err)
	}
	if err != nil {
		return nil, badInput("%s: -nats: %v", cmd, err)
	}
	if err := relay.CheckRole(nc, role); err != nil {
		nc.Close()
		return nil, badInput("%s: NATS at %s: %v: -nats-creds %s is not a %s's key", cmd, url, err, f.creds, role)
	}
	return nc, nil
}

func (f *shareFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.nats, "nats", "", "publish every shared session to the NATS server at this URL (e.g. nats://10.0.0.2:4222 or tls://…), for relays (viz relay), with the credentials in -nats-creds; without it followers are this server's only")
	fs.StringVar(&f.embed, "nats-embed", "", "run a NATS server inside this process on this address (e.g. 127.0.0.1:4222) and publish to it; it accepts only this server, relays with the credentials it writes to -nats-relay-creds and, with -workers-embed, workers with those it writes to -workers-embed-creds")
	f.natsFlags.define(fs, "presenter's server")
	fs.StringVar(&f.relayCreds, "nats-relay-creds", "", "with -nats-embed: the file the relays' NATS credentials are kept in, readable by its owner alone; made if missing, reused if present (default: dgpviz/nats-relay.creds in the user's configuration folder, e.g. ~/.config)")
	fs.StringVar(&f.followURL, "share-url", "", "the page followers open, e.g. the relays' load balancer https://follow.example.org/: Share live links point there (default: this server)")
	fs.StringVar(&f.publicURL, "public-url", "", "this server's page as people reach it, e.g. https://lecture.example.org/: a follower of a relay who forks continues there (default with -nats: http://ADDR/)")
	fs.BoolVar(&f.stamp, "nats-stamp", false, "stamp each frame published to NATS with its encode time, in a NATS header (for viz loadtest -mode relays)")
}

// start connects to NATS (or starts the embedded server) and returns the
// session server's share options, and what stops them. With -nats-embed
// it prints where the relays' credentials are to out; with
// fit.embed (-workers-embed) as well, the workers' and the command they
// run.
func (f *shareFlags) start(addr string, fit *shardFlags, log *slog.Logger, out io.Writer) (share.ShareOptions, func(), error) {
	o := share.ShareOptions{FollowURL: f.followURL, PublicURL: f.publicURL}
	stop := func() {}
	if fit.embed != "" && f.embed == "" {
		return o, stop, badInput("viz serve: -workers-embed needs -nats-embed, the NATS server it lets the workers in")
	}
	if f.embed == "" && f.nats == "" {
		switch {
		case f.stamp:
			return o, stop, badInput("viz serve: -nats-stamp needs -nats")
		case f.creds != "" || f.relayCreds != "" || !f.tls.Empty():
			return o, stop, badInput("viz serve: the -nats-… flags need -nats or -nats-embed")
		}
		return o, stop, nil
	}
	if o.PublicURL == "" {
		if h, p, err := net.SplitHostPort(addr); err == nil && h != "" && h != "0.0.0.0" && h != "::" && p != "0" {
			o.PublicURL = "http://" + addr + "/"
		}
	}
	var nc *nats.Conn
	if f.embed != "" {
		ns, c, err := f.startEmbedded(fit, log, out)
		if err != nil {
			return o, stop, err
		}
		stop = ns.Shutdown
		if nc, err = relay.Connect(ns.ClientURL(), relay.ConnectOptions{Name: "dgpviz presenter", Credentials: c, Server: ns, Logger: log}); err != nil {
			stop()
			return o, func() {}, badInput("viz serve: -nats-embed: %v", err)
		}
	} else {
		if f.relayCreds != "" {
			return o, stop, badInput("viz serve: -nats-relay-creds is -nats-embed's (a NATS server of your own lists the relays' keys in its configuration: docs/scaling.md)")
		}
		var err error
		if nc, err = f.connect("viz serve", relay.Presenter, f.nats, "dgpviz presenter", log); err != nil {
			return o, stop, err
		}
	}
	o.Publisher = relay.NewPublisher(nc, relay.PublisherOptions{Logger: log, Stamp: f.stamp})
	return o, func() { nc.Close(); stop() }, nil
}

// startEmbedded starts -nats-embed's NATS server, which accepts the
// relays' credentials (read from -nats-relay-creds, or made and written
// there) and a presenter's made for this process alone, which it returns.
// With -workers-embed FIT it also accepts the fit's workers (their
// credentials kept in -workers-embed-creds as the relays' are) and this
// process's coordinator, whose credentials it keeps in fit.embedded.
func (f *shareFlags) startEmbedded(fit *shardFlags, log *slog.Logger, out io.Writer) (*server.Server, *relay.Credentials, error) {
	if f.nats != "" {
		return nil, nil, badInput("viz serve: give -nats or -nats-embed, not both")
	}
	if f.creds != "" {
		return nil, nil, badInput("viz serve: -nats-creds is -nats's: with -nats-embed this server makes its own, and the relays' are in -nats-relay-creds")
	}
	var tc *tls.Config
	if !f.tls.Empty() {
		var err error
		if tc, err = f.tls.Server(); err != nil {
			return nil, nil, badInput("viz serve: -nats-embed with TLS: %v (give -nats-tls-cert and -nats-tls-key, the server's)", err)
		}
	} else if !isLoopbackAddr(f.embed) {
		log.Warn("NATS without TLS on a network: relays prove who they are without sending their seed, but frames and forks travel in clear (give -nats-tls-cert and -nats-tls-key)", "addr", f.embed)
	}
	path, err := credentialsPath(f.relayCreds, "nats-relay.creds", "-nats-relay-creds")
	if err != nil {
		return nil, nil, err
	}
	rc, made, err := keptCredentials(path, "dgpviz relays' NATS credentials, accepted by viz serve -nats-embed "+f.embed+".\nUse: viz relay -nats nats://HOST:PORT -nats-creds THIS-FILE. Keep it secret: chmod 600.")
	if err != nil {
		return nil, nil, badInput("viz serve: -nats-relay-creds: %v", err)
	}
	pc, err := relay.NewCredentials()
	if err != nil {
		return nil, nil, err
	}
	users := []relay.User{pc.User(relay.Presenter), rc.User(relay.Relay)}
	var workers struct {
		path string
		made bool
	}
	var cc *relay.Credentials
	if fit.embed != "" {
		if err := relay.CheckFitName(fit.embed); err != nil {
			return nil, nil, badInput("viz serve: -workers-embed: %v", err)
		}
		// One key per role: the workers' file lets them serve this fit
		// and nothing else, not follow or draw on a lecture.
		if workers.path, err = credentialsPath(fit.embedCreds, "nats-worker-"+fit.embed+".creds", "-workers-embed-creds"); err != nil {
			return nil, nil, err
		}
		if workers.path == path {
			return nil, nil, badInput("viz serve: -workers-embed-creds and -nats-relay-creds are the same file %s: workers and relays have keys of their own", path)
		}
		var wc *relay.Credentials
		wc, workers.made, err = keptCredentials(workers.path, "dgpviz workers' NATS credentials for the fit "+fit.embed+", accepted by viz serve -nats-embed "+f.embed+".\nUse: viz worker -nats nats://HOST:PORT -nats-creds THIS-FILE -fit "+fit.embed+". Keep it secret: chmod 600.")
		if err != nil {
			return nil, nil, badInput("viz serve: -workers-embed-creds: %v", err)
		}
		if cc, err = relay.NewCredentials(); err != nil {
			return nil, nil, err
		}
		users = append(users, relay.User{Key: wc.PublicKey(), Role: relay.Worker, Fit: fit.embed}, relay.User{Key: cc.PublicKey(), Role: relay.Coordinator, Fit: fit.embed})
	}
	ns, err := relay.StartNATS(f.embed, relay.ServerOptions{Users: users, TLS: tc})
	if err != nil {
		return nil, nil, badInput("viz serve: -nats-embed: %v", err)
	}
	fmt.Fprintf(out, "dgpviz: NATS on %s; relays' credentials %s %s (viz relay -nats %s -nats-creds %s; on other machines, a copy only its owner can read: chmod 600)\n", ns.ClientURL(), keptVerb(made), path, ns.ClientURL(), path)
	if fit.embed != "" {
		fit.embedded = &embeddedFit{ns: ns, creds: cc}
		fmt.Fprintf(out, "dgpviz: the fit %s's workers' credentials %s %s; on each worker machine, with a copy only its owner can read (chmod 600) and the data files at the same paths:\n  viz worker -nats %s -nats-creds %s -fit %s\n", fit.embed, keptVerb(workers.made), workers.path, reachableURL(ns.ClientURL()), workers.path, fit.embed)
	}
	return ns, pc, nil
}

// reachableURL is a NATS server's URL as other machines reach it: a
// server listening on every address (0.0.0.0, ::) by this machine's name.
func reachableURL(u string) string {
	p, err := neturl.Parse(u)
	if err != nil {
		return u
	}
	if ip := net.ParseIP(p.Hostname()); ip == nil || !ip.IsUnspecified() {
		return u
	}
	name, err := os.Hostname()
	if err != nil {
		return u
	}
	p.Host = net.JoinHostPort(name, p.Port())
	return p.String()
}

// credentialsPath is flag's file, or by default name in dgpviz's folder of
// the user's configuration.
func credentialsPath(flag, name, flagName string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", badInput("viz serve: -nats-embed: no folder for the NATS credentials (%v): give %s FILE", err, flagName)
	}
	return filepath.Join(dir, "dgpviz", name), nil
}

func keptVerb(made bool) string {
	if made {
		return "written to"
	}
	return "kept in"
}

// keptCredentials reads credentials from path or, if there is no such
// file, makes them and writes them there (0600) under note.
func keptCredentials(path, note string) (c *relay.Credentials, made bool, err error) {
	c, err = relay.ReadCredentials(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return c, false, err
	}
	if c, err = relay.NewCredentials(); err != nil {
		return nil, false, err
	}
	return c, true, relay.WriteCredentials(path, c, note)
}

// relayOptions are the parsed flags of viz relay.
type relayOptions struct {
	nats string
	natsFlags
	addr     string
	o        relay.Options
	hosts    []string
	perIP    int
	logLevel slog.Level
}

func parseRelay(args []string, stderr io.Writer) (relayOptions, error) {
	o := relayOptions{}
	fs := newFlags("relay", stderr)
	fs.StringVar(&o.nats, "nats", "", "the NATS server the presenter's viz serve -nats publishes to (required), e.g. nats://127.0.0.1:4222 or tls://10.0.0.2:4222")
	o.natsFlags.define(fs, "relay")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8090", "address to listen on (host:port; port 0 picks a free one)")
	fs.StringVar(&o.o.PublicURL, "public-url", "", "this relay's page as followers reach it (e.g. http://10.0.0.5:8090/), announced to the other relays so that a page whose relay fails tries another; leave empty behind a load balancer")
	fs.IntVar(&o.o.MaxFollowers, "max-followers", relay.DefaultMaxFollowers, "followers of this relay, all sessions together")
	fs.IntVar(&o.o.MaxSessions, "max-sessions", relay.DefaultMaxSessions, "shared sessions this relay follows at once")
	hostFlags(fs, &o.o.AllowedOrigins, &o.hosts)
	fs.IntVar(&o.perIP, "max-conns-per-ip", 256, "open connections one client address may hold (behind a load balancer or a campus NAT every follower has the same address: raise it to -max-followers)")
	fs.TextVar(&o.logLevel, "log-level", slog.LevelInfo, "log level: debug, info, warn, error")
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	if o.nats == "" {
		return o, badInput("viz relay: -nats is required (the NATS server viz serve -nats publishes to)")
	}
	if o.creds == "" {
		return o, badInput("viz relay: -nats-creds is required: the file of the relays' NATS credentials (viz serve -nats-embed writes it and prints its path)")
	}
	if o.perIP < 1 {
		return o, badInput("viz relay: -max-conns-per-ip %d, want ≥ 1", o.perIP)
	}
	if o.o.MaxFollowers < 1 || o.o.MaxSessions < 1 {
		return o, badInput("viz relay: -max-followers and -max-sessions must be at least 1")
	}
	if o.o.PublicURL != "" {
		if err := share.CheckPageURL(o.o.PublicURL); err != nil {
			return o, badInput("viz relay: -public-url: %v", err)
		}
	}
	return o, nil
}

func runRelay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseRelay(args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: o.logLevel}))
	nc, err := o.connect("viz relay", relay.Relay, o.nats, "dgpviz relay "+o.addr, log)
	if err != nil {
		return err
	}
	defer nc.Close()
	o.o.NATS, o.o.Logger = nc, log
	r, err := relay.New(o.o)
	if err != nil {
		return badInput("viz relay: %v", err)
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return badInput("viz relay: %v", err)
	}
	hosts := answeredHosts(o.addr, o.hosts)
	return serve(ctx, web.LimitPerClient(ln, o.perIP), web.AllowHosts(r.Handler(), hosts), relayServer{r}, log, stdout)
}

type relayServer struct{ *relay.Server }

func (relayServer) command() string { return "relay" }
