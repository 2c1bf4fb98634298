package modelfile

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonScanner reads JSON from a stream a value at a time, so that a reader
// can check its limits before it allocates what a value would need
// (Read). It holds a window of the input and, while capturing, the
// raw text of the value being captured; nothing else.
type jsonScanner struct {
	r        io.Reader
	buf      []byte
	pos, end int
	off      int64 // input offset of buf[0]
	max      int64 // bytes the input may hold
	eof      bool
	rerr     error // the reader's error other than io.EOF

	capturing bool
	capFrom   int    // start in buf of the raw text not yet copied to capture
	capture   []byte // raw text of the value being captured
	charge    func(int64) error
}

const (
	scanBuffer   = 64 << 10
	maxNumberLen = 128 // characters of one number (float64's longest exact form has 24)
	maxDepth     = 64  // nesting of skipped values
)

// errModelTooLarge is the scanner's error past its maximum size.
var errModelTooLarge = errors.New("too large")

func newJSONScanner(r io.Reader, max int64) *jsonScanner {
	return &jsonScanner{r: r, buf: make([]byte, scanBuffer), max: max}
}

// syntaxError is a place in the input where it is not the JSON expected.
type syntaxError struct {
	off int64
	msg string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("the model file is not valid JSON: at byte %d, %s", e.off, e.msg)
}

func (s *jsonScanner) errorf(format string, args ...any) error {
	return &syntaxError{off: s.off + int64(s.pos), msg: fmt.Sprintf(format, args...)}
}

// fill reads more input, keeping buf[pos:end] (and, when capturing,
// copying the consumed text to capture first). It returns false at the
// end of the input or on an error (s.rerr).
func (s *jsonScanner) fill() bool {
	if s.eof || s.rerr != nil {
		return false
	}
	if s.capturing {
		if err := s.grow(int64(s.pos - s.capFrom)); err != nil {
			s.rerr = err
			return false
		}
		s.capture = append(s.capture, s.buf[s.capFrom:s.pos]...)
		s.capFrom = 0
	}
	n := copy(s.buf, s.buf[s.pos:s.end])
	s.off += int64(s.pos)
	s.pos, s.end = 0, n
	for s.end < len(s.buf) {
		k, err := s.r.Read(s.buf[s.end:])
		s.end += k
		if s.off+int64(s.end) > s.max {
			s.rerr = errModelTooLarge
			return false
		}
		if err == io.EOF {
			s.eof = true
			break
		}
		if err != nil {
			s.rerr = err
			return false
		}
		if k > 0 {
			break
		}
	}
	return s.end > s.pos
}

// grow charges n more bytes of captured text.
func (s *jsonScanner) grow(n int64) error {
	if s.charge == nil || n == 0 {
		return nil
	}
	return s.charge(n)
}

// endErr is the error at the end of the input: the reader's, or that the
// text stops early.
func (s *jsonScanner) endErr(what string) error {
	if s.rerr != nil {
		return s.rerr
	}
	return s.errorf("the file ends %s", what)
}

// peek returns the next byte that is not white space, without consuming it.
func (s *jsonScanner) peek() (byte, error) {
	for {
		for s.pos < s.end {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
				s.pos++
			default:
				return c, nil
			}
		}
		if !s.fill() {
			return 0, s.endErr("too early")
		}
	}
}

// expect consumes the next byte that is not white space, which must be c.
func (s *jsonScanner) expect(c byte, context string) error {
	b, err := s.peek()
	if err != nil {
		return err
	}
	if b != c {
		return s.errorf("%s, found %s", context, quoteByte(b))
	}
	s.pos++
	return nil
}

// kindAt names the kind of JSON value that starts with b, or "" when
// none does.
func kindAt(b byte) string {
	switch {
	case b == '{':
		return "an object"
	case b == '[':
		return "an array"
	case b == '"':
		return "a string"
	case b == '-' || (b >= '0' && b <= '9'):
		return "a number"
	case b == 't' || b == 'f':
		return "true or false"
	case b == 'n':
		return "null"
	}
	return ""
}

// mismatch is the error for a value of another kind than expected:
// valid JSON, not what a model file holds there; a syntax error when b
// starts no value.
func (s *jsonScanner) mismatch(want string, b byte) error {
	if kind := kindAt(b); kind != "" {
		return fmt.Errorf("expected %s, found %s (at byte %d)", want, kind, s.off+int64(s.pos))
	}
	return s.errorf("expected %s, found %s", want, quoteByte(b))
}

