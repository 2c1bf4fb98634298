package share

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"dgpviz/internal/train"
	"dgpviz/internal/wire"
)

// Sharing beyond one server. With viz serve -nats, every session's Hub
// also feeds a Publisher's Feed (internal/relay publishes it to NATS),
// and relays, which run no model, feed Hubs of their own from it and
// serve their followers with Hub.Serve, exactly as this server serves its
// own. A relay that starts following a session asks the presenter's
// server for a Catchup (Publisher's ShareSource), which it gives its hub
// with Restore; it checks everything it reads (Take, Restore), since
// anything that can publish to NATS could have sent it.

// ShareOptions configure sharing beyond this server (Options.Share).
type ShareOptions struct {
	// Publisher publishes every session's stream (nil: followers of
	// this server only).
	Publisher Publisher
	// FollowURL is the page followers open, the relays' address (the
	// hello's share_url: Share live links are FollowURL?follow=KEY);
	// "": this server's own page.
	FollowURL string
	// PublicURL is this server's page as people reach it: a follower of
	// a relay who forks continues there (PublicURL?resume=TOKEN).
	PublicURL string
}

// A Publisher publishes shared sessions beyond the process.
type Publisher interface {
	// Share starts publishing the session shared under key: the Feed
	// gets its stream; src answers relays (snapshots, forks, decodes).
	Share(key string, src ShareSource) Feed
}

// A ShareSource answers relays about one shared session.
type ShareSource interface {
	// Catchup is what a relay's first follower needs at once.
	Catchup() Catchup
	// Ask answers a relay's follower's "fork" or "decode" (raw: the
	// command as the follower sent it) with a text or binary message.
	Ask(op string, raw []byte) (msg []byte, binary bool)
	// Watching records that a relay serves n followers of the session
	// (the presenter's frames count them, for watchingFor).
	Watching(relay string, n int)
}

// Catchup is a shared session's latest state: what a follower who joins
// late gets at once. Its messages are the ones followers get (nil: none
// yet).
type Catchup struct {
	Info         ShareInfo
	Setup        []byte // binary "setup"
	History      []byte // binary "history" (history.go)
	Presentation []byte // text "presentation" (present.go)
	Frame        []byte // binary "frame"
}

// ShareInfo is what a relay knows of the presenter's session besides its
// messages.
type ShareInfo struct {
	Config json.RawMessage `json:"config,omitempty"` // the presenter's configuration (the follower's hello)
	// PresenterURL is the presenter's server's page (ShareOptions.PublicURL),
	// where a follower of a relay who forks continues.
	PresenterURL string `json:"presenter_url,omitempty"`
}

// Catchup returns h's latest state.
func (h *Hub) Catchup() Catchup {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := Catchup{Info: h.info, Setup: h.setup, History: h.historyMsg(), Presentation: h.present, Frame: h.frame.b}
	if h.state != nil {
		s.Info.Config = h.state.Config()
	}
	return s
}

// HubSource is a shared session's ShareSource: its Hub's Catchup, naming
// the presenter's page, and the presenter's answers to the relays'
// followers.
type HubSource struct {
	Hub          *Hub
	PresenterURL string // ShareOptions.PublicURL
	// Answer answers a relay's follower's command (ShareSource.Ask).
	Answer func(op string, raw []byte) (msg []byte, binary bool)
}

func (s *HubSource) Catchup() Catchup {
	c := s.Hub.Catchup()
	c.Info.PresenterURL = s.PresenterURL
	return c
}

func (s *HubSource) Watching(relay string, n int) { s.Hub.Watching(relay, n) }

func (s *HubSource) Ask(op string, raw []byte) ([]byte, bool) { return s.Answer(op, raw) }

// Take gives h one message of kind "setup", "frame" or "presentation"
// read from beyond the process, after checking it: a message that is
// not what it claims is refused with an error and changes nothing.
func (h *Hub) Take(kind string, b []byte) error {
	switch kind {
	case "setup":
		if _, err := parseFeedHeader(b, "setup"); err != nil {
			return err
		}
		h.Setup(b)
	case "frame":
		hd, err := parseFeedHeader(b, "frame")
		if err != nil {
			return err
		}
		h.Frame(b, hd.Seq)
	case "presentation":
		p, err := ParsePresentation(b)
		if err != nil {
			return err
		}
		h.Presentation(p)
	default:
		return fmt.Errorf("unknown kind of message %q", wire.Truncate(kind, 40))
	}
	return nil
}

// Restore gives h a snapshot read from beyond the process (a relay that
// starts following, or catches up after NATS came back), after checking
// every part: what is newer than h's goes to its followers, and the
// history replaces theirs. On an error h is unchanged.
func (h *Hub) Restore(s Catchup) error {
	var setup feedHeader
	var err error
	if s.Setup != nil {
		if setup, err = parseFeedHeader(s.Setup, "setup"); err != nil {
			return err
		}
	}
	var hist train.History
	var histData int
	if s.History != nil {
		if hist, histData, err = decodeHistory(s.History); err != nil {
			return err
		}
	}
	var present []byte
	if s.Presentation != nil {
		if present, err = ParsePresentation(s.Presentation); err != nil {
			return err
		}
	}
	var frame feedHeader
	if s.Frame != nil {
		if frame, err = parseFeedHeader(s.Frame, "frame"); err != nil {
			return err
		}
	}
	if err := s.Info.check(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return nil
	}
	h.info = s.Info
	if s.Setup != nil && (h.setup == nil || setup.DataID != h.setupHead.DataID) {
		h.setSetup(s.Setup, setup)
		for f := range h.followers {
			f.setup.Put(s.Setup)
		}
	}
	if s.History != nil && histData == h.setupHead.DataID {
		h.hist, h.histData, h.histMsg = hist, histData, nil
		b := h.historyMsg()
		for f := range h.followers {
			f.history.Put(b)
		}
	}
	if present != nil && !bytes.Equal(present, h.present) {
		h.present = present
		for f := range h.followers {
			f.present.Put(present)
		}
	}
	if s.Frame != nil && (h.frame.b == nil || frame.Seq > h.frame.seq) {
		h.frame = seqFrame{s.Frame, frame.Seq}
		for f := range h.followers {
			f.frame.Put(h.frame)
		}
	}
	return nil
}

