package dataset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Remote is a public data file that `viz data get` downloads and checks,
// and that "-data NAME" finds on this machine (see Find). docs/data.md
// gives each one's source, terms and citation.
type Remote struct {
	Name   string // what -data and `viz data get` call it: "robot", "frey"
	Title  string // what people call it
	Dir    string // its folder in the data directory, as in ../shared/data
	File   string // its file name there
	URL    string // where it is downloaded from
	SHA256 string // its checksum, lower-case hex
	Size   int64  // its size in bytes
}

// mirror is the public GitHub mirror of the data sets the GPy/pods loaders
// use (lawrennd/datasets_mirror, branch main).
const mirror = "https://raw.githubusercontent.com/lawrennd/datasets_mirror/main/"

// Remotes are the paper's data sets that are not built in.
var Remotes = []Remote{
	{Name: "robot", Title: "robot WiFi", Dir: "robot_wireless", File: "uw-floor.txt", URL: mirror + "robot_wireless/uw-floor.txt",
		SHA256: "8daa925f365d9101c75ee89ccf51519159e6d105b19827bb60a30f1042a41ad6", Size: 284390},
	{Name: "frey", Title: "Frey faces", Dir: "frey_faces", File: "frey_rawface.mat", URL: mirror + "brendan_faces/frey_rawface.mat",
		SHA256: "265a83a23adb081755cd3de375509828e690324d1d60f076b8ecebc840d59c64", Size: 1100584},
}

// RemoteNamed returns the remote data set called name.
func RemoteNamed(name string) (Remote, bool) {
	for _, r := range Remotes {
		if r.Name == name {
			return r, true
		}
	}
	return Remote{}, false
}

// DataDirEnv names the environment variable that overrides DataDir.
const DataDirEnv = "DGPVIZ_DATA"

// DataDir returns the directory where `viz data get` keeps the data sets:
// $DGPVIZ_DATA when set, else dgpviz in the user's cache directory
// (os.UserCacheDir: ~/.cache/dgpviz on Linux). Files sit in it as in
// ../shared/data (robot_wireless/uw-floor.txt, …), so either may stand for
// the other.
func DataDir() (string, error) {
	if d := os.Getenv(DataDirEnv); d != "" {
		return d, nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no directory for the data sets (%v): set %s", err, DataDirEnv)
	}
	return filepath.Join(c, "dgpviz"), nil
}

// sharedDir is where a checkout's neighbour folder keeps the data sets,
// relative to the working directory.
var sharedDir = filepath.Join("..", "shared", "data")

// Find returns the path of the remote data set's file on this machine: in
// DataDir, else in ../shared/data beside the working directory. When it is
// in neither, the error says the one command that gets it.
func Find(r Remote) (string, error) {
	var looked []string
	if dir, err := DataDir(); err == nil {
		looked = append(looked, filepath.Join(dir, r.Dir, r.File))
	}
	looked = append(looked, filepath.Join(sharedDir, r.Dir, r.File))
	for _, p := range looked {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("the %s data are not on this machine (looked in %s); get them with: go run ./cmd/viz data get %s",
		r.Title, strings.Join(looked, " and "), r.Name)
}

// Fetcher downloads remote data sets into a directory, checking each
// file's size and checksum before it takes the file's name there: a
// failed or interrupted download leaves nothing behind.
type Fetcher struct {
	Dir    string       // where files go (see DataDir), in Remote.Dir folders
	Client *http.Client // nil: a client with a 10-minute timeout per request
	// Attempts is how many times a download is tried (0: 4); after a
	// broken connection a try resumes where the last one stopped when the
	// server allows (a range request). Backoff (0: 1 s) is the wait before
	// the second try, doubled before each next one.
	Attempts int
	Backoff  time.Duration
	// Progress, when not nil, is told the bytes received so far as they
	// come.
	Progress func(r Remote, done, total int64)
}

// Fetch downloads r into f.Dir and returns its path. A file already there
// with the right checksum is kept as it is.
func (f *Fetcher) Fetch(ctx context.Context, r Remote) (string, error) {
	dir := filepath.Join(f.Dir, r.Dir)
	dest := filepath.Join(dir, r.File)
	if sum, err := FileSHA256(dest); err == nil && sum == r.SHA256 {
		return dest, nil
	}
	// The folders this call makes, deepest first, to remove if it fails.
	var made []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) || d == filepath.Dir(d) {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, "."+r.File+".*.part")
	if err != nil {
		return "", err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
			for _, d := range made {
				os.Remove(d) // only if empty
			}
		}
	}()
	if err := f.download(ctx, r, tmp); err != nil {
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	sum, err := FileSHA256(tmp.Name())
	if err != nil {
		return "", err
	}
	if sum != r.SHA256 {
		return "", fmt.Errorf("%s: the file from %s has sha256 %s, want %s: not the expected file, discarded", r.Name, r.URL, sum, r.SHA256)
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return "", err
	}
	ok = true
	return dest, nil
}

