package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	"dgpviz/internal/modelfile"
	"dgpviz/internal/view"
)

// modelHandler serves GET /model.json?session=KEY: the live session's model
// as a model file (data normalised, with the normalisation, the data's
// units and image shape when known, the data set's name and the iteration), which `viz eval`, `viz predict` and `viz figure`
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
	mf := &modelfile.File{Model: fs.Model, NormX: fs.NormX, NormY: fs.NormY, Extra: map[string]json.RawMessage{"dataset": meta}}
	if fs.Data != nil {
		mf.Info = modelfile.InfoOf(fs.Data) // units, and an image's shape and range
		mf.Data = fs.Data                   // a public data set's file is referred to, not copied
	}
	var buf bytes.Buffer
	if err := modelfile.Write(&buf, mf); err != nil {
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
func liveFigureSession(w http.ResponseWriter, r *http.Request, b FigureBackend) (*view.Download, bool) {
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
