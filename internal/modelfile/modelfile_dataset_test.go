package modelfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"dgpviz/internal/dataset"
	"dgpviz/internal/engine"

	"gonum.org/v1/gonum/mat"
)

// publicData is integerModel's data as a public data set would be loaded:
// the Frey faces' Remote (any of dataset.Remotes serves) as its source, the
// same raw values as inputs and outputs (an autoencoder).
func publicData(t *testing.T, m *engine.Model, nz dataset.Normalizer) *dataset.Dataset {
	t.Helper()
	r, ok := dataset.RemoteNamed("frey")
	if !ok {
		t.Fatal("no public data set frey")
	}
	raw := nz.UndoMean(m.X)
	// Round as the raw integers were: UndoMean is not exact.
	rows, cols := raw.Dims()
	for i := range rows {
		for j := range cols {
			raw.Set(i, j, math.Round(raw.At(i, j)))
		}
	}
	return &dataset.Dataset{Name: "frey", X: raw, Y: mat.DenseCopyOf(raw), Source: &r}
}

// TestModelFileDataSetReference: a model of a public data set's rows
// refers to the data set instead of holding the data, reads back bit for
// bit through ReadOptions.LoadDataSet, and says what is wrong when the data
// set is not the one referred to; data that are not the data set's are
// written out.
func TestModelFileDataSetReference(t *testing.T) {
	m, extra := integerModel(t)
	var nz dataset.Normalizer
	if err := json.Unmarshal(extra["normalization"], &struct {
		XMean  *[]float64 `json:"x_mean"`
		XScale *[]float64 `json:"x_scale"`
	}{&nz.Mean, &nz.Scale}); err != nil {
		t.Fatal(err)
	}
	src := publicData(t, m, nz)
	var buf bytes.Buffer
	if err := Write(&buf, &File{Model: m, Data: src, Extra: extra}); err != nil {
		t.Fatal(err)
	}
	file := buf.String()
	var doc struct{ Data struct{ X, Y arrayJSON } }
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	want := dataSetRef{Name: "frey", File: src.Source.File, SHA256: src.Source.SHA256, Columns: "inputs"}
	if doc.Data.X.DataSet == nil || *doc.Data.X.DataSet != want || doc.Data.X.Base64 != "" || doc.Data.Y.SameAs != "X" {
		t.Fatalf("data written as X %+v, Y %+v; want X a reference %+v and Y the same as X", doc.Data.X, doc.Data.Y, want)
	}
	var embedded bytes.Buffer
	Write(&embedded, &File{Model: m, Extra: extra})
	if buf.Len() >= embedded.Len() {
		t.Errorf("the file that refers to its data set is %d bytes, the one that holds its data %d", buf.Len(), embedded.Len())
	}

	loads := 0
	load := func(name string) (*dataset.Dataset, error) {
		loads++
		if name != "frey" {
			t.Errorf("loading %q, want frey", name)
		}
		return src, nil
	}
	mf, err := ReadWith(strings.NewReader(file), ReadOptions{LoadDataSet: load})
	if err != nil {
		t.Fatal(err)
	}
	sameModel(t, m, mf.Model)
	if mf.Data != src || loads != 1 {
		t.Errorf("source %p after %d loads, want %p after 1", mf.Data, loads, src)
	}
	// Written again, it still refers to the data set.
	var again bytes.Buffer
	if err := Write(&again, mf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(again.String(), `"data_set"`) {
		t.Error("a model read from a file that refers to its data set is written with its data")
	}

	// Data one ulp from the data set's are not its data: written out.
	m2, _ := integerModel(t)
	m2.X.Set(7, 1, math.Nextafter(m2.X.At(7, 1), 2))
	buf.Reset()
	Write(&buf, &File{Model: m2, Data: src, Extra: extra})
	doc.Data.X, doc.Data.Y = arrayJSON{}, arrayJSON{}
	json.Unmarshal(buf.Bytes(), &doc)
	if doc.Data.X.DataSet != nil || doc.Data.Y.DataSet == nil || doc.Data.Y.DataSet.Columns != "inputs" {
		t.Errorf("one value one ulp off: X written as %+v, Y as %+v; want X written out and Y a reference", doc.Data.X.DataSet, doc.Data.Y.DataSet)
	}
	mf, err = ReadWith(&buf, ReadOptions{LoadDataSet: load})
	if err != nil {
		t.Fatal(err)
	}
	sameModel(t, m2, mf.Model)

	// A data set that is not public (no Source) is never referred to.
	buf.Reset()
	private := *src
	private.Source = nil
	Write(&buf, &File{Model: m, Data: &private, Extra: extra})
	if strings.Contains(buf.String(), `"data_set"`) {
		t.Error("a data set without a public source is referred to")
	}

	other := *src
	other.Source = nil // loaded from a file with another checksum
	small := dataset.Dataset{Name: "frey", X: mat.NewDense(3, 4, nil), Y: mat.NewDense(3, 4, nil), Source: src.Source}
	for _, tc := range []struct {
		name, edit string // edit replaces the reference's text
		load       func(string) (*dataset.Dataset, error)
		want       string
	}{
		{"not on this machine", "", func(string) (*dataset.Dataset, error) {
			return nil, errors.New("the Frey faces data are not on this machine; get them with: go run ./cmd/viz data get frey")
		}, "data.X: the model's data are the Frey faces data set's; the Frey faces data are not on this machine; get them with: go run ./cmd/viz data get frey"},
		{"another file", "", func(string) (*dataset.Dataset, error) { return &other, nil },
			"data.X: the model's data are the Frey faces data set's, and the file on this machine is not that one (another checksum): get it again with: go run ./cmd/viz data get frey"},
		{"another shape", "", func(string) (*dataset.Dataset, error) { return &small, nil },
			"data.X: the Frey faces data set's inputs are 3 × 4, the file says 300 × 4"},
		{"unknown name", `"name": "mnist"`, load, `data.X.data_set: "mnist" is not a public data set dgpviz knows (robot, frey)`},
		{"another checksum", `"sha256": "00"`, load, `data.X.data_set: sha256 "00" is not the Frey faces data's`},
		{"columns", `"columns": "labels"`, load, `data.X.data_set.columns: "labels": want "inputs" or "outputs"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := file
			if tc.edit != "" {
				key, _, _ := strings.Cut(tc.edit, ":")
				start := strings.Index(f, key+": ")
				end := start + strings.IndexAny(f[start:], ",\n")
				f = f[:start] + tc.edit + f[end:]
			}
			_, err := ReadWith(strings.NewReader(f), ReadOptions{LoadDataSet: tc.load})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestModelFileDataSetPath: a reference records where the data set's file
// was when the model was fitted; the reader looks there first only when
// allowed (OpenDataPaths: a person's own files), so that a file from
// elsewhere cannot make a server open a path of its choosing.
func TestModelFileDataSetPath(t *testing.T) {
	m, extra := integerModel(t)
	var nz dataset.Normalizer
	if err := json.Unmarshal(extra["normalization"], &struct {
		XMean  *[]float64 `json:"x_mean"`
		XScale *[]float64 `json:"x_scale"`
	}{&nz.Mean, &nz.Scale}); err != nil {
		t.Fatal(err)
	}
	src := publicData(t, m, nz)
	gone := filepath.Join(t.TempDir(), "gone.mat")
	var buf bytes.Buffer
	if err := Write(&buf, &File{Model: m, Data: src, Extra: extra}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `"path"`) {
		t.Error("a reference records a path that the writer was not given")
	}
	buf.Reset()
	if err := Write(&buf, &File{Model: m, Data: src, DataPath: gone, Extra: extra}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"path": "`+gone+`"`) {
		t.Fatalf("the reference does not record the path %s", gone)
	}
	absent := func(string) (*dataset.Dataset, error) { return nil, errors.New("not in the cache") }
	for _, open := range []bool{false, true} {
		_, err := ReadWith(bytes.NewReader(buf.Bytes()), ReadOptions{LoadDataSet: absent, OpenDataPaths: open})
		if err == nil {
			t.Fatalf("OpenDataPaths %v: read without the data", open)
		}
		if looked := strings.Contains(err.Error(), gone+", where it was fitted, is not there"); looked != open {
			t.Errorf("OpenDataPaths %v: error %q", open, err)
		}
	}
	loaded, err := ReadWith(bytes.NewReader(buf.Bytes()), ReadOptions{LoadDataSet: func(string) (*dataset.Dataset, error) { return src, nil }, OpenDataPaths: true})
	if err != nil {
		t.Fatal(err)
	}
	sameModel(t, m, loaded.Model)
	if loaded.DataPath != gone {
		t.Errorf("DataPath %q read, want %q", loaded.DataPath, gone)
	}
}
