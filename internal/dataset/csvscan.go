package dataset

import (
	"bufio"
	"bytes"
	"io"
	"unicode"
	"unicode/utf8"
)

// csvScanner reads CSV records as encoding/csv does with
// FieldsPerRecord = -1 and TrimLeadingSpace (RFC 4180 quoting, CRLF or
// LF line endings, blank lines skipped), but hands out each record's
// fields as byte slices into its own buffers, valid until the next call
// of next: reading a row allocates nothing once the buffers have grown to
// the longest line, which is what lets a large numeric file stream.
type csvScanner struct {
	r      *bufio.Reader
	lineNo int    // the number of the last line read, from 1
	start  int    // the line on which the last record started
	text   []byte // the lines of the current record, without line ends
	quoted []byte // the unescaped text of its quoted fields
	fields [][]byte
	eof    bool
	read   int64 // bytes read so far
}

// csvSyntaxError is a record that is not CSV: at a line and a byte of
// it, counted from 1, in encoding/csv's words.
type csvSyntaxError struct {
	line, col int
	msg       string
}

func (e *csvSyntaxError) Error() string { return e.msg }

const (
	errBareQuote = `bare " in non-quoted-field`
	errQuote     = `extraneous or missing " in quoted-field`
)

func newCSVScanner(r io.Reader) *csvScanner {
	return &csvScanner{r: bufio.NewReaderSize(r, 256<<10)}
}

// readLine appends the next line, without its line end ("\n" or "\r\n";
// a "\r" before the end of the input), to s.text and returns its start
// there; ok is false at the end of the input.
func (s *csvScanner) readLine() (start int, ok bool, err error) {
	if s.eof {
		return 0, false, io.EOF
	}
	start = len(s.text)
	for {
		chunk, err := s.r.ReadSlice('\n')
		s.read += int64(len(chunk))
		s.text = append(s.text, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			s.eof = true
			if n := len(s.text); n > start && s.text[n-1] == '\r' {
				s.text = s.text[:n-1]
			}
			if len(s.text) == start { // as encoding/csv: a last "\r" is no line
				return 0, false, io.EOF
			}
			s.lineNo++
			return start, true, nil
		}
		if err != nil {
			return 0, false, err
		}
		s.text = s.text[:len(s.text)-1] // the '\n'
		if n := len(s.text); n > start && s.text[n-1] == '\r' {
			s.text = s.text[:n-1]
		}
		s.lineNo++
		return start, true, nil
	}
}

// next returns the fields of the next record; io.EOF after the last.
func (s *csvScanner) next() ([][]byte, error) {
	s.text, s.quoted, s.fields = s.text[:0], s.quoted[:0], s.fields[:0]
	var line []byte
	for {
		start, ok, err := s.readLine()
		if !ok {
			return nil, err
		}
		if len(s.text) > start {
			line = s.text[start:]
			break
		}
		s.text = s.text[:0] // a blank line
	}
	s.start = s.lineNo
	pos := 0 // in line
	for {
		pos = skipSpace(line, pos)
		if pos == len(line) || line[pos] != '"' {
			end := pos + bytes.IndexByte(line[pos:], ',')
			if end < pos {
				end = len(line)
			}
			if q := bytes.IndexByte(line[pos:end], '"'); q >= 0 {
				return nil, &csvSyntaxError{s.lineNo, pos + q + 1, errBareQuote}
			}
			s.fields = append(s.fields, line[pos:end])
			if end == len(line) {
				return s.fields, nil
			}
			pos = end + 1
			continue
		}
		// A quoted field: up to the quote not doubled, across lines.
		from := len(s.quoted)
		pos++
		for {
			q := bytes.IndexByte(line[pos:], '"')
			if q < 0 {
				s.quoted = append(s.quoted, line[pos:]...)
				s.quoted = append(s.quoted, '\n')
				col := len(line) + 2
				start, ok, err := s.readLine()
				if !ok {
					if err != io.EOF {
						return nil, err
					}
					return nil, &csvSyntaxError{s.lineNo, col, errQuote}
				}
				line, pos = s.text[start:], 0
				continue
			}
			s.quoted = append(s.quoted, line[pos:pos+q]...)
			pos += q + 1
			if pos < len(line) && line[pos] == '"' {
				s.quoted = append(s.quoted, '"')
				pos++
				continue
			}
			break
		}
		s.fields = append(s.fields, s.quoted[from:len(s.quoted):len(s.quoted)])
		switch {
		case pos == len(line):
			return s.fields, nil
		case line[pos] == ',':
			pos++
		default:
			return nil, &csvSyntaxError{s.lineNo, pos + 1, errQuote}
		}
	}
}

// skipSpace returns the index of the first byte at or after i in b that
// does not begin a white-space character (unicode.IsSpace).
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			if c != ' ' && c != '\t' && c != '\n' && c != '\v' && c != '\f' && c != '\r' {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if !unicode.IsSpace(r) {
			return i
		}
		i += n
	}
	return i
}
