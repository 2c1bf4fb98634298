package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/engine"
	"dgpviz/internal/share"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
)

// forkState is the presenter's state as last published: its
// configuration, and the publication (the model's immutable copy, its
// data and view).
type forkState struct {
	cfg admit.Config
	pub *publication
}

// Config is the presenter's configuration as JSON (share.State).
func (st *forkState) Config() json.RawMessage {
	b, _ := json.Marshal(st.cfg)
	return b
}

// stateOf returns h's presenter's state as last published (nil: none yet).
func stateOf(h *share.Hub) *forkState {
	st, _ := h.State().(*forkState)
	return st
}

// hubOf returns the live session shared under key (nil: none, or it has
// ended and its connection is still closing).
func (s *Server) hubOf(key string) *share.Hub {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ss := range s.sessions {
		if ss.hub != nil && ss.hub.Key() == key {
			select {
			case <-ss.hub.Done():
				return nil
			default:
				return ss.hub
			}
		}
	}
	return s.parkedHub(key) // a presenter reconnecting
}

// newHub makes a session's hub, published beyond the process when the
// server has a share.Publisher; it ends with the session, or when the session's
// parked state is forgotten (resume.go).
func (s *Server) newHub() *share.Hub {
	h := share.NewHub(newResumeToken())
	if p := s.share.Publisher; p != nil {
		// The relays' followers are one client to this server: a relay
		// does not say who its followers are.
		ask := func(op string, raw []byte) ([]byte, bool) { return s.followerAsk(h, relayClient, op, raw, true) }
		h.FeedTo(p.Share(h.Key(), &share.HubSource{Hub: h, PresenterURL: s.share.PublicURL, Answer: ask}))
	}
	return h
}

// serveFollower runs a follower's connection until it closes or the
// presenter's session ends.
func (s *Server) serveFollower(w http.ResponseWriter, r *http.Request, key string) {
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	client := admit.RequestClient(r, s.trustProxy)
	h := s.hubOf(key)
	s.mu.Lock()
	full := s.followers >= s.limits.MaxFollowers
	if h != nil && !full && !s.closing {
		s.followers++
	}
	closing := s.closing
	s.mu.Unlock()
	switch {
	case closing:
		share.CloseWith(conn, closeGoingAway, "server is shutting down")
		return
	case h == nil:
		share.CloseWith(conn, closePolicy, share.NoSuchShare)
		return
	case full:
		share.CloseWith(conn, closeTryLater, "too many followers (limit "+strconv.Itoa(s.limits.MaxFollowers)+")")
		return
	}
	defer func() {
		s.mu.Lock()
		s.followers--
		s.mu.Unlock()
	}()
	hello := reply{Type: "hello", Follower: true, Limits: &s.limits, Sets: s.cat.Info(), Groups: engine.GroupNames(), MaxHistory: train.MaxHistory}
	if st := stateOf(h); st != nil {
		cfg := st.cfg
		hello.Config = &cfg
	}
	h.Serve(conn, hello.bytes(), share.FollowerOptions{
		MaxCommandBytes: s.limits.MaxCommandBytes,
		Ask:             func(op string, raw []byte) ([]byte, bool) { return s.followerAsk(h, client, op, raw, false) },
	})
}

