package share

import (
	"encoding/binary"
	"encoding/json"

	"dgpviz/internal/train"
	"dgpviz/internal/wire"
)

// The view's own messages for followers: the message figure, the depth
// comparison and the fit's density that the presenter's page asked for
// (view.Session.Go's messages) go to the followers too, the latest of each
// type, at once to one who joins — so a follower on the presenter's
// message-figure or depth slide sees the figure the presenter sees. They
// are the bytes the presenter's writer sent.

// maxViewTypes bounds the view message types a hub keeps (the regression
// view has three).
const maxViewTypes = 8

// PublishView fans a view message out to the followers.
func (h *Hub) PublishView(b []byte) {
	typ, dataID, ok := viewType(b)
	if !ok {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended || dataID != h.histData {
		return
	}
	if h.views == nil {
		h.views = map[string][]byte{}
	}
	if _, known := h.views[typ]; !known && len(h.views) >= maxViewTypes {
		return
	}
	h.views[typ] = b
	for f := range h.followers {
		f.views.Put(typ, b)
	}
}

// viewType returns a view message's type and data_id; ok is false for
// what is not a binary message of this protocol with a data_id.
func viewType(b []byte) (typ string, dataID int, ok bool) {
	if len(b) < 4 {
		return "", 0, false
	}
	hl := uint64(binary.LittleEndian.Uint32(b))
	if hl > uint64(len(b)-4) {
		return "", 0, false
	}
	var h struct {
		V      int    `json:"v"`
		Type   string `json:"type"`
		DataID *int   `json:"data_id"`
	}
	if json.Unmarshal(b[4:4+hl], &h) != nil || h.V != wire.Version || h.Type == "" || h.DataID == nil {
		return "", 0, false
	}
	if _, err := parseFeedHeader(b, h.Type); err != nil {
		return "", 0, false
	}
	return h.Type, *h.DataID, true
}

// FigureData returns a copy of the bound history and the view's latest
// messages of data set dataID, for a download.
func (h *Hub) FigureData(dataID int) (*train.History, map[string][]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var bh *train.History
	if h.hist.Len() > 0 && h.histData == dataID {
		bh = h.hist.Clone()
	}
	views := map[string][]byte{}
	if h.histData == dataID {
		for t, b := range h.views {
			views[t] = b
		}
	}
	return bh, views
}
