package stream

import (
	"dgpviz/internal/admit"
	"dgpviz/internal/view"
)

// grow checks that s may hold configuration c on n rows of its data —
// with the models of its restarts, when it keeps them — and reserves it,
// before the memory is taken: every way a session grows (data edits, undo
// and redo of them) asks here first.
func (s *session) grow(c admit.Config, n, q, d int) error {
	e := admit.EstimateIn(c, n, q, d, s.restarts.Count(), view.AnalyzedRows(s.view, s.data.Set))
	if err := admit.CheckBudget(e, s.srv.limits); err != nil {
		return err
	}
	return s.srv.reserve(s, e.Bytes)
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
