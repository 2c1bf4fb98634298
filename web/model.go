package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"dgpviz/internal/engine"
	"dgpviz/internal/stream"
)

// modelHandler serves GET /model.json?session=KEY: the live session's model
// as a model file (data normalised, with the normalisation, the data set's
// name and the iteration), which `viz eval`, `viz predict` and `viz figure`
// read. A page can save its work this way.
type modelHandler struct {
	b   FigureBackend
	log *slog.Logger
}

func (h modelHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fs, ok := liveFigureSession(w, r, h.b)
	if !ok {
		return
	}
	meta, _ := json.Marshal(map[string]any{"name": fs.Dataset, "saved_at_iteration": fs.Iter})
	extra := map[string]json.RawMessage{
		"normalization": engine.NormalizationJSON(fs.NormX, fs.NormY),
		"dataset":       meta,
	}
	var buf bytes.Buffer
	if err := engine.WriteModel(&buf, fs.Model, extra); err != nil {
		h.log.Error("web: model download", "err", err)
		http.Error(w, "could not write the model: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", fmt.Sprintf("dgpviz-model-%s-iter%d.json", fs.Dataset, fs.Iter)))
	w.Write(buf.Bytes())
}

// liveFigureSession finds the session named by the request's session
// parameter (its hello's figure_key), answering 400 or 404 itself when
// there is none.
func liveFigureSession(w http.ResponseWriter, r *http.Request, b FigureBackend) (*stream.FigureSession, bool) {
	key := r.URL.Query().Get("session")
	if key == "" {
		http.Error(w, "missing parameter session (the figure_key of the page's session)", http.StatusBadRequest)
		return nil, false
	}
	fs, ok := b.FigureSession(key)
	if !ok {
		http.Error(w, "no such session (it may have ended; reload the page)", http.StatusNotFound)
		return nil, false
	}
	return fs, true
}

// ModelLoader parks a session that starts from an uploaded model file;
// *stream.Server implements it. New mounts POST /model when the Backend
// does.
type ModelLoader interface {
	ParkModel(mf *engine.ModelFile) (token string, err error)
}

// maxUploadBytes bounds a model file sent to POST /model: a model at every
// limit (2,000 rows, six layers of 64 inducing points and width 8) is
// about 4 MB of JSON.
const maxUploadBytes = 16 << 20

// modelUpload serves POST /model: the body is a model file (what "Save
// model" and `viz fit` write); the answer is {"resume": TOKEN}, with which
// the page reconnects (/ws?resume=TOKEN, within stream.ResumeGrace) into a
// session that carries on from the loaded model. Bad files get 400 with the
// reason, files over the size limit 413.
type modelUpload struct {
	b   ModelLoader
	log *slog.Logger
}

func (h modelUpload) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxUploadBytes)
	mf, err := engine.ReadModel(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("the model file is larger than %d MiB", maxUploadBytes>>20), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "not a model file: "+stream.ForPeople(err.Error()), http.StatusBadRequest)
		return
	}
	token, err := h.b.ParkModel(mf)
	if err != nil {
		http.Error(w, stream.ForPeople(err.Error()), http.StatusBadRequest)
		return
	}
	h.log.Info("model loaded", "remote", r.RemoteAddr)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]string{"resume": token})
}
