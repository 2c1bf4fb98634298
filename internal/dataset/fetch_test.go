package dataset

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fileServer serves body at /uw-floor.txt through handle, which may break
// the answer; it records the Range header of every request.
type fileServer struct {
	*httptest.Server
	mu     sync.Mutex
	ranges []string
}

func newFileServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) *fileServer {
	fs := &fileServer{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs.mu.Lock()
		fs.ranges = append(fs.ranges, r.Header.Get("Range"))
		n := len(fs.ranges)
		fs.mu.Unlock()
		handle(w, r, n)
	}))
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fileServer) requests() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]string(nil), fs.ranges...)
}

// remoteFor describes body as served at url.
func remoteFor(body []byte, url string) Remote {
	sum := sha256.Sum256(body)
	return Remote{Name: "robot", Title: "robot WiFi", Dir: "robot_wireless", File: "uw-floor.txt", URL: url,
		SHA256: hex.EncodeToString(sum[:]), Size: int64(len(body))}
}

// serve answers with body, honouring range requests.
func serve(body []byte) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "uw-floor.txt", time.Time{}, bytes.NewReader(body))
	}
}

// truncate announces all of body from the range asked but sends only half
// of it and breaks the connection.
func truncate(body []byte) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		serve(body)(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		b := rec.Body.Bytes()
		w.Write(b[:len(b)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection breaks
	}
}

// TestFetch downloads the robot fixture from a local server: the right
// file lands under its name; a wrong checksum, a body that always breaks
// off, server errors, too many bytes and no server at all are errors that
// leave nothing in the data directory; a broken body is resumed with a
// range request, or downloaded again when the server ignores ranges.
func TestFetch(t *testing.T) {
	body, err := os.ReadFile(fixtureFile)
	if err != nil {
		t.Fatal(err)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // connection refused
	for _, tc := range []struct {
		name     string
		handle   func(w http.ResponseWriter, r *http.Request, n int)
		url      string // instead of the server's
		want     string // error; "" for success
		requests int
		ranges   []string // the requests' Range headers, when checked
	}{
		{name: "right file", handle: func(w http.ResponseWriter, r *http.Request, n int) { serve(body)(w, r) }, requests: 1},
		{name: "wrong checksum", handle: func(w http.ResponseWriter, r *http.Request, n int) {
			serve(bytes.ReplaceAll(body, []byte("-5"), []byte("-6")))(w, r)
		}, want: "not the expected file, discarded", requests: 1},
		{name: "truncated body", handle: func(w http.ResponseWriter, r *http.Request, n int) { truncate(body)(w, r) },
			want: "broke off", requests: 3},
		{name: "resumed", handle: func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				truncate(body)(w, r)
				return
			}
			serve(body)(w, r)
		}, requests: 2, ranges: []string{"", "bytes=" + strconv.Itoa(len(body)/2) + "-"}},
		{name: "ranges ignored", handle: func(w http.ResponseWriter, r *http.Request, n int) {
			r.Header.Del("Range")
			if n == 1 {
				truncate(body)(w, r)
				return
			}
			serve(body)(w, r)
		}, requests: 2},
		{name: "server error", handle: func(w http.ResponseWriter, r *http.Request, n int) {
			http.Error(w, "busy", http.StatusInternalServerError)
		}, want: "answered 500 Internal Server Error", requests: 3},
		{name: "server error once", handle: func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			serve(body)(w, r)
		}, requests: 2},
		{name: "not found", handle: func(w http.ResponseWriter, r *http.Request, n int) { http.NotFound(w, r) },
			want: "answered 404 Not Found", requests: 1},
		{name: "too long", handle: func(w http.ResponseWriter, r *http.Request, n int) {
			serve(append(append([]byte(nil), body...), body...))(w, r)
		}, want: "sent more than the", requests: 1},
		{name: "no network", url: closed.URL + "/uw-floor.txt", want: "cannot download from 127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			handle := tc.handle
			if handle == nil {
				handle = func(http.ResponseWriter, *http.Request, int) {}
			}
			srv := newFileServer(t, handle)
			url := srv.URL + "/uw-floor.txt"
			if tc.url != "" {
				url = tc.url
			}
			dir := filepath.Join(t.TempDir(), "cache", "dgpviz")
			f := &Fetcher{Dir: dir, Attempts: 3, Backoff: time.Millisecond}
			var lastDone int64
			f.Progress = func(r Remote, done, total int64) { lastDone = done }
			path, err := f.Fetch(context.Background(), remoteFor(body, url))
			if reqs := srv.requests(); tc.url == "" && len(reqs) != tc.requests {
				t.Errorf("%d requests, want %d", len(reqs), tc.requests)
			} else if tc.ranges != nil && strings.Join(reqs, "|") != strings.Join(tc.ranges, "|") {
				t.Errorf("Range headers %q, want %q", reqs, tc.ranges)
			}
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %v, want one line containing %q", err, tc.want)
				}
				if _, err := os.Stat(filepath.Dir(dir)); !errors.Is(err, os.ErrNotExist) {
					entries, _ := os.ReadDir(filepath.Join(dir, "robot_wireless"))
					t.Errorf("a failed download left %s (%d files in it)", filepath.Dir(dir), len(entries))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(dir, "robot_wireless", "uw-floor.txt"); path != want {
				t.Errorf("path %s, want %s", path, want)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, body) {
				t.Error("the file's bytes differ from the server's")
			}
			if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
				t.Errorf("%d files beside the download, want none", len(entries)-1)
			}
			if lastDone != int64(len(body)) {
				t.Errorf("progress ended at %d bytes, want %d", lastDone, len(body))
			}
			// Present and right: kept, with no request.
			srv.Close()
			if again, err := f.Fetch(context.Background(), remoteFor(body, url)); err != nil || again != path {
				t.Errorf("fetching a file present: %q, %v", again, err)
			}
		})
	}
}

