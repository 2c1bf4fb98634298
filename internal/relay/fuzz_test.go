package relay

import (
	"bytes"
	"encoding/binary"
	"testing"

	"dgpviz/internal/share"

	"github.com/nats-io/nats.go"
)

// binaryMsg lays out a binary message: header JSON, padded, then payload.
func binaryMsg(header string, payload []byte) []byte {
	h := []byte(header)
	for len(h)%4 != 0 {
		h = append(h, ' ')
	}
	out := binary.LittleEndian.AppendUint32(nil, uint32(len(h)))
	return append(append(out, h...), payload...)
}

// FuzzNATSMessage feeds everything a relay reads from NATS — the stream's
// messages of every kind, snapshot parts, end reasons, announcements,
// follower counts, answers to forks and decodes — with arbitrary bytes.
// Nothing may panic, and what is accepted must be what a page can use:
// a frame the hub took is the one it serves.
func FuzzNATSMessage(f *testing.F) {
	frame := binaryMsg(`{"v":2,"type":"frame","seq":3,"data_id":1,"iter":7,"bound":-1.5,"likelihood":-1,"layers":[{"kl":0.5,"compression":0.1,"propagation":0.2}],"sections":[{"t":"f32","n":1,"o":0}]}`, make([]byte, 4))
	setup := binaryMsg(`{"v":2,"type":"setup","data_id":1,"name":"step","sections":[{"t":"q16","n":2,"o":0,"lo":0,"hi":1}]}`, make([]byte, 4))
	history := binaryMsg(`{"v":2,"type":"history","data_id":1,"n":1,"layer_count":1,"iters":{"$":0},"bounds":{"$":1},"likelihoods":{"$":2},"kl":{"$":3},"compression":{"$":4},"propagation":{"$":5},"sections":[{"t":"f32","n":1,"o":0},{"t":"f32","n":1,"o":4},{"t":"f32","n":1,"o":8},{"t":"f32","n":1,"o":12},{"t":"f32","n":1,"o":16},{"t":"f32","n":1,"o":20}]}`, make([]byte, 24))
	for _, s := range []struct {
		kind string
		b    []byte
	}{
		{"frame", frame}, {"setup", setup}, {"history", history}, {"frame", frame[:len(frame)-2]}, {"frame", binaryMsg(`{"v":2,"type":"frame","seq":1,"sections":[{"t":"f32","n":1073741824,"o":0}]}`, nil)},
		{"presentation", []byte(`{"v":2,"type":"presentation","present":true,"scale":1.4,"slide":"a"}`)},
		{"info", []byte(`{"config":{"dataset":"step","hidden":[1,1],"inducing":12,"method":"lbfgs","learning_rate":0.01,"seed":1,"frozen":[],"play":true,"speed":60},"presenter_url":"http://127.0.0.1:8080/"}`)},
		{"end", []byte("the presenter's session has ended")},
		{"announce", []byte(`{"url":"http://127.0.0.1:8090/"}`)},
		{"watching", []byte(`{"relay":"ab12","followers":3}`)},
		{"answer", []byte(`{"v":2,"type":"ack","op":"fork","resume":"0123456789abcdef0123456789abcdef","url":"http://h/?resume=0123456789abcdef0123456789abcdef"}`)},
		{"decoded", binaryMsg(`{"v":2,"type":"decoded","sections":[]}`, nil)},
		{"frame", []byte{0xff, 0xff, 0xff, 0xff}},
	} {
		f.Add(s.kind, s.b)
	}
	const key = "0123456789abcdef0123456789abcdef"
	f.Fuzz(func(t *testing.T, kind string, b []byte) {
		h := share.NewHub(key)
		if err := h.Take(kind, b); err == nil && kind == "frame" {
			if got := h.Catchup().Frame; !bytes.Equal(got, b) {
				t.Errorf("the hub took a frame but serves %d other bytes", len(got))
			}
		}
		var snap share.Catchup
		catchupPart(&snap, &nats.Msg{Data: b, Header: nats.Header{hdrKind: []string{kind}}})
		for _, s := range []share.Catchup{snap, {Setup: b}, {History: b}, {Presentation: b}, {Frame: b}, {Setup: setup, History: b, Frame: b}} {
			h.Restore(s)
		}
		h.Catchup()
		endReason(b)
		parseAnnouncement(b)
		parseWatching(b)
		for _, bin := range []bool{false, true} {
			answer(&nats.Msg{Data: b, Header: nats.Header{hdrBinary: []string{map[bool]string{true: "1"}[bin]}}})
		}
		streamKind(kind, key)
		share.ValidToken(kind)
	})
}
