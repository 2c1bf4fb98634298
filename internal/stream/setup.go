package stream

import (
	"dgpviz/internal/dataset"

	"gonum.org/v1/gonum/mat"
)

type normFrame struct {
	Mean  []num `json:"mean"`
	Scale []num `json:"scale"`
}

// setupHeader is the "setup" message: the data set (in the model's
// normalised units) and the normalisation, sent when a session starts and
// whenever its data set changes (data_id changes).
type setupHeader struct {
	V           int       `json:"v"`
	Type        string    `json:"type"`
	DataID      int       `json:"data_id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	N           int       `json:"n"`
	Q           int       `json:"q"`
	D           int       `json:"d"`
	InputNames  []string  `json:"input_names"`
	OutputNames []string  `json:"output_names"`
	X           Ref       `json:"x"`
	Y           Ref       `json:"y"`
	NormX       normFrame `json:"norm_x"`
	NormY       normFrame `json:"norm_y"`
	Edited      bool      `json:"edited"`             // points added, moved or removed in this session
	Warnings    []string  `json:"warnings,omitempty"` // what will make a fit degenerate (dataset.Warnings)
	Config      Config    `json:"config"`
	Robot       *robotSet `json:"robot,omitempty"`
	Frey        *freySet  `json:"frey,omitempty"`
	Sections    []section `json:"sections"`
}

func (h *setupHeader) setSections(s []section) { h.Sections = s }

// data is a session's data set in model units. It is never changed once
// made: an edit of the data points makes a new one (edits.go), so undo
// states and snapshots can share it.
type data struct {
	id     int
	ds     *dataset.Dataset
	nx, ny dataset.Normalizer // fixed for the session, so that edits move nothing else
	x, y   *mat.Dense         // the working data, normalised: ds's, or edited
	edited bool               // x, y are not ds's
	robot  *robotInfo         // robot WiFi data (robot.go), else nil
	frey   *freyInfo          // the Frey faces (frey.go), else nil
}

func (d *data) setup(cfg Config) ([]byte, error) {
	x, y := d.x, d.y
	n, q := x.Dims()
	_, dd := y.Dims()
	h := &setupHeader{
		V: ProtocolVersion, Type: "setup", DataID: d.id, Name: d.ds.Name, Description: d.ds.Description,
		N: n, Q: q, D: dd, InputNames: d.ds.InputNames, OutputNames: d.ds.OutputNames,
		NormX: normFrame{nums(d.nx.Mean), nums(d.nx.Scale)}, NormY: normFrame{nums(d.ny.Mean), nums(d.ny.Scale)},
		Edited: d.edited, Config: cfg,
		Warnings: dataset.Warnings(&dataset.Dataset{Name: d.ds.Name, X: x, Y: y, InputNames: d.ds.InputNames, OutputNames: d.ds.OutputNames}),
	}
	if d.frey != nil {
		h.Warnings = freyWarnings(h.Warnings)
	}
	e := encoder{forceF32: true}
	if d.frey != nil {
		// 1965 frames of 560 grey levels: 16-bit quantised (2.2 MB rather
		// than 4.4), and y is x (an autoencoder), so one section serves both.
		e.forceF32 = false
		h.X = e.arr(denseData(x))
		if mat.Equal(x, y) {
			h.Y = h.X
		} else {
			h.Y = e.arr(denseData(y))
		}
		h.Frey = d.frey.setup()
	} else {
		h.X, h.Y = e.arr(denseData(x)), e.arr(denseData(y))
	}
	if d.robot != nil {
		h.Robot = d.robot.setup(&e, d.ny)
	}
	return e.finish(h)
}
