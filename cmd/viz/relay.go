package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net"

	"dgpviz/internal/relay"
	"dgpviz/internal/share"
	"dgpviz/web"
)

func init() {
	register(command{name: "relay", summary: "serve followers of shared sessions published to NATS by viz serve -nats (a lecture past one server; docs/scaling.md)", run: runRelay})
}

// shareFlags are viz serve's flags for relays.
type shareFlags struct {
	nats      string // NATS URL
	embed     string // run a NATS server in this process on this address
	followURL string
	publicURL string
	stamp     bool
}

func (f *shareFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.nats, "nats", "", "publish every shared session to the NATS server at this URL (e.g. nats://127.0.0.1:4222), for relays (viz relay); without it followers are this server's only")
	fs.StringVar(&f.embed, "nats-embed", "", "run a NATS server inside this process on this address (e.g. 127.0.0.1:4222) and publish to it: relays on one machine need no other NATS server")
	fs.StringVar(&f.followURL, "share-url", "", "the page followers open, e.g. the relays' load balancer https://follow.example.org/: Share live links point there (default: this server)")
	fs.StringVar(&f.publicURL, "public-url", "", "this server's page as people reach it, e.g. https://lecture.example.org/: a follower of a relay who forks continues there (default with -nats: http://ADDR/)")
	fs.BoolVar(&f.stamp, "nats-stamp", false, "stamp each frame published to NATS with its encode time, in a NATS header (for viz loadtest -mode relays)")
}

// start connects to NATS (or starts the embedded server) and returns the
// session server's share options, and what stops them.
func (f *shareFlags) start(addr string, log *slog.Logger) (share.ShareOptions, func(), error) {
	o := share.ShareOptions{FollowURL: f.followURL, PublicURL: f.publicURL}
	stop := func() {}
	if f.embed != "" {
		if f.nats != "" {
			return o, stop, badInput("viz serve: give -nats or -nats-embed, not both")
		}
		ns, err := relay.StartNATS(f.embed)
		if err != nil {
			return o, stop, badInput("viz serve: -nats-embed: %v", err)
		}
		f.nats = ns.ClientURL()
		stop = ns.Shutdown
		log.Info("NATS server in this process", "url", f.nats)
	}
	if f.nats == "" {
		if f.stamp {
			return o, stop, badInput("viz serve: -nats-stamp needs -nats")
		}
		return o, stop, nil
	}
	if o.PublicURL == "" {
		if h, p, err := net.SplitHostPort(addr); err == nil && h != "" && h != "0.0.0.0" && h != "::" && p != "0" {
			o.PublicURL = "http://" + addr + "/"
		}
	}
	nc, err := relay.Connect(f.nats, "dgpviz presenter", log)
	if err != nil {
		stop()
		return o, func() {}, badInput("viz serve: -nats: %v", err)
	}
	o.Publisher = relay.NewPublisher(nc, relay.PublisherOptions{Logger: log, Stamp: f.stamp})
	return o, func() { nc.Close(); stop() }, nil
}

// relayOptions are the parsed flags of viz relay.
type relayOptions struct {
	nats     string
	addr     string
	o        relay.Options
	hosts    []string
	perIP    int
	logLevel slog.Level
}

func parseRelay(args []string, stderr io.Writer) (relayOptions, error) {
	o := relayOptions{}
	fs := newFlags("relay", stderr)
	fs.StringVar(&o.nats, "nats", "", "the NATS server the presenter's viz serve -nats publishes to (required), e.g. nats://127.0.0.1:4222")
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
	nc, err := relay.Connect(o.nats, "dgpviz relay "+o.addr, log)
	if err != nil {
		return badInput("viz relay: -nats: %v", err)
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
