package stream

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/allviews"
	"dgpviz/internal/engine"
	"dgpviz/internal/share"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
)

// Resuming a session. A page whose socket drops (a network blip, a laptop
// lid, a proxy restart) reconnects with the token its hello carried; within
// the resume grace period (Options.ResumeGrace, a minute by default) of the
// disconnect the new socket takes over the old session's model, iteration
// count, data edits, undo history and preset's restarts instead of
// starting again at iteration 0. The optimizer's
// memory is not kept: it starts afresh from the model, as after an edit.
//
// The session's share goes on too: its hub — share key, bound history,
// presentation state, the latest setup, frame and view messages, and
// its followers, here and on relays — waits with the parked state and
// serves the resumed session, so a presenter's network blip does not end
// the class's share. Followers see the last frame until the presenter is
// back; the hub ends when the state is forgotten unresumed.

// DefaultResumeGrace is how long a disconnected session's state is kept
// (Options.ResumeGrace).
const DefaultResumeGrace = 60 * time.Second

// parked is a disconnected session's state, waiting to be resumed.
type parked struct {
	owner    *session // the key of its reservation (budget.go)
	cfg      admit.Config
	data     *view.Data
	model    *engine.Model
	iter     int
	hist     view.EditHistory
	restarts *view.Restarts
	restart  int
	private  string     // the private data set it owns (upload.go), or ""
	hub      *share.Hub // its followers' hub, carried to the resumed session (nil: a new one)
	timer    *time.Timer
	// disconnected is when its page left; zero for a model parked for a
	// page that has not opened yet (an upload, a fork).
	disconnected time.Time
	client       string    // whose it is (ClientOf), for the per-client limits of parked state
	parkedAt     time.Time // when it was parked
}

func newResumeToken() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// park keeps ss's state under its resume token for the resume grace period, with its
// memory reservation, and reports whether it did: a session that never
// had a model (a refused configuration), or one the server is shutting
// down, is not parked.
func (s *Server) park(ss *session) bool {
	if ss.tr == nil || ss.resumeToken == "" {
		return false
	}
	now := time.Now()
	p := &parked{owner: ss, cfg: ss.cfg, data: ss.data, model: ss.tr.Model(), iter: ss.tr.Iter(),
		hist: view.EditHistory{Undo: ss.hist.Undo, Redo: ss.hist.Redo}, restarts: ss.restarts, restart: ss.restart, disconnected: now,
		client: ss.client, parkedAt: now}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	token := ss.resumeToken
	p.private = ss.private
	if !ss.pageLeft.Load() {
		p.hub = ss.hub // a dropped connection: the followers wait for the resume
	}
	s.addParked(token, p)
	return true
}

// addParked parks p under token for the resume grace period, first
// letting go of its client's oldest parked state when the client already
// has maxParkedPerClient. s.mu is held.
func (s *Server) addParked(token string, p *parked) {
	for s.clientParked(p.client) >= maxParkedPerClient {
		oldest := ""
		for t, q := range s.parked {
			if q.client == p.client && (oldest == "" || q.parkedAt.Before(s.parked[oldest].parkedAt)) {
				oldest = t
			}
		}
		s.let(oldest, "its client parked more")
	}
	p.timer = time.AfterFunc(s.grace, func() { s.expire(token, p) })
	s.parked[token] = p
}

// clientParked counts the parked state of client. s.mu is held.
func (s *Server) clientParked(client string) int {
	n := 0
	for _, p := range s.parked {
		if p.client == client {
			n++
		}
	}
	return n
}

// let forgets the parked state under token before its time, and returns
// the bytes its reservation held. s.mu is held.
func (s *Server) let(token, why string) int64 {
	p := s.parked[token]
	p.timer.Stop()
	freed := s.ledger.Held(p.owner)
	s.forget(token, p)
	kind := "an upload or a fork"
	if !p.disconnected.IsZero() {
		kind = "a disconnected session"
	}
	s.log.Info("let parked state go", "kind", kind, "why", why, "parked", time.Since(p.parkedAt).Round(time.Second), "MiB", freed>>20)
	return freed
}

// expire forgets parked state p if it was not resumed in time.
func (s *Server) expire(token string, p *parked) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.parked[token] == p {
		s.forget(token, p)
	}
}

// forget drops parked state p, its reservation and its private data set.
// s.mu is held.
func (s *Server) forget(token string, p *parked) {
	delete(s.parked, token)
	s.ledger.Release(p.owner)
	if p.private != "" {
		s.cat.RemovePrivate(p.private)
	}
	if p.hub != nil {
		p.hub.End(presenterEnded)
	}
}

// presenterEnded is the reason followers are closed with when the
// presenter's session ends.
const presenterEnded = "the presenter's session has ended"

// sessionHub returns the hub a new session shares itself through: the
// parked session's that it resumes, or a new one.
func (s *Server) sessionHub(resumed *parked) *share.Hub {
	if resumed != nil && resumed.hub != nil {
		return resumed.hub
	}
	return s.newHub()
}

// endShare ends the share of a session that has ended without being
// parked: its followers are closed.
func (ss *session) endShare() {
	if ss.hub != nil {
		ss.hub.End(presenterEnded)
	}
}

// parkedHub returns the hub shared under key by a parked session (nil:
// none). s.mu is held.
func (s *Server) parkedHub(key string) *share.Hub {
	for _, p := range s.parked {
		if p.hub != nil && p.hub.Key() == key {
			return p.hub
		}
	}
	return nil
}

// unpark takes the state parked under token, if it is still there, and
// ends its reservation (the resuming session makes its own).
func (s *Server) unpark(token string) *parked {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parked[token]
	if p == nil {
		return nil
	}
	delete(s.parked, token)
	s.ledger.Forget(p.owner)
	p.timer.Stop()
	return p
}

// Parked returns how many disconnected sessions are waiting to be resumed.
func (s *Server) Parked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.parked)
}

// adopt makes p's state this session's: the model carries on from where
// the disconnected session left it.
func (ss *session) adopt(p *parked) error {
	if p.model == nil { // an uploaded data set: a new model on it
		ss.private = p.private
		return ss.build(p.cfg, true)
	}
	n, q, dy := p.data.Dims()
	k := 0
	if p.restarts != nil {
		k = len(p.restarts.List)
	}
	if err := ss.srv.reserve(ss, admit.EstimateIn(p.cfg, allviews.For(p.data.Set, nil), p.data.Set, n, q, dy, k).Bytes); err != nil {
		return err
	}
	ss.view = allviews.For(p.data.Set, ss.srv.env)
	tr, err := train.NewTrainer(p.model, ss.srv.onShards(ss.view.Optimizer(p.cfg.Trainer(ss.srv.workers, n)), p.data))
	if err != nil {
		return fmt.Errorf("resuming the optimizer: %w", err)
	}
	tr.SetIter(p.iter)
	ss.cfg, ss.tr, ss.data = p.cfg, tr, p.data
	ss.opt.estimate, ss.opt.epochs = math.NaN(), 0
	ss.dataSeq = max(ss.dataSeq, p.data.ID)
	ss.private = p.private
	ss.hist = p.hist
	ss.restarts, ss.restart = p.restarts, p.restart
	ss.opt.status, ss.opt.event = train.NotTerminated, ""
	ss.opt.ipsT, ss.opt.ipsIter, ss.opt.ips = time.Now(), p.iter, 0
	return ss.sendSetup()
}
