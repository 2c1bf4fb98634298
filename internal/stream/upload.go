package stream

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/allviews"
	"dgpviz/internal/dataset"
	"dgpviz/internal/modelfile"
	"dgpviz/internal/view"

	"gonum.org/v1/gonum/mat"
)

// Loading a model file or a data set into the page. POST /model (web)
// parses a model file — what "Save model" and `viz fit` write — and
// ParkModel turns it into a parked session (resume.go) with the model's
// own data as a private data set; POST /data parses a CSV and ParkData
// parks a session on it. The page then reconnects with the returned token:
// it carries on from the loaded model exactly as it was saved, or fits the
// uploaded data.

// Parked state a client makes — uploads (POST /model, POST /data) and
// forks of a shared session — is rate-limited per client (ClientOf):
// parkBurst at once, then one every parkEvery; a client keeps at most
// maxParkedPerClient pieces of parked state (its oldest goes first); and
// all parked state is let go before a page that is here is refused for
// memory (budget.go). An upload is read with the server's limits, its
// memory reserved in the server's budget as it is read; one upload per
// client is read at a time.
const (
	parkBurst          = 4
	parkEvery          = 15 * time.Second
	maxParkedPerClient = 8
)

// Upload is one upload being read: its memory is reserved in the server's
// budget until End.
type Upload struct {
	s      *Server
	client string
	owner  *session // the reservation's key (budget.go)
	ended  bool
}

// BeginUpload starts reading an upload of client: it spends one of the
// client's parked-state allowances and reserves bytes of the server's
// memory budget for reading (what the reader holds is charged as it
// grows, Upload.ModelReadOptions). Errors: admit.ErrBusy (no memory now) or a
// refusal for people that says when to try again (ErrTooOften).
func (s *Server) BeginUpload(client string, bytes int64) (*Upload, error) {
	if err := s.takePark(client); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.uploading[client] {
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: an upload from your address is still being read; send the next when it is done", ErrTooOften)
	}
	s.uploading[client] = true
	s.mu.Unlock()
	u := &Upload{s: s, client: client, owner: &session{client: client}}
	if err := s.reserve(u.owner, bytes); err != nil {
		u.End()
		return nil, err
	}
	return u, nil
}

// End ends the upload's reservation (once).
func (u *Upload) End() {
	if u.ended {
		return
	}
	u.ended = true
	u.s.release(u.owner)
	u.s.mu.Lock()
	delete(u.s.uploading, u.client)
	u.s.mu.Unlock()
}

// ModelReadOptions are the server's limits for reading an uploaded model
// file (modelfile.ReadWith): a file beyond them is refused while it is
// read, before it takes the memory; what it holds is bounded by the memory
// budget of one session and reserved in the server's as it grows.
func (u *Upload) ModelReadOptions() modelfile.ReadOptions {
	l := u.s.limits
	return modelfile.ReadOptions{MaxRows: l.MaxRows, MaxLayers: l.MaxLayers, MaxWidth: l.MaxWidth, MaxInducing: l.MaxInducing,
		Budget: func(bytes int64) error {
			if l.SessionMemory > 0 && bytes > l.SessionMemory {
				return fmt.Errorf("the model file needs more memory than a session may use (%s): the server's -session-memory raises the limit", admit.MiB(l.SessionMemory))
			}
			return u.s.reserve(u.owner, bytes)
		}}
}

// ErrTooOften refuses parked state (an upload, a fork) of a client that
// asks faster than the limits allow (HTTP 429).
var ErrTooOften = errors.New("too many uploads and forks from your address")

// takePark spends one of client's parked-state allowances.
func (s *Server) takePark(client string) error {
	if ok, wait := s.parkRate.Take(client, time.Now()); !ok {
		return fmt.Errorf("%w: try again in %d s", ErrTooOften, int(wait.Seconds())+1)
	}
	return nil
}

// ParkModel checks mf against the server's limits and budgets and parks a
// session of client's that starts from it, returning the token that
// resumes it (within the resume grace period). Its data set is private to
// that session.
func (s *Server) ParkModel(client string, mf *modelfile.File) (string, error) {
	m := mf.Model
	if err := m.Validate(); err != nil {
		return "", fmt.Errorf("the model file is not a valid model: %w", err)
	}
	n, q := m.X.Dims()
	_, dy := m.Y.Dims()
	hidden, inducing := mf.Shape()
	l := s.limits
	if err := l.CheckModel(n, len(m.Layers), hidden, inducing); err != nil {
		return "", err
	}
	ds, nx, ny, err := mf.Originals("model-" + newResumeToken()[:12])
	if err != nil {
		return "", err
	}
	cfg := s.def
	cfg.Dataset, cfg.Hidden, cfg.Inducing, cfg.Play = ds.Name, hidden, inducing, false
	cfg.Frozen = slices.Clone(cfg.Frozen)
	e := admit.EstimateStarted(cfg, ds, n, q, dy)
	if err := admit.CheckBudget(e, l); err != nil {
		return "", err
	}
	p := &parked{cfg: cfg, model: m.Clone(), restart: -1,
		data: &view.Data{ID: 1, Set: ds, NormX: nx, NormY: ny, X: mat.DenseCopyOf(m.X), Y: mat.DenseCopyOf(m.Y)}}
	return s.parkNew(client, p, ds, e.Bytes)
}

// ParkData parks a session of client's on an uploaded data set (private
// to it) with its view's preset or the server's default architecture, and
// returns the token that resumes it: the page reconnects and fits its own
// data.
func (s *Server) ParkData(client string, ds *dataset.Dataset) (token, note string, err error) {
	l := s.limits
	n, _ := ds.X.Dims()
	switch {
	case n > l.MaxRows:
		return "", "", fmt.Errorf("the data has %d rows, more than the limit of %d rows (the server's %s raises it)", n, l.MaxRows, dataset.RowsFlag)
	case n < dataset.MinTrainRows:
		return "", "", fmt.Errorf("the data: %w", dataset.TooFewRows(n))
	}
	ds.Name = "data-" + newResumeToken()[:12]
	// The view the data's shape chooses, with its preset when it has one;
	// the fit starts as soon as the page opens, as the demo's does.
	v := allviews.For(ds, nil)
	cfg := admit.WithPreset(s.def, v, s.def, l)
	cfg.Dataset = ds.Name
	cfg.Frozen = slices.Clone(cfg.Frozen)
	cfg, e, note, err := admit.FitWithin(cfg, ds, l)
	if err != nil {
		return "", "", err
	}
	// No model yet: the resuming session builds one (adopt), reserving
	// what the build takes then.
	token, err = s.parkNew(client, &parked{cfg: cfg, restart: -1}, ds, e.Bytes)
	return token, note, err
}

// parkNew parks p, a session of client's that has not run yet, with its
// private data set ds (nil: none) and a reservation of bytes, for the
// resume grace period.
func (s *Server) parkNew(client string, p *parked, ds *dataset.Dataset, bytes int64) (string, error) {
	p.owner = &session{client: client} // holds the reservation until a page resumes it
	p.client, p.parkedAt = client, time.Now()
	if err := s.reserve(p.owner, bytes); err != nil {
		return "", err
	}
	if ds != nil {
		p.private = ds.Name
		s.cat.AddPrivate(ds)
	}
	token := newResumeToken()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		s.ledger.Forget(p.owner)
		if ds != nil {
			s.cat.RemovePrivate(ds.Name)
		}
		return "", fmt.Errorf("the server is shutting down")
	}
	s.addParked(token, p)
	return token, nil
}
