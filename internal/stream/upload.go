package stream

import (
	"fmt"

	"dgpviz/internal/admit"
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

// ParkModel checks mf against the server's limits and budgets
// (admit.StartModel) and parks a session of client's that starts from it,
// returning the token that resumes it (within the resume grace period).
// Its data set is private to that session.
func (s *Server) ParkModel(client string, mf *modelfile.File) (string, error) {
	st, err := admit.StartModel(mf, "model-"+newResumeToken()[:12], s.def, s.limits)
	if err != nil {
		return "", err
	}
	m := mf.Model
	p := &parked{cfg: st.Config, model: m.Clone(), restart: -1,
		data: &view.Data{ID: 1, Set: st.Data, NormX: st.NormX, NormY: st.NormY, X: mat.DenseCopyOf(m.X), Y: mat.DenseCopyOf(m.Y)}}
	return s.parkNew(client, p, st.Data, st.Estimate.Bytes)
}

// ParkData parks a session of client's on an uploaded data set (private
// to it) with its view's preset or the server's default architecture
// (admit.StartData), and returns the token that resumes it: the page
// reconnects and fits its own data.
func (s *Server) ParkData(client string, ds *dataset.Dataset) (token, note string, err error) {
	st, err := admit.StartData(ds, "data-"+newResumeToken()[:12], s.def, s.limits)
	if err != nil {
		return "", "", err
	}
	// No model yet: the resuming session builds one (adopt), reserving
	// what the build takes then.
	token, err = s.parkNew(client, &parked{cfg: st.Config, restart: -1}, ds, st.Estimate.Bytes)
	return token, st.Note, err
}

// BeginUpload starts reading an upload of client (admit.Lot.BeginUpload).
func (s *Server) BeginUpload(client string, bytes int64) (*admit.Upload, error) {
	return s.lot.BeginUpload(client, bytes)
}

// parkNew parks p, a session of client's that has not run yet, with its
// private data set ds (nil: none) and a reservation of bytes, for the
// resume grace period.
func (s *Server) parkNew(client string, p *parked, ds *dataset.Dataset, bytes int64) (string, error) {
	owner := &session{client: client} // holds the reservation until a page resumes it
	if err := s.reserve(owner, bytes); err != nil {
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
		s.ledger.Forget(owner)
		if ds != nil {
			s.cat.RemovePrivate(ds.Name)
		}
		return "", fmt.Errorf("the server is shutting down")
	}
	s.lot.Add(token, owner, client, "an upload or a fork", p)
	return token, nil
}
