package relay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"dgpviz/internal/share"
	"dgpviz/internal/wire"

	"github.com/nats-io/nats.go"
)

// Subjects (docs/protocol.md, "Relays"). KEY is a share key, 32
// lower-case hex digits; nothing else is ever put into a subject.
//
//	dgpviz.share.KEY.setup|frame|presentation|end  the session's stream (presenter → relays)
//	dgpviz.session.KEY.join                         request: the snapshot, as messages to the reply subject
//	dgpviz.session.KEY.alive                        request: an empty answer while the session lives
//	dgpviz.session.KEY.ask                          request: a follower's command (fork, a question to the view), answered as the follower gets it
//	dgpviz.session.KEY.watching                     a relay's follower count for the session
//	dgpviz.relays                                   relays' announcements of their pages
const (
	subjectRelays = "dgpviz.relays"
	// Headers.
	hdrKind    = "Dgpviz-Kind"    // a snapshot part's kind: info, setup, history, presentation, frame, done
	hdrBinary  = "Dgpviz-Binary"  // "1": an ask's answer is a binary message
	hdrEncoded = "Dgpviz-Encoded" // a frame's encode time (Unix ns), for viz loadtest only
	hdrStatus  = "Status"         // NATS's own: "503", no responders
)

func streamSubject(key, kind string) string { return "dgpviz.share." + key + "." + kind }

// FrameSubject is the subject of a session's frames.
func FrameSubject(key string) string         { return streamSubject(key, "frame") }
func sessionSubject(key, kind string) string { return "dgpviz.session." + key + "." + kind }

// Limits on what a relay takes from NATS besides the messages themselves
// (which the NATS server's max_payload bounds).
const (
	maxReason = 200 // an end message's reason
	maxPeers  = 32  // relays listed to a page
)

// streamKind returns the kind of a message on a session's stream subject
// ("" if the subject is not one).
func streamKind(subject, key string) string {
	prefix := "dgpviz.share." + key + "."
	if len(subject) <= len(prefix) || subject[:len(prefix)] != prefix {
		return ""
	}
	return subject[len(prefix):]
}

// endReason is the reason an end message gives, if it is text a page can
// show; otherwise a plain one.
func endReason(b []byte) string {
	if len(b) == 0 || len(b) > maxReason || !utf8.Valid(b) || bytes.ContainsFunc(b, func(r rune) bool { return r < ' ' }) {
		return "the presenter's session has ended"
	}
	return string(b)
}

// catchupPart adds a join answer's message m to snap; done reports the
// last part.
func catchupPart(snap *share.Catchup, m *nats.Msg) (done bool, err error) {
	kind := m.Header.Get(hdrKind)
	b := m.Data
	switch kind {
	case "info":
		snap.Info, err = share.ParseShareInfo(b)
	case "setup":
		snap.Setup = b
	case "history":
		snap.History = b
	case "presentation":
		snap.Presentation = b
	case "frame":
		snap.Frame = b
	case "done":
		return true, nil
	default:
		err = fmt.Errorf("a snapshot part of unknown kind %q", wire.Truncate(kind, 40))
	}
	return false, err // the parts are checked together by Hub.Restore
}

// announcement is a relay's announcement of its page.
type announcement struct {
	URL string `json:"url"`
}

func parseAnnouncement(b []byte) (string, error) {
	var a announcement
	if err := strictJSON(b, &a); err != nil {
		return "", fmt.Errorf("relay announcement: %v", err)
	}
	if err := share.CheckPageURL(a.URL); err != nil {
		return "", fmt.Errorf("relay announcement: %v", err)
	}
	return a.URL, nil
}

// watching is a relay's follower count for a session.
type watching struct {
	Relay     string `json:"relay"`
	Followers int    `json:"followers"`
}

func parseWatching(b []byte) (watching, error) {
	var w watching
	if err := strictJSON(b, &w); err != nil {
		return w, fmt.Errorf("follower count: %v", err)
	}
	if w.Relay == "" || len(w.Relay) > 64 || w.Followers < 0 || w.Followers > 1<<24 {
		return w, errors.New("follower count: out of range")
	}
	return w, nil
}

// answer checks an ask's answer from the presenter's server before a
// follower gets it.
func answer(m *nats.Msg) ([]byte, bool, error) {
	binary := m.Header.Get(hdrBinary) == "1"
	b, err := share.CheckAnswer(m.Data, binary)
	return b, binary, err
}

// EncodedAt reads a frame's encode time from its NATS header (viz
// loadtest -mode relays; PublisherOptions.Stamp).
func EncodedAt(m *nats.Msg) (time.Time, bool) {
	if m.Header == nil {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(m.Header.Get(hdrEncoded), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

func strictJSON(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("extra data after the JSON object")
	}
	return nil
}

// commandOp reads a follower's command's id and op.
func commandOp(b []byte) (int64, string) {
	var c struct {
		ID int64  `json:"id"`
		Op string `json:"op"`
	}
	json.Unmarshal(b, &c)
	return c.ID, c.Op
}

func jsonBytes(v any) ([]byte, error) { return json.Marshal(v) }
