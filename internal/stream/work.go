package stream

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"dgpviz/internal/admit"
	"dgpviz/internal/engine"
	"dgpviz/internal/view"

	"gonum.org/v1/gonum/mat"
)

// viewSession is what a view's ops may use of a session (view.Session).
// Its methods run on the optimizer goroutine, during the op's Apply.
type viewSession struct{ s *session }

var _ view.Session = viewSession{}

func (v viewSession) Model() *engine.Model { return v.s.tr.Model() }
func (v viewSession) Data() *view.Data     { return v.s.data }
func (v viewSession) Arch() view.Arch      { return v.s.cfg.Arch() }
func (v viewSession) Iter() int            { return v.s.tr.Iter() }

// Edit makes m the live model as an undoable edit.
func (v viewSession) Edit(label string, m *engine.Model) error {
	s := v.s
	before := s.editState(label)
	if err := s.applyModel(m); err != nil {
		return err
	}
	s.pushHistory(before)
	return nil
}

// EditData makes x, y the working data as an undoable edit (edits.go).
func (v viewSession) EditData(label string, x, y *mat.Dense, edited bool, fit func(m *engine.Model, x, y *mat.Dense) (*engine.Model, error)) error {
	return v.s.editData(label, x, y, edited, fit)
}

func (v viewSession) Go(name string, work func(ctx context.Context, send func([]byte))) error {
	return v.s.work.start(v.s, name, work)
}

// Latest returns the latest publication's snapshot and a channel closed
// when a newer one is published.
func (v viewSession) Latest() (*view.Snapshot, <-chan struct{}) {
	s := v.s
	s.changedMu.Lock()
	defer s.changedMu.Unlock()
	var snap *view.Snapshot
	if p := s.latest.Load(); p != nil {
		snap = p.snap
	}
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return snap, s.changed
}

// errRunning refuses background work whose last run has not finished.
var errRunning = errors.New("the last one is still running")

// Client returns who r comes from, for the per-client limits
// (admit.RequestClient with the server's Options.TrustProxy).
func (s *Server) Client(r *http.Request) string { return admit.RequestClient(r, s.trustProxy) }

// workSet is a session's background work for its view, one run per name
// at a time. A new view (another data set) cancels its predecessor's.
type workSet struct {
	mu      sync.Mutex
	running map[string]bool
	ctx     context.Context // the current view's work; nil until the first start
	cancel  context.CancelFunc
}

// start runs work in the background under s; its messages go to the
// writer through s.viewOut, latest wins per name.
func (w *workSet) start(s *session, name string, work func(ctx context.Context, send func([]byte))) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running[name] {
		return errRunning
	}
	j, err := s.srv.pool.Admit(s.client) // a job of the server's pool
	if err != nil {
		return err
	}
	if w.running == nil {
		w.running = map[string]bool{}
	}
	if w.ctx == nil {
		w.ctx, w.cancel = context.WithCancel(s.ctx)
	}
	w.running[name] = true
	ctx := j.Context(w.ctx)
	go func() {
		defer func() {
			j.End()
			w.mu.Lock()
			delete(w.running, name)
			w.mu.Unlock()
		}()
		defer s.recoverPanic(name)
		work(ctx, func(b []byte) { s.viewOut.Put(name, b) })
	}()
	return nil
}

// stop cancels the running work: the view it belongs to has gone.
func (w *workSet) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel != nil {
		w.cancel()
	}
	w.ctx, w.cancel = nil, nil
}