// TestFetchCancelled: a cancelled download stops waiting at once and
// leaves nothing behind.
func TestFetchCancelled(t *testing.T) {
	srv := newFileServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "cache")
	f := &Fetcher{Dir: dir, Attempts: 10, Backoff: time.Hour}
	start := time.Now()
	_, err := f.Fetch(ctx, remoteFor([]byte("x"), srv.URL))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Errorf("error %v after %v, want the deadline's at once", err, time.Since(start))
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a cancelled download left %s", dir)
	}
}

// TestFind: "robot" and "frey" are looked for in DataDir ($DGPVIZ_DATA),
// then in ../shared/data; when absent, the one-line error names the
// command that gets them.
func TestFind(t *testing.T) {
	body, err := os.ReadFile(fixtureFile)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	work := filepath.Join(root, "checkout")
	cache := filepath.Join(root, "cache")
	for _, d := range []string{work, cache} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(work)
	t.Setenv(DataDirEnv, cache)
	_, err = Load("robot")
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.HasSuffix(err.Error(), "get them with: go run ./cmd/viz data get robot") {
		t.Fatalf("error %v, want one line ending with the command that gets the data", err)
	}
	put := func(dir string) string {
		p := filepath.Join(dir, "robot_wireless", "uw-floor.txt")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	shared := put(filepath.Join(root, "shared", "data"))
	r, _ := RemoteNamed("robot")
	if p, err := Find(r); err != nil || p != filepath.Join("..", "shared", "data", "robot_wireless", "uw-floor.txt") {
		t.Errorf("Find with the file in ../shared/data (%s): %q, %v", shared, p, err)
	}
	inCache := put(cache)
	if p, err := Find(r); err != nil || p != inCache {
		t.Errorf("Find with the file in the cache too: %q, %v; want the cache's", p, err)
	}
	ds, err := Load("robot")
	if err != nil || ds.Name != "robot" {
		t.Fatalf("Load(robot): %v", err)
	}
	if _, err := Load("frey"); err == nil || !strings.Contains(err.Error(), "the Frey faces data are not on this machine") {
		t.Errorf("Load(frey): %v, want the Frey faces' not found", err)
	}
}
