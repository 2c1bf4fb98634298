package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"
	"dgpviz/internal/stream"
)

// ModelLoader parks a session that starts from an uploaded model file;
// *stream.Server implements it. New mounts POST /model when the Backend
// does.
type ModelLoader interface {
	ParkModel(mf *engine.ModelFile) (token string, err error)
	// ModelReadOptions are the limits an uploaded file is read with.
	ModelReadOptions() engine.ReadOptions
}

// maxUploadBytes bounds a model file sent to POST /model: a model at every
// limit (2,000 rows, six layers of 64 inducing points and width 8) is
// about 4 MB of JSON.
const maxUploadBytes = 16 << 20

// modelUpload serves POST /model: the body is a model file (what "Save
// model" and `viz fit` write); the answer is {"resume": TOKEN}, with which
// the page reconnects (/ws?resume=TOKEN, within stream.DefaultResumeGrace) into a
// session that carries on from the loaded model. Bad files get 400 with the
// reason, files over the size limit 413.
type modelUpload struct {
	b   ModelLoader
	log *slog.Logger
}

func (h modelUpload) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxUploadBytes)
	mf, err := engine.ReadModelWith(r.Body, h.b.ModelReadOptions())
	if err != nil {
		badUpload(w, err, "the model file", maxUploadBytes, "not a model file")
		return
	}
	token, err := h.b.ParkModel(mf)
	answerResume(w, r, h.log, "model loaded", token, err)
}

// badUpload answers an upload that could not be read: 413 past the size
// limit, else 400 with the reason.
func badUpload(w http.ResponseWriter, err error, what string, limit int, kind string) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		http.Error(w, fmt.Sprintf("%s is larger than %d MiB", what, limit>>20), http.StatusRequestEntityTooLarge)
		return
	}
	http.Error(w, kind+": "+stream.ForPeople(err.Error()), http.StatusBadRequest)
}

// answerResume answers a parked upload with its resume token, or with the
// reason it was refused: 503 when the server has no memory for it now,
// else 400.
func answerResume(w http.ResponseWriter, r *http.Request, log *slog.Logger, what, token string, err error) {
	if errors.Is(err, stream.ErrBusy) {
		w.Header().Set("Retry-After", "30")
		http.Error(w, stream.ForPeople(err.Error()), http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		http.Error(w, stream.ForPeople(err.Error()), http.StatusBadRequest)
		return
	}
	log.Info(what, "remote", r.RemoteAddr)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]string{"resume": token})
}

// DataLoader parks a session on an uploaded data set; *stream.Server
// implements it. New mounts POST /data when the Backend does.
type DataLoader interface {
	ParkData(ds *dataset.Dataset) (token string, err error)
	Limits() stream.Limits
}

// maxDataBytes bounds a CSV sent to POST /data: 2,000 rows (the default
// row limit) of 560 grey levels, such as the Frey faces.
const maxDataBytes = 16 << 20

// dataUpload serves POST /data[?name=NAME][&shape=HxW]: the body is a CSV
// with a header row, read as `viz serve -data csv:PATH` reads one
// (dataset.CSVConventions); shape says that the outputs are the pixels of
// images. The answer is {"resume": TOKEN}, with which the page reconnects
// into a session fitting that data with its view's preset or the server's
// default architecture. Rows beyond the server's limit are refused as they
// are read. Bad files get 400 with the reason, too large ones 413.
type dataUpload struct {
	b   DataLoader
	log *slog.Logger
}

func (h dataUpload) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxDataBytes)
	name := strings.TrimSpace(r.URL.Query().Get("name"))
	if name == "" || len(name) > 80 {
		name = "your data"
	}
	opt := dataset.CSVOptions{MaxRows: h.b.Limits().MaxRows}
	if sh := r.URL.Query().Get("shape"); sh != "" {
		var err error
		if opt.Shape, err = dataset.ParseShape(sh); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	ds, err := dataset.ReadCSV(r.Body, name, opt)
	if err != nil {
		badUpload(w, err, "the file", maxDataBytes, "not a usable CSV")
		return
	}
	ds.Description = fmt.Sprintf("uploaded: %s", name)
	ds.Title = name
	token, err := h.b.ParkData(ds)
	answerResume(w, r, h.log, "data loaded", token, err)
}
