package dataset

import (
	"archive/zip"
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
)

// writeNPYHeader writes the preamble and header of a version 1.0 .npy
// array of type descr (a Python literal: "'<f8'" or a list of fields) in
// C order of shape, padded so that the data start at a multiple of 64
// bytes, as numpy writes it.
func writeNPYHeader(w io.Writer, descr string, shape ...int) error {
	dims := make([]string, len(shape))
	for i, n := range shape {
		dims[i] = fmt.Sprint(n)
	}
	sh := strings.Join(dims, ", ")
	if len(shape) == 1 {
		sh += ","
	}
	h := fmt.Sprintf("{'descr': %s, 'fortran_order': False, 'shape': (%s), }", descr, sh)
	pad := 64 - (10+len(h)+1)%64
	if pad == 64 {
		pad = 0
	}
	h += strings.Repeat(" ", pad) + "\n"
	if len(h) > math.MaxUint16 {
		return fmt.Errorf("a .npy header of %d bytes, more than version 1.0 holds", len(h))
	}
	pre := []byte(npyMagic + "\x01\x00")
	pre = binary.LittleEndian.AppendUint16(pre, uint16(len(h)))
	if _, err := w.Write(pre); err != nil {
		return err
	}
	_, err := io.WriteString(w, h)
	return err
}

// appendU5 appends s as NumPy's '<U5': five little-endian UTF-32 code
// points, padded with zeros.
func appendU5(b []byte, s string) []byte {
	n := 0
	for _, r := range s {
		if n == 5 {
			break
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(r))
		n++
	}
	for ; n < 5; n++ {
		b = append(b, 0, 0, 0, 0)
	}
	return b
}

func splitText(test bool) string {
	if test {
		return "test"
	}
	return "train"
}

// WriteWalkNPY writes rows rows of the walk of seed as a .npy structured
// array whose fields are WalkColumns (float64 numbers; split as '<U5'),
// one row at a time.
func WriteWalkNPY(out io.Writer, rows int, seed uint64) error {
	cols := WalkColumns()
	fields := make([]string, len(cols))
	for j, c := range cols {
		fields[j] = fmt.Sprintf("('%s', '<f8')", c)
	}
	fields[len(cols)-1] = "('split', '<U5')"
	bw := bufio.NewWriterSize(out, 64<<10)
	if err := writeNPYHeader(bw, "["+strings.Join(fields, ", ")+"]", rows); err != nil {
		return err
	}
	w := NewWalk(seed, rows)
	var rec []byte
	for range rows {
		r := w.Next()
		rec = binary.LittleEndian.AppendUint64(rec[:0], math.Float64bits(r.Time))
		for _, v := range r.Signal {
			rec = binary.LittleEndian.AppendUint64(rec, math.Float64bits(v))
		}
		rec = binary.LittleEndian.AppendUint64(rec, math.Float64bits(r.X))
		rec = binary.LittleEndian.AppendUint64(rec, math.Float64bits(r.Y))
		rec = appendU5(rec, splitText(r.Test))
		if _, err := bw.Write(rec); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteWalkNPZ writes rows rows of the walk of seed as a .npz file, as
// numpy.savez does (uncompressed), with the arrays x_time (N), y (N×30),
// truth (N×2) and split (N, '<U5'): read back, the columns x_time,
// y1…y30, truth1, truth2 and split. Each array is written from its own
// pass over the walk, so that nothing grows with rows.
func WriteWalkNPZ(out io.Writer, rows int, seed uint64) error {
	zw := zip.NewWriter(out)
	arrays := []struct {
		name  string
		descr string
		shape []int
		row   func(b []byte, r *WalkRow) []byte
	}{
		{"x_time", "'<f8'", []int{rows}, func(b []byte, r *WalkRow) []byte {
			return binary.LittleEndian.AppendUint64(b, math.Float64bits(r.Time))
		}},
		{"y", "'<f8'", []int{rows, WalkBeacons}, func(b []byte, r *WalkRow) []byte {
			for _, v := range r.Signal {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
			}
			return b
		}},
		{"truth", "'<f8'", []int{rows, 2}, func(b []byte, r *WalkRow) []byte {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.X))
			return binary.LittleEndian.AppendUint64(b, math.Float64bits(r.Y))
		}},
		{"split", "'<U5'", []int{rows}, func(b []byte, r *WalkRow) []byte { return appendU5(b, splitText(r.Test)) }},
	}
	for _, a := range arrays {
		f, err := zw.CreateHeader(&zip.FileHeader{Name: a.name + ".npy", Method: zip.Store})
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(f, 64<<10)
		if err := writeNPYHeader(bw, a.descr, a.shape...); err != nil {
			return err
		}
		w := NewWalk(seed, rows)
		var rec []byte
		for range rows {
			r := w.Next()
			rec = a.row(rec[:0], &r)
			if _, err := bw.Write(rec); err != nil {
				return err
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	return zw.Close()
}
