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

// parked is a disconnected session's state, or a model parked for a page
// that has not opened yet (an upload, a fork), waiting in the server's
// lot (admit.Lot) to be resumed.
type parked struct {
	cfg      admit.Config
	data     *view.Data
	model    *engine.Model
	iter     int
	hist     view.EditHistory
	restarts *view.Restarts
	restart  int
	private  string     // the private data set it owns (upload.go), or ""
	hub      *share.Hub // its followers' hub, carried to the resumed session (nil: a new one)
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
	p := &parked{cfg: ss.cfg, data: ss.data, model: ss.tr.Model(), iter: ss.tr.Iter(),
		hist: view.EditHistory{Undo: ss.hist.Undo, Redo: ss.hist.Redo}, restarts: ss.restarts, restart: ss.restart, private: ss.private}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	if !ss.pageLeft.Load() {
		p.hub = ss.hub // a dropped connection: the followers wait for the resume
	}
	s.lot.Add(ss.resumeToken, ss, ss.client, "a disconnected session", p)
	return true
}

// unresumed ends what parked state p holds when it is let go unresumed:
// its private data set and its share. s.mu is held.
func (s *Server) unresumed(p *parked) {
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
	for _, p := range s.lot.All() {
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
	p, _ := s.lot.Take(token)
	return p
}

// Parked returns how many disconnected sessions are waiting to be resumed.
func (s *Server) Parked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lot.Len()
}

// adopt makes p's state this session's: the model carries on from where
// the disconnected session left it.
func (ss *session) adopt(p *parked) error {
	if p.model == nil { // an uploaded data set: a new model on it
		ss.private = p.private
		return ss.build(p.cfg, true)
	}
	n, q, dy := p.data.Dims()
	v := allviews.For(p.data.Set, ss.srv.env)
	if err := ss.srv.reserve(ss, admit.EstimateIn(p.cfg, n, q, dy, p.restarts.Count(), view.AnalyzedRows(v, p.data.Set)).Bytes); err != nil {
		return err
	}
	ss.view = v
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
