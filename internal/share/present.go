package share

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"dgpviz/internal/wire"
)

// The presenter's presentation state, mirrored by followers: whether the
// page is in presentation mode, its type scale, and a "slide", an opaque
// string the page's lecture steps use to say where the presenter is. The
// presenter's page sends {"op":"present",…} whenever it changes; the
// reader hands it to the hub (it changes nothing in the model, so the
// optimizer never sees it), which keeps the latest and sends it to every
// follower as a "presentation" text message, at once to one who joins.

// Presentation scales: the page's range of type scales.
const (
	MinPresentScale = 0.8
	MaxPresentScale = 2.5
	// MaxSlide bounds the slide string (bytes).
	MaxSlide = 256
)

// presentation is the "presentation" message.
type presentation struct {
	V       int     `json:"v"`
	Type    string  `json:"type"`
	Present bool    `json:"present"`
	Scale   float64 `json:"scale"`
	Slide   string  `json:"slide"`
}

func (p presentation) check() error {
	if !(p.Scale >= MinPresentScale && p.Scale <= MaxPresentScale) {
		return fmt.Errorf("present: scale %v out of range [%g, %g]", p.Scale, MinPresentScale, MaxPresentScale)
	}
	if len(p.Slide) > MaxSlide || !utf8.ValidString(p.Slide) {
		return fmt.Errorf("present: the slide must be text of at most %d bytes", MaxSlide)
	}
	return nil
}

func (p presentation) bytes() []byte {
	p.V, p.Type = wire.Version, "presentation"
	b, _ := json.Marshal(p)
	return b
}

// PresentationOf turns a "present" command into the message followers get.
func PresentationOf(c wire.Command) ([]byte, error) {
	if c.Present == nil {
		return nil, fmt.Errorf("present: missing \"present\" (true or false)")
	}
	p := presentation{Present: *c.Present, Scale: 1.4}
	if c.Scale != nil {
		p.Scale = *c.Scale
	}
	if c.Slide != nil {
		p.Slide = *c.Slide
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p.bytes(), nil
}

// ParsePresentation checks a "presentation" message read from beyond the
// process (a relay's NATS) and returns it re-encoded: only its known
// fields, checked as the presenter's server checks them.
func ParsePresentation(b []byte) ([]byte, error) {
	var p presentation
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&p); err != nil {
		return nil, fmt.Errorf("presentation: %v", err)
	}
	if d.More() {
		return nil, fmt.Errorf("presentation: extra data after the JSON object")
	}
	if p.V != wire.Version || p.Type != "presentation" {
		return nil, fmt.Errorf("presentation: not a version %d presentation message", wire.Version)
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p.bytes(), nil
}