func quoteByte(b byte) string {
	if b >= 0x20 && b < 0x7f {
		return fmt.Sprintf("%q", string(b))
	}
	return fmt.Sprintf("byte %#02x", b)
}

// atEnd reports an error unless only white space is left.
func (s *jsonScanner) atEnd() error {
	for {
		for s.pos < s.end {
			switch s.buf[s.pos] {
			case ' ', '\t', '\n', '\r':
				s.pos++
			default:
				return s.errorf("unexpected %s after the end of the model", quoteByte(s.buf[s.pos]))
			}
		}
		if !s.fill() {
			if s.rerr != nil {
				return s.rerr
			}
			return nil
		}
	}
}

// object reads an object, calling field for each key; field must consume
// the value.
func (s *jsonScanner) object(field func(key string) error) error {
	empty, err := s.open('{', '}', "an object {…}")
	if empty || err != nil {
		return err
	}
	for {
		if c, err := s.peek(); err != nil {
			return err
		} else if c != '"' {
			return s.errorf("expected a field name in quotes, found %s", quoteByte(c))
		}
		key, err := s.str(256, "a field name")
		if err != nil {
			return err
		}
		if err := s.expect(':', "expected : after a field name"); err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
		if more, err := s.more('}', "a field"); !more || err != nil {
			return err
		}
	}
}

// array reads an array, calling elem for each element; elem must consume it.
func (s *jsonScanner) array(elem func(i int) error) error {
	empty, err := s.open('[', ']', "an array […]")
	if empty || err != nil {
		return err
	}
	for i := 0; ; i++ {
		if err := elem(i); err != nil {
			return err
		}
		if more, err := s.more(']', "an array element"); !more || err != nil {
			return err
		}
	}
}

// open consumes the bracket that opens an object or an array (what), and
// the one that closes it when it is empty.
func (s *jsonScanner) open(bracket, end byte, what string) (empty bool, err error) {
	c, err := s.peek()
	if err != nil {
		return false, err
	}
	if c != bracket {
		return false, s.mismatch(what, c)
	}
	s.pos++
	if c, err = s.peek(); err != nil {
		return false, err
	}
	if c == end {
		s.pos++
		return true, nil
	}
	return false, nil
}

// more consumes what follows an element (after names it): a comma, and
// another element follows, or the closing bracket end.
func (s *jsonScanner) more(end byte, after string) (bool, error) {
	c, err := s.peek()
	if err != nil {
		return false, err
	}
	switch c {
	case ',':
		s.pos++
		return true, nil
	case end:
		s.pos++
		return false, nil
	}
	return false, s.errorf("expected , or %s after %s, found %s", string(end), after, quoteByte(c))
}

// number reads a JSON number as a float64; numbers out of float64's range
// are errors.
func (s *jsonScanner) number() (float64, error) {
	if _, err := s.peek(); err != nil {
		return 0, err
	}
	if s.end-s.pos < maxNumberLen+1 && !s.eof {
		s.fill() // the whole number in view (an error shows below)
	}
	b := s.buf[s.pos:s.end]
	n := numberLen(b)
	switch {
	case n == 0 && len(b) > 0 && (b[0] == 'N' || b[0] == 'I'):
		return 0, s.errorf("expected a number, found %s (JSON has no NaN or Infinity)", quoteByte(b[0]))
	case n == 0 && len(b) > 0:
		return 0, s.mismatch("a number", b[0])
	case n == 0:
		return 0, s.endErr("inside a number")
	case n > maxNumberLen:
		return 0, s.errorf("a number longer than %d characters", maxNumberLen)
	case n < 0:
		return 0, s.errorf("%q is not a number", b[:-n])
	}
	v, err := strconv.ParseFloat(string(b[:n]), 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, s.errorf("the number %s is out of range", b[:n])
	}
	s.pos += n
	return v, nil
}

// numberLen returns the length of the JSON number at the start of b, 0 if
// b does not start like one, and minus the length of a malformed one.
func numberLen(b []byte) int {
	i := 0
	digits := func() int {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	start := i
	if digits() == 0 {
		if i == 0 {
			return 0
		}
		return -max(i, 1)
	}
	if b[start] == '0' && i-start > 1 {
		return -i // leading zero
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return -i
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return -i
		}
	}
	return i
}

// str reads a string of at most max bytes (once unescaped); what names it
// in errors.
func (s *jsonScanner) str(max int, what string) (string, error) {
	b, err := s.strBytes(nil, max, what, nil)
	return string(b), err
}

