package dataset

import (
	"dgpviz/internal/wire"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// ParquetConventions describes, for people, how ReadParquet names the
// columns of an Apache Parquet file, which are then read by
// CSVConventions.
const ParquetConventions = `Parquet files follow the same column conventions: each top-level column is a column of that name (x_time, y_ap1, split, …); numbers may be doubles, floats, integers or booleans, text (split, label…) strings; a split may also hold 0 (train) and 1 (test). Nested, repeated and missing (null) values in inputs and outputs are refused.`

// LoadParquet reads the Apache Parquet file at path; see ReadParquet.
func LoadParquet(path string, opt CSVOptions) (*Dataset, error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readParquet(f, size, filepath.Base(path), "parquet "+path, opt)
}

// ReadParquet reads a regression data set from an Apache Parquet file
// (with github.com/parquet-go/parquet-go): its top-level columns, by name,
// read by the conventions of CSVConventions (ParquetConventions). The
// data set is named "parquet:" + name.
func ReadParquet(r io.ReaderAt, size int64, name string, opt CSVOptions) (*Dataset, error) {
	return readParquet(r, size, name, "parquet "+name, opt)
}

func readParquet(r io.ReaderAt, size int64, name, src string, opt CSVOptions) (ds *Dataset, err error) {
	if max := opt.maxBytes(); max >= 0 && size > max {
		return nil, sizeError(src, max)
	}
	// The library checks what it reads, but a malformed file is untrusted
	// input: should it panic on one, the reader says so instead.
	defer func() {
		if p := recover(); p != nil {
			ds, err = nil, fmt.Errorf("%s: not a readable Parquet file (%v)", src, p)
		}
	}()
	cols, err := readParquetColumns(r, size, opt.maxRows())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, openError(err))
	}
	return columnsDataset(cols, "parquet", name, "Parquet file", src, opt)
}

// readParquetColumns reads the top-level columns of a Parquet file,
// refusing more rows than maxRows (negative: no limit) before reading
// them.
func readParquetColumns(r io.ReaderAt, size int64, maxRows int) ([]column, error) {
	f, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("not a Parquet file: %s", strings.TrimPrefix(err.Error(), "parquet: "))
	}
	rows := f.NumRows()
	if rows < 0 || (maxRows >= 0 && rows > int64(maxRows)) {
		return nil, fmt.Errorf("%d data rows, more than the limit of %d rows (%s raises it)", rows, maxRows, RowsFlag)
	}
	leaves := f.Root().Columns()
	if len(leaves) > MaxColumns {
		return nil, fmt.Errorf("%d columns, more than the limit of %d columns", len(leaves), MaxColumns)
	}
	// Columns are sized at once for the file's rows unless it claims more
	// than 64 bytes of values per byte of file (compression rarely gives
	// more; a claim beyond it grows the arrays as the values arrive).
	size0 := min(rows, 1<<16)
	if rows*8 <= 64*size {
		size0 = rows
	}
	cols := make([]column, len(leaves))
	kinds := make([]parquet.Kind, len(leaves))
	for j, c := range leaves {
		if !c.Leaf() || c.Repeated() {
			return nil, fmt.Errorf("column %q is nested or repeated: want one value per row", wire.Truncate(c.Name(), 40))
		}
		cols[j].name = c.Name()
		kinds[j] = c.Type().Kind()
		switch kinds[j] {
		case parquet.Boolean, parquet.Int32, parquet.Int64, parquet.Float, parquet.Double:
			cols[j].num = make([]float64, 0, size0)
		case parquet.ByteArray:
			cols[j].text = make([]string, 0, size0)
		default:
			return nil, fmt.Errorf("column %q holds %v values: want numbers or strings", wire.Truncate(c.Name(), 40), kinds[j])
		}
	}
	buf := make([]parquet.Value, 4096)
	for _, rg := range f.RowGroups() {
		for j, cc := range rg.ColumnChunks() {
			if j >= len(cols) {
				return nil, errors.New("a row group with more columns than the schema")
			}
			if err := readParquetChunk(cc, &cols[j], buf, rows); err != nil {
				return nil, fmt.Errorf("column %q: %w", wire.Truncate(cols[j].name, 40), err)
			}
		}
	}
	for j := range cols {
		if int64(cols[j].len()) != rows {
			return nil, fmt.Errorf("column %q has %d values for %d rows", wire.Truncate(cols[j].name, 40), cols[j].len(), rows)
		}
	}
	return cols, nil
}

