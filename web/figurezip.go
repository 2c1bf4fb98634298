package web

import (
	"archive/zip"
	"bytes"
	"context"
	"dgpviz/internal/wire"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Every panel in one download, for a lecturer's handouts:
//
//	GET /figure/panels.zip?session=KEY&pin=P&part=fit.svg&part=layer.png?layer=2&…
//
// Each part is a figure as the panel's own download names it
// (NAME.FORMAT, with its own parameters after a "?"), drawn from the one
// pinned snapshot; the zip holds them under their download names. It
// counts as one download against the address's figure rate (the page's
// 21 files went over it after 6), and its figures are drawn one at a time
// through the same gate and cache as single downloads.

// maxZipParts bounds a zip's figures: every panel of the largest page
// (6 layers, the fit, the bound, the depth and the message figure) in
// three formats.
const maxZipParts = 30

// zipKey marks a figure drawn as part of a zip: the zip took the rate.
type zipKey struct{}

// takeRate takes a figure download from the client's rate, unless the
// figure is part of a zip, which took one for all its parts.
func (h figureHandler) takeRate(r *http.Request) (bool, time.Duration) {
	if r.Context().Value(zipKey{}) != nil {
		return true, 0
	}
	return h.gate.rate.take(r.RemoteAddr, time.Now())
}

func (h figureHandler) serveZip(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for k := range q {
		if k != "session" && k != "pin" && k != "part" {
			http.Error(w, fmt.Sprintf("unknown parameter %q (want session, pin and part)", wire.Truncate(k, 40)), http.StatusBadRequest)
			return
		}
	}
	if !q.Has("pin") {
		http.Error(w, "a zip's figures come from one snapshot: give its pin (GET /figure/pin)", http.StatusBadRequest)
		return
	}
	parts := q["part"]
	if len(parts) == 0 || len(parts) > maxZipParts {
		http.Error(w, fmt.Sprintf("%d figures asked for; a zip holds 1…%d", len(parts), maxZipParts), http.StatusBadRequest)
		return
	}
	type part struct {
		file  string
		query url.Values
	}
	ps := make([]part, len(parts))
	for i, p := range parts {
		file, rawQuery, _ := strings.Cut(p, "?")
		pq, err := url.ParseQuery(rawQuery)
		if err != nil || file == "panels.zip" || file == "pin" || pq.Has("session") || pq.Has("pin") {
			http.Error(w, fmt.Sprintf("figure %d, %q, is not a figure's name and parameters", i+1, wire.Truncate(p, 60)), http.StatusBadRequest)
			return
		}
		pq.Set("session", q.Get("session"))
		pq.Set("pin", q.Get("pin"))
		ps[i] = part{file, pq}
	}
	fs, ok := h.figureSession(w, r)
	if !ok {
		return
	}
	if ok, wait := h.gate.rate.take(r.RemoteAddr, time.Now()); !ok {
		secs := int(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		http.Error(w, fmt.Sprintf("too many figure downloads from your address: try again in %d s", secs), http.StatusTooManyRequests)
		return
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	seen := map[string]bool{}
	ctx := context.WithValue(r.Context(), zipKey{}, true)
	for i, p := range ps {
		sub, err := http.NewRequestWithContext(ctx, http.MethodGet, "/figure/"+url.PathEscape(p.file)+"?"+p.query.Encode(), nil)
		if err != nil {
			http.Error(w, fmt.Sprintf("figure %d, %q: %v", i+1, wire.Truncate(p.file, 40), err), http.StatusBadRequest)
			return
		}
		sub.RemoteAddr = r.RemoteAddr
		sub.SetPathValue("file", p.file)
		var pw partWriter
		h.ServeHTTP(&pw, sub)
		if r.Context().Err() != nil {
			return
		}
		if pw.code != 0 && pw.code != http.StatusOK {
			if ra := pw.Header().Get("Retry-After"); ra != "" {
				w.Header().Set("Retry-After", ra)
			}
			http.Error(w, fmt.Sprintf("figure %d, %s: %s", i+1, wire.Truncate(p.file, 40), strings.TrimSpace(pw.buf.String())), pw.code)
			return
		}
		// The single download's name, with the layer's number: a zip
		// holds every layer's figure at one iteration.
		kind, format, _ := strings.Cut(p.file, ".")
		if l := p.query.Get("layer"); l != "" && kind == "layer" {
			kind += l
		} else if l != "" {
			kind += "-layer" + l
		}
		name := fmt.Sprintf("dgpviz-%s-%s-iter%d.%s", kind, fs.Dataset, fs.Iter, format)
		if seen[name] {
			name = fmt.Sprintf("dgpviz-%s-%s-iter%d-%d.%s", kind, fs.Dataset, fs.Iter, i+1, format)
		}
		seen[name] = true
		f, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store, Modified: time.Now()})
		if err == nil {
			_, err = f.Write(pw.buf.Bytes())
		}
		if err != nil {
			http.Error(w, "could not write the zip: "+err.Error(), http.StatusInternalServerError)
			return
		}
	}
	if err := zw.Close(); err != nil {
		http.Error(w, "could not write the zip: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", fmt.Sprintf("dgpviz-panels-%s-iter%d.zip", fs.Dataset, fs.Iter)))
	w.Write(buf.Bytes())
}

// partWriter keeps one figure of a zip.
type partWriter struct {
	h    http.Header
	code int
	buf  bytes.Buffer
}

func (p *partWriter) Header() http.Header {
	if p.h == nil {
		p.h = http.Header{}
	}
	return p.h
}

func (p *partWriter) WriteHeader(code int) {
	if p.code == 0 {
		p.code = code
	}
}

func (p *partWriter) Write(b []byte) (int, error) { return p.buf.Write(b) }
