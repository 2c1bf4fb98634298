package web

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"dgpviz/internal/view"
	"dgpviz/internal/wire"
)

// Pins: a download's formats from one snapshot. The page's download menu
// asks GET /figure/pin?session=KEY when it opens and gets a pin naming the
// session's latest published model (with its bound history and the view's
// messages) as it is at that moment; its SVG, PNG and PDF links carry
// &pin=…, so that all three show the same iteration however long the
// optimizer runs between the clicks. A pin lives pinLife and there are at
// most maxPins (the oldest goes first): a few models' worth of memory.

const (
	pinLife = 10 * time.Minute
	maxPins = 64
)

type pinned struct {
	fs  *view.Download
	key string // the session's figure key: a pin serves its own session only
	at  time.Time
}

type pinStore struct {
	mu    sync.Mutex
	pins  map[string]*pinned
	order []string // oldest first
}

func newPinStore() *pinStore { return &pinStore{pins: map[string]*pinned{}} }

// put pins fs for session key and returns the pin.
func (p *pinStore) put(key string, fs *view.Download, now time.Time) string {
	var b [12]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expire(now)
	for len(p.order) >= maxPins {
		delete(p.pins, p.order[0])
		p.order = p.order[1:]
	}
	p.pins[id] = &pinned{fs: fs, key: key, at: now}
	p.order = append(p.order, id)
	return id
}

// get returns the snapshot pinned under id for session key.
func (p *pinStore) get(id, key string, now time.Time) (*view.Download, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expire(now)
	pn, ok := p.pins[id]
	if !ok || pn.key != key {
		return nil, false
	}
	return pn.fs, true
}

// expire drops pins older than pinLife. p.mu is held.
func (p *pinStore) expire(now time.Time) {
	for len(p.order) > 0 {
		pn := p.pins[p.order[0]]
		if pn != nil && now.Sub(pn.at) < pinLife {
			return
		}
		delete(p.pins, p.order[0])
		p.order = p.order[1:]
	}
}

// servePin answers GET /figure/pin?session=KEY with {"pin", "iter",
// "seconds"}: the pin, the iteration it shows and how long it lasts.
func (h figureHandler) servePin(w http.ResponseWriter, r *http.Request) {
	for k := range r.URL.Query() {
		if k != "session" {
			http.Error(w, "unknown parameter "+wire.Truncate(k, 40)+" (want session)", http.StatusBadRequest)
			return
		}
	}
	fs, ok := liveFigureSession(w, r, h.b)
	if !ok {
		return
	}
	id := h.pins.put(r.URL.Query().Get("session"), fs, time.Now())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]any{"pin": id, "iter": fs.Iter, "seconds": int(pinLife.Seconds())})
}

// figureSession returns the snapshot a download draws: the pinned one
// when the request names a pin, else the session's latest.
func (h figureHandler) figureSession(w http.ResponseWriter, r *http.Request) (*view.Download, bool) {
	id := r.URL.Query().Get("pin")
	if id == "" {
		return liveFigureSession(w, r, h.b)
	}
	fs, ok := h.pins.get(id, r.URL.Query().Get("session"), time.Now())
	if !ok {
		http.Error(w, "this download's snapshot has expired (a menu's links last 10 minutes): open the download menu again", http.StatusGone)
		return nil, false
	}
	return fs, true
}