// ParseShareInfo reads a ShareInfo read from beyond the process.
func ParseShareInfo(b []byte) (ShareInfo, error) {
	var s ShareInfo
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		return s, fmt.Errorf("share info: %v", err)
	}
	return s, s.check()
}

// check bounds what a page is given of a ShareInfo.
func (s ShareInfo) check() error {
	if s.Config != nil {
		// The fields a page shows of the configuration, bounded; the
		// transport's own parser checks the rest where it is used.
		var c struct {
			Dataset string   `json:"dataset"`
			Hidden  []int    `json:"hidden"`
			Frozen  []string `json:"frozen"`
		}
		if err := json.Unmarshal(s.Config, &c); err != nil {
			return fmt.Errorf("share info: the configuration: %v", err)
		}
		if len(s.Config) > 4096 || len(c.Dataset) > 200 || !utf8.ValidString(c.Dataset) || len(c.Hidden) > 64 || len(c.Frozen) > 16 {
			return errors.New("share info: the configuration is out of range")
		}
		for _, g := range c.Frozen {
			if len(g) > 40 || !utf8.ValidString(g) {
				return errors.New("share info: the configuration is out of range")
			}
		}
	}
	if s.PresenterURL != "" {
		if err := CheckPageURL(s.PresenterURL); err != nil {
			return fmt.Errorf("share info: presenter_url: %v", err)
		}
	}
	return nil
}

// CheckPageURL checks that u is the address of a page: an absolute http
// or https URL of at most 512 bytes, without user, query or fragment.
func CheckPageURL(u string) error {
	if len(u) > 512 {
		return errors.New("longer than 512 bytes")
	}
	p, err := url.Parse(u)
	if err != nil {
		return errors.New("not a URL")
	}
	if (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil || p.RawQuery != "" || p.Fragment != "" {
		return fmt.Errorf("%q is not an http(s) page address such as https://lecture.example.org/", wire.Truncate(u, 60))
	}
	return nil
}

// Check checks the addresses.
func (o ShareOptions) Check() error {
	for _, u := range []struct{ name, v string }{{"follow URL", o.FollowURL}, {"public URL", o.PublicURL}} {
		if u.v == "" {
			continue
		}
		if err := CheckPageURL(u.v); err != nil {
			return fmt.Errorf("%s: %v", u.name, err)
		}
	}
	return nil
}

// CheckAnswer checks the presenter's server's answer to a relay's
// follower's command (binary: a view's answer, a "decoded" message; text:
// a fork's ack or an error reply) and returns what the follower gets: a
// reply keeps only the fields a fork's or an answer's reply has.
func CheckAnswer(b []byte, binary bool) ([]byte, error) {
	if binary {
		if _, err := parseFeedHeader(b, "decoded"); err != nil {
			return nil, err
		}
		return b, nil
	}
	var a ForkAck
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("answer: %v", err)
	}
	ok := a.V == wire.Version && (a.Type == "ack" || a.Type == "error") && a.Op != "" && len(a.Op) <= 41 && (a.Type == "error" || a.Op == "fork") &&
		len(a.Message) <= 1000 && len(a.Error) <= 1000 && (a.Resume == "" || ValidToken(a.Resume))
	if !ok {
		return nil, errors.New("answer: not a fork's ack or an error reply")
	}
	if a.URL != "" {
		if err := CheckPageURL(strings.TrimSuffix(a.URL, "?resume="+a.Resume)); err != nil || a.Resume == "" {
			return nil, errors.New("answer: the fork's link is not a page address with its resume token")
		}
	}
	out := ForkAck{Type: a.Type, ID: a.ID, Op: a.Op, Message: a.Message, Error: a.Error, Resume: a.Resume, URL: a.URL}
	return out.Bytes(), nil
}

// ForkAck is the reply to a follower's "fork": an ack with the fork's
// resume token, or an error. URL (a follower of a relay) is the page that
// resumes the fork on the presenter's server.
type ForkAck struct {
	V       int    `json:"v"`
	Type    string `json:"type"`
	ID      int64  `json:"id,omitempty"`
	Op      string `json:"op,omitempty"`
	Message string `json:"message,omitempty"`
	Error   string `json:"error,omitempty"`
	Resume  string `json:"resume,omitempty"`
	URL     string `json:"url,omitempty"`
}

// Bytes is the reply's text message, of this protocol's version.
func (a ForkAck) Bytes() []byte {
	a.V = wire.Version
	b, _ := json.Marshal(a)
	return b
}

// ValidToken reports whether s has the form of a share key or a resume
// token (newResumeToken: 32 lower-case hex digits).
func ValidToken(s string) bool {
	if len(s) != 32 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// OriginAllowed accepts requests without an Origin header (not from a
// browser), same-origin requests, and origins whose host matches one of
// the patterns (path.Match syntax, lower case, e.g. "*.example.org").
func OriginAllowed(r *http.Request, patterns []string) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, p := range patterns {
		if ok, _ := path.Match(p, strings.ToLower(u.Host)); ok {
			return true
		}
	}
	return false
}