// strBytes appends a string's unescaped bytes to dst. It refuses strings
// longer than max bytes and charges the bytes it appends, as they come.
func (s *jsonScanner) strBytes(dst []byte, max int, what string, charge func(int64) error) ([]byte, error) {
	if c, err := s.peek(); err != nil {
		return dst, err
	} else if c != '"' {
		return dst, s.mismatch(what+" in quotes", c)
	}
	s.pos++
	start := len(dst)
	charged := 0
	for {
		// The plain run up to a quote, a backslash or a control byte.
		i := s.pos
		for i < s.end {
			c := s.buf[i]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			i++
		}
		if len(dst)-start+i-s.pos > max {
			return dst, fmt.Errorf("%s longer than %d bytes (at byte %d)", what, max, s.off+int64(s.pos))
		}
		dst = append(dst, s.buf[s.pos:i]...)
		s.pos = i
		if charge != nil && len(dst)-start-charged >= 64<<10 {
			if err := charge(int64(len(dst) - start - charged)); err != nil {
				return dst, err
			}
			charged = len(dst) - start
		}
		if i == s.end {
			if !s.fill() {
				return dst, s.endErr("inside " + what)
			}
			continue
		}
		switch c := s.buf[i]; {
		case c == '"':
			s.pos++
			if charge != nil {
				if err := charge(int64(len(dst) - start - charged)); err != nil {
					return dst, err
				}
			}
			if !utf8.Valid(dst[start:]) {
				return dst, s.errorf("%s is not valid UTF-8", what)
			}
			return dst, nil
		case c < 0x20:
			return dst, s.errorf("a control character inside %s", what)
		}
		// An escape.
		if s.end-s.pos < 12 && !s.eof {
			s.fill()
		}
		if s.end-s.pos < 2 {
			return dst, s.endErr("inside " + what)
		}
		e := s.buf[s.pos+1]
		s.pos += 2
		switch e {
		case '"', '\\', '/':
			dst = append(dst, e)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return dst, s.errorf(`a malformed \u escape inside %s`, what)
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if s.end-s.pos >= 6 && s.buf[s.pos] == '\\' && s.buf[s.pos+1] == 'u' {
					save := s.pos
					s.pos += 2
					var ok2 bool
					if r2, ok2 = s.hex4(); !ok2 {
						s.pos = save
						r2 = -1
					}
				}
				r = utf16.DecodeRune(r, r2)
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, s.errorf("an unknown escape \\%s inside %s", string(e), what)
		}
	}
}

func (s *jsonScanner) hex4() (rune, bool) {
	if s.end-s.pos < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s.buf[s.pos : s.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	s.pos += 4
	return r, true
}

// literal consumes the literal word (true, false or null).
func (s *jsonScanner) literal(word string) error {
	if _, err := s.peek(); err != nil {
		return err
	}
	if s.end-s.pos < len(word) && !s.eof {
		s.fill()
	}
	if s.end-s.pos < len(word) || string(s.buf[s.pos:s.pos+len(word)]) != word {
		return s.errorf("expected %s", word)
	}
	s.pos += len(word)
	return nil
}

// null consumes a null and reports true, or reports false and consumes
// nothing.
func (s *jsonScanner) null() (bool, error) {
	c, err := s.peek()
	if err != nil || c != 'n' {
		return false, err
	}
	return true, s.literal("null")
}

// skip consumes one value of any kind, checking its syntax.
func (s *jsonScanner) skip(depth int) error {
	if depth > maxDepth {
		return s.errorf("values nested more than %d deep", maxDepth)
	}
	c, err := s.peek()
	if err != nil {
		return err
	}
	switch {
	case c == '{':
		return s.object(func(string) error { return s.skip(depth + 1) })
	case c == '[':
		return s.array(func(int) error { return s.skip(depth + 1) })
	case c == '"':
		_, err := s.strBytes(nil, math.MaxInt, "a string", nil)
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	_, err = s.number()
	return err
}

// raw consumes one value and returns its text as it stands in the input,
// charged to charge as it is copied.
func (s *jsonScanner) raw(charge func(int64) error) ([]byte, error) {
	if _, err := s.peek(); err != nil {
		return nil, err
	}
	s.capturing, s.capFrom, s.capture, s.charge = true, s.pos, nil, charge
	err := s.skip(0)
	if err == nil {
		err = s.grow(int64(s.pos - s.capFrom))
	}
	out := append(s.capture, s.buf[s.capFrom:s.pos]...)
	s.capturing, s.capture, s.charge = false, nil, nil
	return out, err
}
