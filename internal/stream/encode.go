package stream

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Binary messages (frames and setups) are laid out as
//
//	u32 little-endian  header length H
//	H bytes            header: UTF-8 JSON, padded with spaces to a multiple of 4
//	payload            the sections, each starting at a multiple of 4
//
// Arrays in the header are references {"$": k} to sections[k] of the
// header's "sections" table. A section is either
//
//	{"t":"f32","n":N,"o":OFF}                  N float32 (little-endian) at payload offset OFF
//	{"t":"q16","n":N,"o":OFF,"lo":A,"hi":B}    N uint16: v = A + q·(B−A)/65534, q = 65535 means NaN
//
// See docs/protocol.md.

// quantizeOver is the array length above which arrays are sent as q16
// (16-bit quantised) instead of f32: long per-datum arrays only need screen
// precision, short ones (inducing points, hyperparameters) stay exact to
// float32.
const quantizeOver = 64

// Ref is a reference from the JSON header to a binary section.
type Ref struct {
	I int `json:"$"`
}

type section struct {
	T  string `json:"t"`
	N  int    `json:"n"`
	O  int    `json:"o"`
	Lo num    `json:"lo,omitempty"`
	Hi num    `json:"hi,omitempty"`
}

// num is a float64 that encodes as the shortest round-trip JSON number and
// as null when it is not finite (JSON has no NaN).
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

func nums(v []float64) []num {
	out := make([]num, len(v))
	for i, x := range v {
		out[i] = num(x)
	}
	return out
}

// encoder accumulates binary sections for one message.
type encoder struct {
	secs    []section
	payload []byte
	// forceF32 disables quantisation (for tests and for exact setups).
	forceF32 bool
}

// arr adds v as a section and returns its reference.
func (e *encoder) arr(v []float64) Ref {
	if len(v) > quantizeOver && !e.forceF32 {
		return e.q16(v)
	}
	return e.f32(v)
}

func (e *encoder) f32(v []float64) Ref {
	off := len(e.payload)
	for _, x := range v {
		e.payload = binary.LittleEndian.AppendUint32(e.payload, math.Float32bits(float32(x)))
	}
	e.secs = append(e.secs, section{T: "f32", N: len(v), O: off})
	return Ref{len(e.secs) - 1}
}

func (e *encoder) q16(v []float64) Ref {
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
	e.secs = append(e.secs, section{T: "q16", N: len(v), O: off, Lo: num(lo), Hi: num(hi)})
	return Ref{len(e.secs) - 1}
}

// finish marshals header (which must have a Sections field that finish
// fills through setSections) and returns the complete binary message.
func (e *encoder) finish(header interface{ setSections([]section) }) ([]byte, error) {
	header.setSections(e.secs)
	h, err := json.Marshal(header)
	if err != nil {
		return nil, fmt.Errorf("stream: encoding header: %w", err)
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
		return nil, fmt.Errorf("stream: message of %d bytes is too short", len(msg))
	}
	hl := int(binary.LittleEndian.Uint32(msg))
	if hl > len(msg)-4 || hl%4 != 0 {
		return nil, fmt.Errorf("stream: header length %d is invalid for a %d-byte message", hl, len(msg))
	}
	var h map[string]any
	if err := json.Unmarshal(msg[4:4+hl], &h); err != nil {
		return nil, fmt.Errorf("stream: header: %w", err)
	}
	payload := msg[4+hl:]
	var secs []section
	if raw, ok := h["sections"]; ok {
		b, _ := json.Marshal(raw)
		if err := json.Unmarshal(b, &secs); err != nil {
			return nil, fmt.Errorf("stream: sections: %w", err)
		}
	}
	vals := make([][]float64, len(secs))
	for k, s := range secs {
		v := make([]float64, s.N)
		switch s.T {
		case "f32":
			if s.O < 0 || s.O+4*s.N > len(payload) {
				return nil, fmt.Errorf("stream: section %d out of bounds", k)
			}
			for i := range v {
				v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(payload[s.O+4*i:])))
			}
		case "q16":
			if s.O < 0 || s.O+2*s.N > len(payload) {
				return nil, fmt.Errorf("stream: section %d out of bounds", k)
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
			return nil, fmt.Errorf("stream: section %d has unknown type %q", k, s.T)
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
