package stream

import (
	"slices"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/train"
	"dgpviz/internal/view"
)

// FigureSession is what a download needs from a session: its latest
// published model (a private copy: safe to read while the optimizer
// runs) with its data, and its view (whose figures the download may
// draw as the page shows them).
type FigureSession struct {
	Model        *engine.Model
	Snapshot     *view.Snapshot
	View         view.View
	Data         *dataset.Dataset // the session's data set (shared, read-only)
	Iter         int
	Dataset      string
	NormX, NormY dataset.Normalizer // the session's normalisation (private copies)
	// History is the bound over iterations (a copy), Views the latest of
	// the view's messages by type (the depth comparison's "compare"): the
	// bound panel's and the depth panel's downloads draw them.
	History *train.History
	Views   map[string][]byte
}

// FigureSession returns the state of the session whose hello carried
// figure_key key; ok is false when there is none.
func (s *Server) FigureSession(key string) (fs *FigureSession, ok bool) {
	if key == "" {
		return nil, false
	}
	s.mu.Lock()
	var p *publication
	var hub *Hub
	for ss := range s.sessions {
		if ss.downloadKey == key {
			p, hub = ss.latest.Load(), ss.hub
			break
		}
	}
	s.mu.Unlock()
	if p == nil {
		return nil, false
	}
	d := p.snap.Data
	fs = &FigureSession{Model: p.snap.Model, Snapshot: p.snap, View: p.view, Iter: p.snap.Iter,
		Dataset: d.Set.Name, Data: d.Set,
		NormX: dataset.Normalizer{Mean: slices.Clone(d.NormX.Mean), Scale: slices.Clone(d.NormX.Scale)},
		NormY: dataset.Normalizer{Mean: slices.Clone(d.NormY.Mean), Scale: slices.Clone(d.NormY.Scale)}}
	if hub != nil {
		fs.History, fs.Views = hub.figureData(d.ID)
	}
	return fs, true
}
