package wire

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// quantizeOver is the array length above which arrays are sent as q16
// (16-bit quantised) instead of f32: long per-datum arrays only need screen
// precision, short ones (inducing points, hyperparameters) stay exact to
// float32.
const quantizeOver = 64

// Version is the version of the websocket protocol in docs/protocol.md.
// It is sent in every message as "v"; a client that sees a different
// major version should not interpret the message.
const Version = 2 // 2: the message figure's ops and message are "message_figure…" (were "mc…")

// Ref is a reference from the JSON header to a binary section.
type Ref struct {
	I int `json:"$"`
}

// Section describes one array of a message's payload (see the package
// documentation).
type Section struct {
	T  string `json:"t"`
	N  int    `json:"n"`
	O  int    `json:"o"`
	Lo Num    `json:"lo,omitempty"`
	Hi Num    `json:"hi,omitempty"`
}

// Num is a float64 that encodes as the shortest round-trip JSON number and
// as null when it is not finite (JSON has no NaN).
type Num float64

// MarshalJSON writes n as the shortest number that reads back as n, or
// null.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// Nums converts v to Nums.
func Nums(v []float64) []Num {
	out := make([]Num, len(v))
	for i, x := range v {
		out[i] = Num(x)
	}
	return out
}

// Encoder accumulates binary sections for one message.
type Encoder struct {
	secs    []Section
	payload []byte
	// ForceF32 disables quantisation (for tests and for exact setups).
	ForceF32 bool
}

// Arr adds v as a section and returns its reference.
func (e *Encoder) Arr(v []float64) Ref {
	if len(v) > quantizeOver && !e.ForceF32 {
		return e.Q16(v)
	}
	return e.F32(v)
}

// F32 adds v as float32 values, whatever its length.
func (e *Encoder) F32(v []float64) Ref {
	off := len(e.payload)
	for _, x := range v {
		e.payload = binary.LittleEndian.AppendUint32(e.payload, math.Float32bits(float32(x)))
	}
	e.secs = append(e.secs, Section{T: "f32", N: len(v), O: off})
	return Ref{len(e.secs) - 1}
}

// Q16 adds v quantised to 16 bits over its finite range.
func (e *Encoder) Q16(v []float64) Ref {
	off := len(e.payload)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	if lo > hi { // no finite values
		lo, hi = 0, 0
	}
	scale := 0.0
	if hi > lo {
		scale = 65534 / (hi - lo)
	}
	for _, x := range v {
		q := uint16(65535)
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			q = uint16(math.Round((x - lo) * scale))
		}
		e.payload = binary.LittleEndian.AppendUint16(e.payload, q)
	}
	if len(e.payload)%4 != 0 {
		e.payload = append(e.payload, 0, 0)
	}
	e.secs = append(e.secs, Section{T: "q16", N: len(v), O: off, Lo: Num(lo), Hi: Num(hi)})
	return Ref{len(e.secs) - 1}
}

// Header is a binary message's JSON header: it carries the sections
// table, which Finish fills.
type Header interface{ SetSections([]Section) }

// Finish marshals header with the sections added so far and returns the
// complete binary message.
func (e *Encoder) Finish(header Header) ([]byte, error) {
	header.SetSections(e.secs)
	h, err := json.Marshal(header)
	if err != nil {
		return nil, fmt.Errorf("encoding a message header: %w", err)
	}
	pad := (4 - len(h)%4) % 4
	out := make([]byte, 0, 4+len(h)+pad+len(e.payload))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(h)+pad))
	out = append(out, h...)
	for range pad {
		out = append(out, ' ')
	}
	return append(out, e.payload...), nil
}

// Decoded is a decoded binary message: the header with every reference
// resolved to its values (as float64), for tests and tools.
type Decoded map[string]any

// Decode parses a binary message. References {"$": k} are replaced by
// []float64 holding the section's values (NaN for q16's NaN code).
func Decode(msg []byte) (Decoded, error) {
	if len(msg) < 4 {
		return nil, fmt.Errorf("message of %d bytes is too short", len(msg))
	}
	hl := int(binary.LittleEndian.Uint32(msg))
	if hl > len(msg)-4 || hl%4 != 0 {
		return nil, fmt.Errorf("header length %d is invalid for a %d-byte message", hl, len(msg))
	}
	var h map[string]any
	if err := json.Unmarshal(msg[4:4+hl], &h); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	payload := msg[4+hl:]
	var secs []Section
	if raw, ok := h["sections"]; ok {
		b, _ := json.Marshal(raw)
		if err := json.Unmarshal(b, &secs); err != nil {
			return nil, fmt.Errorf("sections: %w", err)
		}
	}
	vals := make([][]float64, len(secs))
	for k, s := range secs {
		v := make([]float64, s.N)
		switch s.T {
		case "f32":
			if s.O < 0 || s.O+4*s.N > len(payload) {
				return nil, fmt.Errorf("section %d out of bounds", k)
			}
			for i := range v {
				v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(payload[s.O+4*i:])))
			}
		case "q16":
			if s.O < 0 || s.O+2*s.N > len(payload) {
				return nil, fmt.Errorf("section %d out of bounds", k)
			}
			step := 0.0
			if s.Hi > s.Lo {
				step = float64(s.Hi-s.Lo) / 65534
			}
			for i := range v {
				q := binary.LittleEndian.Uint16(payload[s.O+2*i:])
				if q == 65535 {
					v[i] = math.NaN()
				} else {
					v[i] = float64(s.Lo) + float64(q)*step
				}
			}
		default:
			return nil, fmt.Errorf("section %d has unknown type %q", k, s.T)
		}
		vals[k] = v
	}
	var resolve func(x any) any
	resolve = func(x any) any {
		switch t := x.(type) {
		case map[string]any:
			if r, ok := t["$"]; ok && len(t) == 1 {
				if f, ok := r.(float64); ok && int(f) >= 0 && int(f) < len(vals) {
					return vals[int(f)]
				}
			}
			for k, v := range t {
				t[k] = resolve(v)
			}
		case []any:
			for i, v := range t {
				t[i] = resolve(v)
			}
		}
		return x
	}
	resolve(h)
	return Decoded(h), nil
}

// NumPtr returns a pointer to v as a Num (for optional header fields).
func NumPtr(v float64) *Num { n := Num(v); return &n }
