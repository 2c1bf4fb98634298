package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// DecodeCommand decodes one command's JSON strictly: no unknown field, no
// data after the object. Its errors say what was wrong, in the protocol's
// words; the transport checks the op and the values (stream.ParseCommand).
func DecodeCommand(b []byte) (Command, error) {
	var c Command
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil {
		var te *json.UnmarshalTypeError
		// An unknown field has no typed error in encoding/json: its text.
		if errors.As(err, &te) || strings.HasPrefix(err.Error(), "json: unknown field") {
			return c, fmt.Errorf("%s", JSONError(err))
		}
		return c, fmt.Errorf("malformed command (want a JSON object such as {\"op\":\"play\"}): %s", JSONError(err))
	}
	if _, err := d.Token(); err != io.EOF {
		return c, fmt.Errorf("malformed command: extra data after the JSON object")
	}
	return c, nil
}