// permanent marks a failure that trying again cannot mend.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// download writes r's bytes to w, trying again after failures that may
// pass (a broken connection, a server error), resuming from what it has.
func (f *Fetcher) download(ctx context.Context, r Remote, w *os.File) error {
	attempts, wait := f.Attempts, f.Backoff
	if attempts <= 0 {
		attempts = 4
	}
	if wait <= 0 {
		wait = time.Second
	}
	var got int64
	var err error
	for try := 1; ; try++ {
		got, err = f.try(ctx, r, w, got)
		if err == nil {
			return nil
		}
		var p permanent
		if errors.As(err, &p) || ctx.Err() != nil || try == attempts {
			return fmt.Errorf("%s: %w", r.Name, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", r.Name, ctx.Err())
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// try makes one request for r from byte `from` on (w holds the bytes
// before) and returns how many bytes w holds after it.
func (f *Fetcher) try(ctx context.Context, r Remote, w *os.File, from int64) (int64, error) {
	client := f.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Minute}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		return from, permanent{err}
	}
	if from > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(from, 10)+"-")
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without Go's "Get URL:"
		}
		return from, fmt.Errorf("cannot download from %s: %w", req.URL.Host, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusPartialContent && from > 0 && strings.HasPrefix(resp.Header.Get("Content-Range"), fmt.Sprintf("bytes %d-", from)):
		// The rest, after the bytes we have.
	case resp.StatusCode == http.StatusOK:
		// The whole file again.
		from = 0
		if _, err := w.Seek(0, io.SeekStart); err != nil {
			return 0, permanent{err}
		}
		if err := w.Truncate(0); err != nil {
			return 0, permanent{err}
		}
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout:
		return from, fmt.Errorf("%s answered %s", r.URL, resp.Status)
	default:
		return from, permanent{fmt.Errorf("%s answered %s", r.URL, resp.Status)}
	}
	if f.Progress != nil {
		f.Progress(r, from, r.Size)
	}
	// Never more than the file's size: a wrong answer does not fill the disk.
	n, err := io.Copy(w, &progressReader{r: io.LimitReader(resp.Body, r.Size-from+1), f: f, remote: r, done: from})
	got := from + n
	switch {
	case got > r.Size:
		return got, permanent{fmt.Errorf("%s sent more than the %d bytes expected: not the expected file, discarded", r.URL, r.Size)}
	case err != nil:
		return got, fmt.Errorf("the download from %s broke off after %d of %d bytes: %w", r.URL, got, r.Size, err)
	case got < r.Size:
		return got, fmt.Errorf("the download from %s ended after %d of %d bytes", r.URL, got, r.Size)
	}
	return got, nil
}

// progressReader tells a Fetcher's Progress of the bytes read through it.
type progressReader struct {
	r      io.Reader
	f      *Fetcher
	remote Remote
	done   int64
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	if p.f.Progress != nil && n > 0 {
		p.f.Progress(p.remote, p.done, p.remote.Size)
	}
	return n, err
}

// loadFile reads the file at path with read (its errors name the file as
// "name path") and hashes it on the way, in the one pass: when it is the
// public file called name (Remotes), checksum and all, the data set's
// Source says so.
func loadFile(name, path string, read func(r io.Reader, src string) (*Dataset, error)) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, openError(err)
	}
	defer f.Close()
	h := sha256.New()
	ds, err := read(io.TeeReader(f, h), name+" "+path)
	if err != nil {
		return nil, err
	}
	r, ok := RemoteNamed(name)
	// What the reader left unread, if anything, belongs to the checksum.
	if _, err := io.Copy(h, f); ok && err == nil && hex.EncodeToString(h.Sum(nil)) == r.SHA256 {
		ds.Source = &r
	}
	return ds, nil
}

// FileSHA256 returns the sha256 of the file at path, in lower-case hex:
// how a model file knows that a data file is still the one it was fitted
// to.
func FileSHA256(path string) (string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
