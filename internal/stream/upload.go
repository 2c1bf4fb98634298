package stream

import (
	"fmt"
	"slices"
	"time"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/view"
	"dgpviz/internal/views"

	"gonum.org/v1/gonum/mat"
)

// Loading a model file or a data set into the page. POST /model (web)
// parses a model file — what "Save model" and `viz fit` write — and
// ParkModel turns it into a parked session (resume.go) with the model's
// own data as a private data set; POST /data parses a CSV and ParkData
// parks a session on it. The page then reconnects with the returned token:
// it carries on from the loaded model exactly as it was saved, or fits the
// uploaded data.

// ModelReadOptions are the server's limits for reading an uploaded model
// file (engine.ReadModelWith): a file beyond them is refused while it is
// read, before it takes the memory, and what it may take is bounded by the
// memory budget of one session.
func (s *Server) ModelReadOptions() engine.ReadOptions {
	l := s.limits
	return engine.ReadOptions{MaxRows: l.MaxRows, MaxLayers: l.MaxLayers, MaxWidth: l.MaxWidth, MaxInducing: l.MaxInducing,
		Budget: func(bytes int64) error {
			if l.SessionMemory > 0 && bytes > l.SessionMemory {
				return errorf("the model file needs more memory than the limit of %d MiB for a session", l.SessionMemory>>20)
			}
			return nil
		}}
}

// ParkModel checks mf against the server's limits and budgets and parks a
// session that starts from it, returning the token that resumes it
// (within the resume grace period). Its data set is private to that session.
func (s *Server) ParkModel(mf *engine.ModelFile) (string, error) {
	m := mf.Model
	if err := m.Validate(); err != nil {
		return "", errorf("the model file is not a valid model: %w", err)
	}
	n, q := m.X.Dims()
	_, dy := m.Y.Dims()
	hidden := make([]int, 0, len(m.Layers)-1)
	inducing := 0
	for i, l := range m.Layers {
		mz, _, d := l.Dims()
		inducing = max(inducing, mz)
		if i+1 < len(m.Layers) {
			hidden = append(hidden, d)
		}
	}
	l := s.limits
	switch {
	case n > l.MaxRows:
		return "", errorf("the model's data has %d rows, more than the limit %d", n, l.MaxRows)
	case n < 2:
		return "", errorf("the model's data has %d rows; at least 2 are needed", n)
	case len(m.Layers) > l.MaxLayers:
		return "", errorf("the model has %d layers, more than the limit %d", len(m.Layers), l.MaxLayers)
	case inducing > l.MaxInducing:
		return "", errorf("the model has %d inducing points in a layer, more than the limit %d", inducing, l.MaxInducing)
	}
	for i, w := range hidden {
		if w > l.MaxWidth {
			return "", errorf("the model's hidden layer %d has width %d, more than the limit %d", i+1, w, l.MaxWidth)
		}
	}
	nx, ny := mf.NormX, mf.NormY
	if nx.Mean == nil {
		nx = identity(q)
	}
	if ny.Mean == nil {
		ny = identity(dy)
	}
	if len(nx.Mean) != q || len(ny.Mean) != dy {
		return "", errorf("the model file's normalization has %d and %d columns, its data %d and %d", len(nx.Mean), len(ny.Mean), q, dy)
	}
	ds := &dataset.Dataset{
		Name:        "model-" + newResumeToken()[:12],
		Description: fmt.Sprintf("the data of a loaded model file (%d rows, %d → %d)", n, q, dy),
		X:           nx.UndoMean(m.X), Y: ny.UndoMean(m.Y),
		InputNames: columnNames("x", q), OutputNames: columnNames("y", dy),
	}
	cfg := s.def
	cfg.Dataset, cfg.Hidden, cfg.Inducing, cfg.Play = ds.Name, hidden, inducing, false
	cfg.Frozen = slices.Clone(cfg.Frozen)
	if err := checkBudget(cfg, l, n, q, dy); err != nil {
		return "", err
	}
	p := &parked{cfg: cfg, model: m.Clone(), restart: -1,
		data: &view.Data{ID: 1, Set: ds, NormX: nx, NormY: ny, X: mat.DenseCopyOf(m.X), Y: mat.DenseCopyOf(m.Y)}}
	return s.parkNew(p, ds, EstimateConfig(cfg, n, q, dy).Bytes)
}

// ParkData parks a session on an uploaded data set (private to it) with
// its view's preset or the server's default architecture, and returns the
// token that resumes it: the page reconnects and fits its own data.
func (s *Server) ParkData(ds *dataset.Dataset) (string, error) {
	l := s.limits
	n, q := ds.X.Dims()
	_, dy := ds.Y.Dims()
	switch {
	case n > l.MaxRows:
		return "", errorf("the data has %d rows, more than the limit %d", n, l.MaxRows)
	case n < 2:
		return "", errorf("the data has %d rows; at least 2 are needed", n)
	}
	ds.Name = "data-" + newResumeToken()[:12]
	// The view the data's shape chooses, with its preset when it has one;
	// the fit starts as soon as the page opens, as the demo's does.
	cfg := presetConfig(s.def, views.For(ds, nil), s.def, l)
	cfg.Dataset = ds.Name
	cfg.Frozen = slices.Clone(cfg.Frozen)
	if err := checkBudget(cfg, l, n, q, dy); err != nil {
		return "", err
	}
	// No model yet: the resuming session builds one (adopt).
	return s.parkNew(&parked{cfg: cfg, restart: -1}, ds, EstimateConfig(cfg, n, q, dy).Bytes)
}

// parkNew parks p, a session that has not run yet, with its private data
// set ds and a reservation of bytes, for the resume grace period.
func (s *Server) parkNew(p *parked, ds *dataset.Dataset, bytes int64) (string, error) {
	p.owner = &session{} // holds the reservation until a page resumes it
	if err := s.reserve(p.owner, bytes); err != nil {
		return "", err
	}
	p.private = ds.Name
	s.cat.addPrivate(ds)
	token := newResumeToken()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		delete(s.reserved, p.owner)
		s.cat.removePrivate(ds.Name)
		return "", errorf("the server is shutting down")
	}
	p.timer = time.AfterFunc(s.grace, func() { s.expire(token, p) })
	s.parked[token] = p
	return token, nil
}

// identity is the Normalizer that leaves q columns as they are.
func identity(q int) dataset.Normalizer {
	n := dataset.Normalizer{Mean: make([]float64, q), Scale: make([]float64, q)}
	for j := range n.Scale {
		n.Scale[j] = 1
	}
	return n
}

func columnNames(prefix string, k int) []string {
	out := make([]string, k)
	for j := range out {
		out[j] = fmt.Sprintf("%s%d", prefix, j+1)
	}
	return out
}