// followerAsk answers a follower's command: "fork" parks a session of its
// own; a question to the presenter's view (view.Op.Answer, the
// autoencoder's "decode") is answered from the presenter's published
// model; anything else is refused (read-only). remote marks a follower of
// a relay, whose fork ack carries the link to this server's page that
// resumes the fork (share.ShareOptions.PublicURL).
func (s *Server) followerAsk(h *share.Hub, client, op string, raw []byte, remote bool) ([]byte, bool) {
	c, _ := ParseCommand(raw)
	switch {
	case op == "fork":
	case answerable(h, op):
		answer, rep := s.followerAnswer(h, client, raw)
		if answer != nil {
			return answer, true
		}
		return rep.bytes(), false
	default:
		return reply{Type: "error", ID: c.ID, Op: op, Error: share.ReadOnly}.bytes(), false
	}
	token, err := s.fork(h, client)
	if errors.Is(err, admit.ErrTooOften) {
		// A refusal waits, as an upload's does (web): a follower that
		// asks as fast as it is answered is slowed to one a second.
		time.Sleep(time.Second)
	}
	if err != nil {
		return reply{Type: "error", ID: c.ID, Op: "fork", Error: err.Error()}.bytes(), false
	}
	ack := share.ForkAck{Type: "ack", ID: c.ID, Op: "fork", Message: "forked: reconnecting to your own copy", Resume: token}
	if remote && s.share.PublicURL != "" {
		ack.URL = s.share.PublicURL + "?resume=" + token
		ack.Message = "forked: opening your own copy on the presenter's server"
	}
	return ack.Bytes(), false
}

// followerAnswer answers a follower's question to the view (command b)
// from the presenter's published model: a binary message, or an error
// reply. Each question is a job of the follower's client in the server's
// pool (admit.Pool), so that a room of followers hovering over faces costs
// the presenter's machine the pool's cores at most, shared fairly.
func (s *Server) followerAnswer(h *share.Hub, client string, b []byte) ([]byte, reply) {
	c, err := ParseCommand(b)
	if err != nil {
		return nil, reply{Type: "error", ID: c.ID, Op: c.Op, Error: err.Error()}
	}
	st := stateOf(h)
	if st == nil {
		return nil, reply{Type: "error", ID: c.ID, Op: c.Op, Error: c.Op + ": the shared session has no model yet"}
	}
	// The follower's reader waits for the answer, so it cannot see the
	// follower leave: the wait for a turn is bounded instead.
	ctx, cancel := context.WithTimeout(s.bg, writeWait)
	defer cancel()
	ans, err := s.answerAsJob(ctx, client, st.pub, c)
	if errors.Is(err, context.DeadlineExceeded) {
		err = errors.New(c.Op + ": " + admit.ErrClientBusy.Error())
	}
	if err != nil {
		return nil, reply{Type: "error", ID: c.ID, Op: c.Op, Error: err.Error()}
	}
	return ans, reply{}
}

// answerable reports whether op is a question to the presenter's view.
func answerable(h *share.Hub, op string) bool {
	st := stateOf(h)
	if st == nil {
		return false
	}
	o, ok := view.FindOp(st.pub.view, op)
	return ok && o.Answer != nil
}

// fork parks a session of client's starting from h's presenter's current
// state (a parked-state allowance of the client's, upload.go).
func (s *Server) fork(h *share.Hub, client string) (string, error) {
	st := stateOf(h)
	if st == nil {
		return "", errors.New("the shared session has no model yet")
	}
	if err := s.lot.TakePark(client); err != nil {
		return "", err
	}
	snap := st.pub.snap
	n, q, dy := snap.Data.Dims()
	cfg := st.cfg
	cfg.Play = false
	e := admit.EstimateStarted(cfg, snap.Data.Set, n, q, dy) // a fork does not keep the presenter's restarts
	if err := admit.CheckBudget(e, s.limits); err != nil {
		return "", err
	}
	p := &parked{cfg: cfg, data: snap.Data, model: snap.Model.Clone(), iter: snap.Iter, restart: -1}
	return s.parkNew(client, p, nil, e.Bytes)
}

// relayClient is the client the followers of relays count as (share.HubSource).
const relayClient = "relays"

// present takes the presenter's "present" command (on the reader's
// goroutine): an error reply if it is bad, nothing if it is good.
func (ss *session) present(c Command) {
	b, err := share.PresentationOf(c)
	if err != nil {
		ss.reply(reply{Type: "error", ID: c.ID, Op: c.Op, Error: err.Error()})
		return
	}
	ss.hub.Presentation(b)
}

// cmdPresent is never reached: the reader takes "present" (present). It
// is listed so that ParseCommand and Ops know the op.
func (s *session) cmdPresent(c Command) (string, error) {
	return "", fmt.Errorf("present: taken by the reader")
}
