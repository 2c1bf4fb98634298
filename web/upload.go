package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/modelfile"
	"dgpviz/internal/stream"
)

// Uploader parks sessions that start from an uploaded model file or fit
// uploaded data; *stream.Server implements it. New mounts POST /model and
// POST /data when the Backend does.
type Uploader interface {
	// Client is who r comes from, for the per-client limits.
	Client(r *http.Request) string
	// BeginUpload starts reading an upload of client with bytes of the
	// server's memory reserved for it (admit.Lot.BeginUpload).
	BeginUpload(client string, bytes int64) (*admit.Upload, error)
	ParkModel(client string, mf *modelfile.File) (token string, err error)
	ParkData(client string, ds *dataset.Dataset) (token, note string, err error)
	Limits() admit.Limits
}

// The server uploads to: a change of either side's signatures fails the
// build, not the routes (handler.go registers them by a type assertion).
var _ Uploader = (*stream.Server)(nil)

// maxUploadBytes bounds a model file sent to POST /model at the default
// limits: a model at every limit (2,000 rows, six layers of 64 inducing
// points and width 8) is about 4 MB of JSON. uploadBytes raises it with
// the row limit.
const maxUploadBytes = 16 << 20

// uploadBytesPerRow is what an upload may grow by per row that the row
// limit allows beyond the default's 2,000: a CSV row of 560 grey levels
// (maxDataBytes / 2,000).
const uploadBytesPerRow = 8 << 10

// uploadBytes is the size limit of an upload under the limits l: base, or
// more when the server's row limit (-max-rows) allows more rows, so that
// raising that flag raises this limit too.
func uploadBytes(base int, l admit.Limits) int {
	return max(base, min(l.MaxRows, 1<<40/uploadBytesPerRow)*uploadBytesPerRow)
}

// modelUpload serves POST /model: the body is a model file (what "Save
// model" and `viz fit` write); the answer is {"resume": TOKEN}, with which
// the page reconnects (/ws?resume=TOKEN, within stream.DefaultResumeGrace) into a
// session that carries on from the loaded model. Bad files get 400 with the
// reason, files over the size limit 413.
type modelUpload struct {
	b   Uploader
	log *slog.Logger
}

func (h modelUpload) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	client := h.b.Client(r)
	up, err := h.b.BeginUpload(client, modelReadStart)
	if err != nil {
		refuseUpload(w, r, err)
		return
	}
	defer up.End()
	limit := uploadBytes(maxUploadBytes, h.b.Limits())
	r.Body = http.MaxBytesReader(w, r.Body, int64(limit))
	mf, err := modelfile.ReadWith(r.Body, up.ModelReadOptions())
	if err != nil {
		badUpload(w, err, "the model file", limit, "not a model file")
		return
	}
	up.End() // the parked session reserves what it holds
	token, err := h.b.ParkModel(client, mf)
	answerResume(w, r, h.log, "model loaded", token, "", err)
}

// What reading an upload reserves of the server's memory budget at first:
// a model file's reader charges what it holds as it grows
// (ReadOptions.Budget) beyond its buffers; a CSV's reader holds at most
// the row limit's numbers, and at the defaults (2,000 rows of at most 1,000
// columns) a 16 MiB body was measured at 67 MiB of peak RSS above the
// server's (docs/measurements.md, "Hardening").
const (
	modelReadStart = 1 << 20
	csvReadBytes   = 80 << 20
)

// refuseUpload answers an upload refused before it was read: 429 when its
// client sends them too often, 503 when the server has no memory for it
// now.
func refuseUpload(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, admit.ErrTooOften) {
		// A refusal is answered after a pause: a client that sends
		// uploads as fast as it is answered (the campaign's 810 in
		// 0.6 s) is slowed to one a second per connection.
		select {
		case <-time.After(tooOftenPause):
		case <-r.Context().Done():
		}
		w.Header().Set("Retry-After", "15")
		http.Error(w, err.Error(), http.StatusTooManyRequests)
		return
	}
	answerResume(w, nil, nil, "", "", "", err)
}

