package relay

import (
	"log/slog"
	"strconv"
	"sync"
	"time"

	"dgpviz/internal/share"
	"dgpviz/internal/wire"

	"github.com/nats-io/nats.go"
)

// Publisher publishes a presenter's server's shared sessions to NATS
// (viz serve -nats): each session's stream on dgpviz.share.KEY.*, and
// answers relays' requests on dgpviz.session.KEY.*. It is a
// share.Publisher.
//
// Late joiners are answered by request/reply, not from a last-value store
// (a JetStream key-value bucket): the answer comes from the live session,
// so it is never stale, and a session that has ended has no responder, so
// a relay learns at once that there is nothing to follow (NATS answers
// "no responders"); a plain nats-server without JetStream is enough, and
// nothing is stored per frame or left behind when a session ends.
type Publisher struct {
	nc    *nats.Conn
	log   *slog.Logger
	stamp bool
}

// PublisherOptions configure NewPublisher.
type PublisherOptions struct {
	Logger *slog.Logger
	// Stamp adds each frame's encode time in a NATS header, for viz
	// loadtest -mode relays's latency (the frames themselves are the
	// bytes local followers get).
	Stamp bool
}

// NewPublisher returns a publisher on nc.
func NewPublisher(nc *nats.Conn, o PublisherOptions) *Publisher {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Publisher{nc: nc, log: o.Logger, stamp: o.Stamp}
}

// Share implements share.Publisher.
func (p *Publisher) Share(key string, src share.ShareSource) share.Feed {
	f := &pubFeed{p: p, key: key, src: src, asks: make(chan struct{}, maxAsks)}
	sub, err := p.nc.Subscribe(sessionSubject(key, "*"), f.request)
	if err != nil {
		p.log.Warn("NATS: cannot answer relays for a session", "err", err)
	} else if p.nc.IsConnected() {
		// The NATS server has the subscription before the share key is
		// out: a relay's first follower, however quick, is answered,
		// not told "no responders" (no such session).
		p.nc.FlushTimeout(time.Second)
	}
	f.sub = sub
	return f
}

// joinParts is the most messages a join's answer has: info, setup,
// history, presentation, frame, done.
const joinParts = 6

// maxAsks bounds the forks and decodes of one session's relays' followers
// answered at once (more are told to try again).
const maxAsks = 4

// pubFeed is one session's feed to NATS.
type pubFeed struct {
	p    *Publisher
	key  string
	src  share.ShareSource
	sub  *nats.Subscription
	asks chan struct{} // slots for asks in flight

	warnOnce sync.Once
}

func (f *pubFeed) publish(kind string, b []byte, h nats.Header) {
	if max := f.p.nc.MaxPayload(); max > 0 && int64(len(b)) > max {
		f.warnOnce.Do(func() {
			f.p.log.Warn("NATS: a message is larger than the NATS server's max_payload: relays cannot follow this session (raise max_payload)", "kind", kind, "bytes", len(b), "max_payload", max)
		})
		return
	}
	if err := f.p.nc.PublishMsg(&nats.Msg{Subject: streamSubject(f.key, kind), Data: b, Header: h}); err != nil {
		f.p.log.Debug("NATS publish", "kind", kind, "err", err)
	}
}

func (f *pubFeed) Setup(b []byte)        { f.publish("setup", b, nil) }
func (f *pubFeed) Presentation(b []byte) { f.publish("presentation", b, nil) }

// Frame publishes a frame while NATS is connected: frames published
// during a reconnect would be sent late, as a burst; relays catch up from
// a snapshot instead.
func (f *pubFeed) Frame(b []byte, seq uint64) {
	if !f.p.nc.IsConnected() {
		return
	}
	var h nats.Header
	if f.p.stamp {
		h = nats.Header{hdrEncoded: []string{strconv.FormatInt(time.Now().UnixNano(), 10)}}
	}
	f.publish("frame", b, h)
}

func (f *pubFeed) End(reason string) {
	f.publish("end", []byte(reason), nil)
	if f.sub != nil {
		f.sub.Unsubscribe()
	}
}

// request answers a relay: join (the snapshot, as parts to the reply
// subject, in order, then "done"), alive, ask, or a follower count.
func (f *pubFeed) request(m *nats.Msg) {
	switch lastToken(m.Subject) {
	case "join":
		if m.Reply == "" {
			return
		}
		s := f.src.Catchup()
		info, _ := jsonBytes(s.Info)
		for _, part := range [joinParts]struct { // at most joinParts: NATS lets no more through (Role.Permissions)
			kind string
			b    []byte
		}{{"info", info}, {"setup", s.Setup}, {"history", s.History}, {"presentation", s.Presentation}, {"frame", s.Frame}, {"done", nil}} {
			if part.b == nil && part.kind != "done" {
				continue
			}
			if err := f.p.nc.PublishMsg(&nats.Msg{Subject: m.Reply, Data: part.b, Header: nats.Header{hdrKind: []string{part.kind}}}); err != nil {
				f.p.log.Debug("NATS join answer", "err", err)
				return
			}
		}
	case "alive":
		m.Respond(nil)
	case "ask":
		id, op := commandOp(m.Data)
		if m.Reply == "" || op == "" { // a relay's follower's command: fork, or a question to the view
			return
		}
		select {
		case f.asks <- struct{}{}:
		default:
			m.Respond(share.ErrorReply(id, wire.Truncate(op, 40), "the presenter's server is busy with other followers' requests; try again"))
			return
		}
		go func() {
			defer func() { <-f.asks }()
			b, binary := f.src.Ask(op, m.Data)
			h := nats.Header{}
			if binary {
				h.Set(hdrBinary, "1")
			}
			m.RespondMsg(&nats.Msg{Data: b, Header: h})
		}()
	case "watching":
		if w, err := parseWatching(m.Data); err == nil {
			f.src.Watching(w.Relay, w.Followers)
		}
	}
}

func lastToken(subject string) string {
	for i := len(subject) - 1; i >= 0; i-- {
		if subject[i] == '.' {
			return subject[i+1:]
		}
	}
	return subject
}