// readParquetChunk appends the values of one column chunk to c; more
// than rows values in all are an error.
func readParquetChunk(cc parquet.ColumnChunk, c *column, buf []parquet.Value, rows int64) error {
	intern := map[string]string{} // text held once however many rows repeat it
	pages := cc.Pages()
	defer pages.Close()
	for {
		p, err := pages.ReadPage()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		vr := p.Values()
		for {
			n, err := vr.ReadValues(buf)
			if int64(c.len()+n) > rows {
				parquet.Release(p)
				return errors.New("more values than the file's rows")
			}
			for _, v := range buf[:n] {
				if v.IsNull() {
					if c.num != nil {
						parquet.Release(p)
						return fmt.Errorf("row %d: a missing (null) value", c.len()+1)
					}
					c.text = append(c.text, "")
					continue
				}
				switch v.Kind() {
				case parquet.Boolean:
					b := 0.0
					if v.Boolean() {
						b = 1
					}
					c.num = append(c.num, b)
				case parquet.Int32:
					c.num = append(c.num, float64(v.Int32()))
				case parquet.Int64:
					c.num = append(c.num, float64(v.Int64()))
				case parquet.Float:
					c.num = append(c.num, float64(v.Float()))
				case parquet.Double:
					c.num = append(c.num, v.Double())
				case parquet.ByteArray:
					t, ok := intern[string(v.ByteArray())]
					if !ok && len(intern) < 1<<16 {
						t = string(v.ByteArray())
						intern[t] = t
					} else if !ok {
						t = string(v.ByteArray())
					}
					c.text = append(c.text, t)
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				parquet.Release(p)
				return err
			}
		}
		parquet.Release(p)
	}
}

// WriteWalkParquet writes rows rows of the walk of seed as a Parquet file
// whose columns are WalkColumns in that order (doubles; split a string),
// Snappy-compressed, in row groups of 65,536 rows: its memory does not
// grow with rows beyond a row group's.
func WriteWalkParquet(out io.Writer, rows int, seed uint64) error {
	return writeWalkParquet(out, rows, seed, 1<<16)
}

// writeWalkParquet is WriteWalkParquet in row groups of groupRows rows.
func writeWalkParquet(out io.Writer, rows int, seed uint64, groupRows int) error {
	names := WalkColumns()
	fields := make([]reflect.StructField, len(names))
	for j, n := range names {
		t := reflect.TypeFor[float64]()
		if n == "split" {
			t = reflect.TypeFor[string]()
		}
		fields[j] = reflect.StructField{Name: fmt.Sprintf("F%d", j), Type: t, Tag: reflect.StructTag(`parquet:"` + n + `"`)}
	}
	// A struct keeps the columns in order (a Group sorts them by name).
	schema := parquet.SchemaOf(reflect.New(reflect.StructOf(fields)).Elem().Interface())
	w := parquet.NewWriter(out, schema, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(int64(groupRows)))
	walk := NewWalk(seed, rows)
	batch := make([]parquet.Row, 1024)
	for i := 0; i < rows; {
		n := min(len(batch), rows-i)
		for k := range n {
			r := walk.Next()
			row := batch[k][:0]
			row = append(row, parquet.DoubleValue(r.Time).Level(0, 0, 0))
			for b, v := range r.Signal {
				row = append(row, parquet.DoubleValue(v).Level(0, 0, 1+b))
			}
			row = append(row, parquet.DoubleValue(r.X).Level(0, 0, 1+WalkBeacons), parquet.DoubleValue(r.Y).Level(0, 0, 2+WalkBeacons),
				parquet.ByteArrayValue([]byte(splitText(r.Test))).Level(0, 0, 3+WalkBeacons))
			batch[k] = row
		}
		if _, err := w.WriteRows(batch[:n]); err != nil {
			return err
		}
		i += n
	}
	return w.Close()
}
