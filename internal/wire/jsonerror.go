package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// JSONError describes, for people, why JSON text did not decode into a
// message: in the protocol's words, not Go's ("field "m": number 2.5 is not
// a whole number" rather than "… is not a int", "not valid JSON at byte 1"
// rather than "invalid character 'x' looking for beginning of value").
func JSONError(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	// encoding/json has no typed error for input that ends early
	// (json.Unmarshal's SyntaxError says "unexpected end of JSON input")
	// or for an unknown field (DisallowUnknownFields): its text is all
	// there is to tell them by.
	switch {
	case errors.As(err, &te):
		what := te.Value
		if what == "" {
			what = "the value"
		}
		if te.Field == "" {
			return fmt.Sprintf("%s is not %s", what, jsonKind(te.Type.String()))
		}
		return fmt.Sprintf("field %q: %s is not %s", te.Field, what, jsonKind(te.Type.String()))
	case errors.As(err, &se) && strings.Contains(se.Error(), "unexpected end"):
		return "the JSON text ends early"
	case errors.As(err, &se):
		return fmt.Sprintf("not valid JSON at byte %d", se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the JSON text ends early"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// jsonKind names the JSON value a Go type takes.
func jsonKind(goType string) string {
	t := strings.TrimLeft(goType, "*")
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["), strings.Contains(t, "."), strings.HasPrefix(t, "struct"):
		return "an object"
	case strings.HasPrefix(t, "uint"):
		return "a whole number ≥ 0"
	case strings.HasPrefix(t, "int"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "text"
	case t == "bool":
		return "true or false"
	}
	return "of the right kind"
}
