package stream

import (
	"cmp"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/internal/linalg"
	"dgpviz/internal/view"
	"dgpviz/internal/wire"

	"gonum.org/v1/gonum/mat"
)

type normFrame struct {
	Mean  []wire.Num `json:"mean"`
	Scale []wire.Num `json:"scale"`
}

// setupHeader is the "setup" message: the data set (in the model's
// normalised units) and the normalisation, sent when a session starts and
// whenever its data change (data_id changes), with the view's section.
type setupHeader struct {
	V           int          `json:"v"`
	Type        string       `json:"type"`
	DataID      int          `json:"data_id"`
	Name        string       `json:"name"`
	Description string       `json:"description"`
	N           int          `json:"n"`
	NRows       int          `json:"n_rows,omitempty"` // the data's training rows when x and y carry a sample of them (view.RowSampler)
	Q           int          `json:"q"`
	D           int          `json:"d"`
	InputNames  []string     `json:"input_names"`
	OutputNames []string     `json:"output_names"`
	InputUnit   string       `json:"input_unit,omitempty"`
	OutputUnit  string       `json:"output_unit,omitempty"`
	RowName     string       `json:"row_name"` // what one row is called: "row", or the data's word ("scan", "frame")
	X           wire.Ref     `json:"x"`
	Y           wire.Ref     `json:"y"`
	NormX       normFrame    `json:"norm_x"`
	NormY       normFrame    `json:"norm_y"`
	Edited      bool         `json:"edited"`             // points added, moved or removed in this session
	Warnings    []string     `json:"warnings,omitempty"` // what will make a fit degenerate (dataset.Warnings)
	Config      admit.Config `json:"config"`
	// View is the view's own section; its "kind" names the view.
	View     any            `json:"view"`
	Sections []wire.Section `json:"sections"`
}

func (h *setupHeader) SetSections(s []wire.Section) { h.Sections = s }

// exactSetupValues is the size above which the setup's data are sent as
// 16-bit quantised values rather than float32: 1965 images of 560 grey
// levels take 2.2 MB rather than 4.4, and a grey level needs 8 bits.
const exactSetupValues = 1 << 18

func setupMessage(d *view.Data, v view.View, cfg admit.Config) ([]byte, error) {
	ds := d.Set
	n, q, dd := d.Dims()
	h := &setupHeader{
		V: ProtocolVersion, Type: "setup", DataID: d.ID, Name: ds.Name, Description: ds.Description,
		N: n, Q: q, D: dd, InputNames: ds.InputNames, OutputNames: ds.OutputNames, InputUnit: ds.InputUnit, OutputUnit: ds.OutputUnit, RowName: cmp.Or(ds.RowName, "row"),
		NormX: normFrame{wire.Nums(d.NormX.Mean), wire.Nums(d.NormX.Scale)}, NormY: normFrame{wire.Nums(d.NormY.Mean), wire.Nums(d.NormY.Scale)},
		Edited: d.Edited, Config: cfg,
		Warnings: dataset.Warnings(&dataset.Dataset{Name: cmp.Or(ds.Title, ds.Name), X: d.X, Y: d.Y, InputNames: ds.InputNames, OutputNames: ds.OutputNames}),
	}
	x, y := d.X, d.Y
	if rs, ok := v.(view.RowSampler); ok {
		if rows := rs.SampledRows(d); rows != nil {
			x, y = linalg.Rows(d.X, rows), linalg.Rows(d.Y, rows)
			h.N, h.NRows = len(rows), n
			n = len(rows)
		}
	}
	e := wire.Encoder{ForceF32: n*(q+dd) <= exactSetupValues}
	h.X = e.Arr(view.DenseData(x))
	if mat.Equal(x, y) { // an autoencoder's outputs are its inputs: one section serves both
		h.Y = h.X
	} else {
		h.Y = e.Arr(view.DenseData(y))
	}
	h.View = v.Setup(&e, d)
	return e.Finish(h)
}