// tooOftenPause is how long a refusal for sending too often waits.
const tooOftenPause = time.Second

// badUpload answers an upload that could not be read: 413 past the size
// limit, else 400 with the reason.
func badUpload(w http.ResponseWriter, err error, what string, limit int, kind string) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		http.Error(w, fmt.Sprintf("%s is larger than %d MiB (the server's %s raises the limit)", what, limit>>20, dataset.RowsFlag), http.StatusRequestEntityTooLarge)
		return
	}
	http.Error(w, kind+": "+err.Error(), http.StatusBadRequest)
}

// answerResume answers a parked upload with its resume token, or with the
// reason it was refused: 503 when the server has no memory for it now,
// else 400.
func answerResume(w http.ResponseWriter, r *http.Request, log *slog.Logger, what, token, note string, err error) {
	if errors.Is(err, admit.ErrBusy) {
		w.Header().Set("Retry-After", "30")
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if errors.Is(err, admit.ErrTooOften) {
		w.Header().Set("Retry-After", "15")
		http.Error(w, err.Error(), http.StatusTooManyRequests)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	log.Info(what, "remote", r.RemoteAddr)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	reply := map[string]string{"resume": token}
	if note != "" {
		reply["note"] = note // what the server chose for the data (a smaller model)
	}
	json.NewEncoder(w).Encode(reply)
}

// maxDataBytes bounds a CSV sent to POST /data at the default limits:
// 2,000 rows (the default row limit) of 560 grey levels, such as the Frey
// faces; uploadBytes raises it with the row limit.
const maxDataBytes = 16 << 20

// dataUpload serves POST /data[?name=NAME][&shape=HxW]: the body is a CSV
// with a header row, read as `viz serve -data csv:PATH` reads one
// (dataset.CSVConventions); shape says that the outputs are the pixels of
// images. The answer is {"resume": TOKEN}, with which the page reconnects
// into a session fitting that data with its view's preset or the server's
// default architecture. Rows beyond the server's limit are refused as they
// are read. Bad files get 400 with the reason, too large ones 413.
type dataUpload struct {
	b   Uploader
	log *slog.Logger
}

func (h dataUpload) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	client := h.b.Client(r)
	up, err := h.b.BeginUpload(client, csvReadBytes)
	if err != nil {
		refuseUpload(w, r, err)
		return
	}
	defer up.End()
	limit := uploadBytes(maxDataBytes, h.b.Limits())
	r.Body = http.MaxBytesReader(w, r.Body, int64(limit))
	opt.MaxBytes = -1 // MaxBytesReader's limit, answered with 413
	ds, err := dataset.ReadCSV(lineLimit(r.Body, maxLineBytes), name, opt)
	if err != nil {
		badUpload(w, err, "the file", limit, "not a usable CSV")
		return
	}
	ds.Description = fmt.Sprintf("uploaded: %s", name)
	ds.Title = name
	up.End()
	token, note, err := h.b.ParkData(client, ds)
	answerResume(w, r, h.log, "data loaded", token, note, err)
}

// maxLineBytes bounds a line of an uploaded CSV: 1,000 columns of 17
// significant digits are 25 KB. A longer line (one huge field, a header
// of huge names) is refused as it is read, before the CSV reader buffers
// it several times over.
const maxLineBytes = 1 << 20

// lineLimit returns r that fails once a line (bytes between newlines) is
// longer than max.
func lineLimit(r io.Reader, max int) io.Reader { return &lineLimited{r: r, max: max} }

type lineLimited struct {
	r    io.Reader
	max  int
	run  int // bytes since the last newline
	line int // newlines so far
}

// errLongLine is the error of a line past maxLineBytes.
type errLongLine struct{ line, max int }

func (e errLongLine) Error() string {
	return fmt.Sprintf("line %d is longer than %d MiB", e.line, e.max>>20)
}

func (l *lineLimited) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for i, b := range p[:n] {
		if b == '\n' {
			l.line++
			l.run = 0
			continue
		}
		if l.run++; l.run > l.max {
			return i, errLongLine{l.line + 1, l.max}
		}
	}
	return n, err
}
