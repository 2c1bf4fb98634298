package share

import "testing"

// TestHubSource: a relay's catchup is the hub's with the presenter's page
// named, and its followers' commands go to the presenter's answer.
func TestHubSource(t *testing.T) {
	h := NewHub("key")
	var asked string
	src := &HubSource{Hub: h, PresenterURL: "https://presenter.example/", Answer: func(op string, raw []byte) ([]byte, bool) {
		asked = op + " " + string(raw)
		return []byte("answer"), true
	}}
	var _ ShareSource = src
	if got := src.Catchup().Info.PresenterURL; got != "https://presenter.example/" {
		t.Errorf("catchup names the presenter's page %q", got)
	}
	if got := h.Catchup().Info.PresenterURL; got != "" {
		t.Errorf("the hub's own catchup changed: %q", got)
	}
	msg, binary := src.Ask("decode", []byte(`{"op":"decode"}`))
	if string(msg) != "answer" || !binary || asked != `decode {"op":"decode"}` {
		t.Errorf("Ask: %q, %v; the answer was asked %q", msg, binary, asked)
	}
}
