package stream

import (
	"dgpviz/internal/admit"
	"dgpviz/internal/view"
)

// estimateNow is what s holds with configuration c on n rows of its data:
// with the models of its restarts, when it keeps them.
func (s *session) estimateNow(c admit.Config, n, q, d int) admit.Estimate {
	return admit.EstimateIn(c, n, q, d, s.restarts.Count(), view.AnalyzedRows(s.view, s.data.Set))
}

// grow checks that s may hold configuration c on n rows of its data and
// reserves it, before the memory is taken: every way a session grows
// (data edits, undo and redo of them) asks here first.
func (s *session) grow(c admit.Config, n, q, d int) error {
	e := s.estimateNow(c, n, q, d)
	if err := admit.CheckBudget(e, s.srv.limits); err != nil {
		return err
	}
	return s.srv.reserve(s, e.Bytes)
}

// reservation returns ss's reservation.
func (s *Server) reservation(ss *session) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ledger.Held(ss)
}

// setReservation makes ss's reservation bytes without checking the
// budget: for a reservation that shrinks, or one given back as it was.
func (s *Server) setReservation(ss *session, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ledger.Set(ss, ss.client, bytes)
}

// reserve records that session ss now holds a configuration estimated at
// bytes (admit.Lot.Reserve), letting go of parked state to make room —
// disconnected sessions waiting to be resumed, uploads and forks waiting
// for their page — but never ss's own. A session's reservation ends when
// it closes (release).
func (s *Server) reserve(ss *session, bytes int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lot.Reserve(ss, ss.client, bytes)
}

// busyCloseText is the close reason of a session refused with
// admit.ErrBusy (a close frame's reason holds 123 bytes; the error
// message before it has the numbers).
const busyCloseText = "the server is busy: not enough memory for this model now; try a smaller model or later"

func (s *Server) release(ss *session) {
	s.mu.Lock()
	s.ledger.Release(ss)
	s.mu.Unlock()
}
