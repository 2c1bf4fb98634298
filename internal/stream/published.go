package stream

import (
	"slices"

	"dgpviz/internal/dataset"
	"dgpviz/internal/share"
	"dgpviz/internal/view"
)

// FigureSession returns what a download draws of the session whose hello
// carried figure_key key: its latest published model (a private copy:
// safe to read while the optimizer runs) with its data, its view (whose
// figures the download draws as the page shows them), and the hub's bound
// history and view messages; ok is false when there is none.
func (s *Server) FigureSession(key string) (fs *view.Download, ok bool) {
	if key == "" {
		return nil, false
	}
	s.mu.Lock()
	var p *publication
	var hub *share.Hub
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
	fs = &view.Download{Model: p.snap.Model, Snapshot: p.snap, View: p.view, Iter: p.snap.Iter,
		Dataset: d.Set.Name, Data: d.Set,
		NormX: dataset.Normalizer{Mean: slices.Clone(d.NormX.Mean), Scale: slices.Clone(d.NormX.Scale)},
		NormY: dataset.Normalizer{Mean: slices.Clone(d.NormY.Mean), Scale: slices.Clone(d.NormY.Scale)}}
	if hub != nil {
		fs.History, fs.Views = hub.FigureData(d.ID)
	}
	return fs, true
}
