package shards

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"dgpviz/internal/dataset"

	"gonum.org/v1/gonum/mat"
)

// Data name a sharded fit's data as every worker reads them: a data file
// (a dataset.Load spec with an absolute path), its sha256, and how the
// fit normalised it. A worker that reads another file, or one of another
// shape, refuses to serve the fit.
type Data struct {
	Spec   string `json:"spec"`
	SHA256 string `json:"sha256"`
	// URL, when set, is where a worker downloads the file from (an http
	// or https URL) instead of reading Spec's path: into the folder
	// dataset.DataDir names, under shards/, kept by its sha256. Size is
	// the file's size in bytes, which the download must match.
	URL  string `json:"url,omitempty"`
	Size int64  `json:"size"`
	// Rows, Inputs and Outputs are the training data's shape.
	Rows    int `json:"rows"`
	Inputs  int `json:"inputs"`
	Outputs int `json:"outputs"`
	// NormX and NormY standardise the inputs and outputs as the fit did.
	NormX dataset.Normalizer `json:"norm_x"`
	NormY dataset.Normalizer `json:"norm_y"`
}

// DataOf describes ds, read from spec and normalised with nx and ny, for
// the workers of a sharded fit.
func DataOf(spec string, ds *dataset.Dataset, nx, ny dataset.Normalizer) (Data, error) {
	if ds.Path == "" {
		return Data{}, fmt.Errorf("the %s data are not a file's: the workers of a sharded fit read the data from a file", ds.Name)
	}
	abs, err := dataset.AbsSpec(spec)
	if err != nil {
		return Data{}, err
	}
	sum, err := dataset.FileSHA256(ds.Path)
	if err != nil {
		return Data{}, err
	}
	st, err := os.Stat(ds.Path)
	if err != nil {
		return Data{}, err
	}
	r, q := ds.X.Dims()
	_, d := ds.Y.Dims()
	return Data{Spec: abs, SHA256: sum, Size: st.Size(), Rows: r, Inputs: q, Outputs: d, NormX: nx, NormY: ny}, nil
}

// fetch downloads the data file from d.URL, unless a file of its sha256
// is there already, and returns the spec that reads it: Spec's scheme
// and extension, the downloaded file's path.
func (d Data) fetch(ctx context.Context) (string, error) {
	dir, err := dataset.DataDir()
	if err != nil {
		return "", err
	}
	scheme, path := dataset.SpecFile(d.Spec)
	name := d.SHA256 + filepath.Ext(path)
	r := dataset.Remote{Name: "the fit's data", Title: "the fit's data", Dir: "shards", File: name, URL: d.URL, SHA256: d.SHA256, Size: d.Size}
	local, err := (&dataset.Fetcher{Dir: dir}).Fetch(ctx, r)
	if err != nil {
		return "", err
	}
	if scheme != "" {
		return scheme + ":" + local, nil
	}
	return local, nil
}

// Load reads the data, checks that they are the fit's (their file's
// sha256, their shape) and normalises them as the fit did.
func (d Data) Load() (x, y *mat.Dense, err error) {
	spec := d.Spec
	if d.URL != "" {
		if spec, err = d.fetch(context.Background()); err != nil {
			return nil, nil, err
		}
	}
	ds, err := dataset.LoadWith(spec, dataset.LoadOptions{})
	if err != nil {
		return nil, nil, err
	}
	path := ds.Path
	if path == "" {
		return nil, nil, fmt.Errorf("the data %q are not a file's", d.Spec)
	}
	sum, err := dataset.FileSHA256(path)
	if err != nil {
		return nil, nil, err
	}
	if sum != d.SHA256 {
		return nil, nil, fmt.Errorf("%s on this worker is not the fit's data file (sha256 %s, the fit's %s)", path, sum, d.SHA256)
	}
	r, q := ds.X.Dims()
	_, o := ds.Y.Dims()
	if r != d.Rows || q != d.Inputs || o != d.Outputs {
		return nil, nil, fmt.Errorf("%s holds %d rows of %d inputs and %d outputs, the fit's %d, %d and %d", path, r, q, o, d.Rows, d.Inputs, d.Outputs)
	}
	if len(d.NormX.Mean) != q || len(d.NormX.Scale) != q || len(d.NormY.Mean) != o || len(d.NormY.Scale) != o {
		return nil, nil, errors.New("the fit's normalisation does not have the data's columns")
	}
	// In place, with Apply's arithmetic (as viz fit's normaliseData): the
	// originals are not needed, and a million rows are hundreds of
	// megabytes a copy.
	d.NormX.ApplyInPlace(ds.X)
	if ds.Y != ds.X { // an autoencoder's one matrix, standardised once
		d.NormY.ApplyInPlace(ds.Y)
	}
	return ds.X, ds.Y, nil
}

func (d Data) encode() []byte {
	b, _ := json.Marshal(d) // strings, ints and finite floats
	return append([]byte("DGPD"), b...)
}

// maxDataMessage bounds a data description: a path and two normalisers
// of at most engine.MaxDim columns.
const maxDataMessage = 1 << 20

func decodeData(b []byte) (Data, error) {
	var d Data
	if len(b) > maxDataMessage {
		return d, fmt.Errorf("a data description of %d bytes, more than %d", len(b), maxDataMessage)
	}
	if len(b) < 4 || string(b[:4]) != "DGPD" {
		return d, errors.New("not a data description")
	}
	if err := json.Unmarshal(b[4:], &d); err != nil {
		return d, fmt.Errorf("a malformed data description: %v", err)
	}
	if d.Spec == "" || len(d.SHA256) != 64 || d.Rows < 1 || d.Inputs < 1 || d.Outputs < 1 {
		return d, errors.New("a data description without its file, sha256 or shape")
	}
	if _, err := hex.DecodeString(d.SHA256); err != nil {
		return d, errors.New("a data description whose sha256 is not hexadecimal")
	}
	if d.URL != "" {
		if u, err := url.Parse(d.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || d.Size < 1 {
			return d, fmt.Errorf("a data description whose URL %q is not http or https, or without the file's size", d.URL)
		}
	}
	return d, nil
}
