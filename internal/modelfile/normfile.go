package modelfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"dgpviz/internal/dataset"
)

// normalizationJSON is a model file's "normalization" object: how `viz fit`
// standardised the data the file holds (original = value·scale + mean,
// column by column). It is the one reader and writer of that object.
type normalizationJSON struct {
	Note   string    `json:"note,omitempty"`
	XMean  []float64 `json:"x_mean"`
	XScale []float64 `json:"x_scale"`
	YMean  []float64 `json:"y_mean"`
	YScale []float64 `json:"y_scale"`
}

const normalizationNote = "data.X and data.Y in this file are normalised: original = normalised·scale + mean, per column; viz predict undoes it"

// NormalizationJSON encodes the normalisers of a model file's data for
// its "normalization" field (see File.NormX).
func NormalizationJSON(nx, ny dataset.Normalizer) json.RawMessage {
	b, _ := json.Marshal(normalizationJSON{Note: normalizationNote, XMean: nx.Mean, XScale: nx.Scale, YMean: ny.Mean, YScale: ny.Scale})
	return b // cannot fail: slices of finite numbers
}

// identity returns the normaliser that changes nothing, for n columns.
func identity(n int) dataset.Normalizer {
	nz := dataset.Normalizer{Mean: make([]float64, n), Scale: make([]float64, n)}
	for i := range nz.Scale {
		nz.Scale[i] = 1
	}
	return nz
}

// readNormalizationJSON reads the normalization object from s; its
// vectors have at most maxCols entries.
func readNormalizationJSON(s *jsonScanner, maxCols int) (*normalizationJSON, error) {
	var nj normalizationJSON
	err := s.object(func(key string) error {
		var dst *[]float64
		switch key {
		case "x_mean":
			dst = &nj.XMean
		case "x_scale":
			dst = &nj.XScale
		case "y_mean":
			dst = &nj.YMean
		case "y_scale":
			dst = &nj.YScale
		default:
			return s.skip(0)
		}
		if null, err := s.null(); null || err != nil {
			return err
		}
		*dst = []float64{}
		return s.array(func(i int) error {
			if i >= maxCols {
				return fmt.Errorf("%s: more entries than the limit of %d columns", key, maxCols)
			}
			v, err := s.number()
			*dst = append(*dst, v)
			return err
		})
	})
	return &nj, err
}

// checkNormalization returns the normalisers nj describes (nil: the
// identity) for data of q input and d output columns. Missing arrays are
// the identity's; arrays of the wrong length, non-finite means and
// non-positive scales are errors.
func checkNormalization(nj *normalizationJSON, q, d int) (nx, ny dataset.Normalizer, err error) {
	nx, ny = identity(q), identity(d)
	if nj == nil {
		return nx, ny, nil
	}
	for _, f := range []struct {
		name  string
		v     []float64
		dst   *[]float64
		scale bool
	}{{"x_mean", nj.XMean, &nx.Mean, false}, {"x_scale", nj.XScale, &nx.Scale, true}, {"y_mean", nj.YMean, &ny.Mean, false}, {"y_scale", nj.YScale, &ny.Scale, true}} {
		if f.v == nil {
			continue
		}
		if len(f.v) != len(*f.dst) {
			return nx, ny, fmt.Errorf("normalization.%s has %d entries, the data have %d columns", f.name, len(f.v), len(*f.dst))
		}
		for i, x := range f.v {
			if math.IsNaN(x) || math.IsInf(x, 0) || (f.scale && !(x > 0)) {
				return nx, ny, fmt.Errorf("normalization.%s[%d] = %v is not a valid %s", f.name, i, x, map[bool]string{true: "scale", false: "mean"}[f.scale])
			}
		}
		*f.dst = f.v
	}
	return nx, ny, nil
}

// readNormalization decodes raw, a normalization field (absent or null:
// the identity), for data of q input and d output columns.
func readNormalization(raw json.RawMessage, q, d int) (nx, ny dataset.Normalizer, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return checkNormalization(nil, q, d)
	}
	s := newJSONScanner(bytes.NewReader(raw), int64(len(raw)))
	nj, err := readNormalizationJSON(s, max(q, d))
	if err == nil {
		err = s.atEnd()
	}
	if err != nil {
		return identity(q), identity(d), fmt.Errorf("normalization: %w", err)
	}
	return checkNormalization(nj, q, d)
}
