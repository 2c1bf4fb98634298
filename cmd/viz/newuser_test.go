package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Issue 36's items as a new user meets them: viz run as its own process
// (this test binary as viz, TestMain), in a temporary folder with no
// checkout and no ../shared beside it, on the user's own files there, with
// a home and a cache of its own.

// newUserEnv returns a fresh folder to work in and sets a home and a cache
// of the test's own, so that nothing of this machine's user is found.
func newUserEnv(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv("DGPVIZ_DATA", "")
	return t.TempDir()
}

// vizProc runs viz args… as a process in the folder dir and returns its
// standard output and standard error; err is its exit's.
func vizProc(t *testing.T, dir string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := vizCommand(args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// vizOK is vizProc failing the test on an error.
func vizOK(t *testing.T, dir string, args ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := vizProc(t, dir, args...)
	if err != nil {
		t.Fatalf("viz %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, stderr)
	}
	return stdout, stderr
}

// copyExample copies examples/NAME from the checkout into dir, as a user's
// own file, and returns its name there.
func copyExample(t *testing.T, dir, name string) string {
	t.Helper()
	b := readFile(t, filepath.Join("..", "..", "examples", name))
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestNewUserUnitsNamesAnywhere (items 1–3): a CSV with units in its
// header (examples/loop.csv: x_time [s], y_beacon… [dBm]), fitted in one
// folder by its relative name; from another folder viz predict names its
// columns by the data's own names with their units, and viz latent finds
// the data from the model file alone.
func TestNewUserUnitsNamesAnywhere(t *testing.T) {
	dir, elsewhere := newUserEnv(t), t.TempDir()
	data := copyExample(t, dir, "loop.csv")
	vizOK(t, dir, "fit", "-data", data, "-hidden", "2", "-inducing", "5", "-iters", "4", "-quiet", "-out", "m.json")
	model := filepath.Join(dir, "m.json")

	out, _ := vizOK(t, elsewhere, "predict", "-model", model, "-x", "3,40", "-format", "csv")
	head, _, _ := strings.Cut(out, "\n")
	for _, want := range []string{"x_time [s]", "layer1_dim1_mean", "y_beacon1_mean [dBm]", "y_beacon1_var [dBm²]"} {
		if !strings.Contains(head, want) {
			t.Errorf("viz predict's header %q has no %q", head, want)
		}
	}
	out, stderr := vizOK(t, elsewhere, "latent", "-model", model, "-gp-iters", "0", "-format", "csv")
	if !strings.Contains(out, "test RMSE") || !strings.Contains(out, "dBm") {
		t.Errorf("viz latent from another folder: no test RMSE in dBm:\n%.600s\n%s", out, stderr)
	}
}

// TestNewUserCollapsedDimension (item 5): a model whose hidden layer's
// third dimension has collapsed (its q(u) means zeroed), used from another
// folder: viz latent says so and the figure marks the axis.
func TestNewUserCollapsedDimension(t *testing.T) {
	dir, elsewhere := newUserEnv(t), t.TempDir()
	data := copyExample(t, dir, "loop.csv")
	vizOK(t, dir, "fit", "-data", data, "-hidden", "3", "-inducing", "5", "-iters", "4", "-quiet", "-out", "fitted.json")
	var mf map[string]any
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, "fitted.json")), &mf); err != nil {
		t.Fatal(err)
	}
	for _, row := range mf["layers"].([]any)[0].(map[string]any)["q_mu"].([]any) {
		row.([]any)[2] = 0.0
	}
	b, err := json.Marshal(mf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "collapsed.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "collapsed.json")
	if _, stderr := vizOK(t, elsewhere, "latent", "-model", model, "-gp-iters", "0"); !strings.Contains(stderr, "hidden layer 1, dimension 3 has collapsed") {
		t.Errorf("viz latent's stderr names no collapsed dimension: %q", stderr)
	}
	vizOK(t, elsewhere, "figure", "latent", "-model", model, "-format", "svg", "-o", "latent.svg")
	if svg := readFile(t, filepath.Join(elsewhere, "latent.svg")); !bytes.Contains(svg, []byte("h1 dimension 3 (collapsed)")) {
		t.Error("viz figure latent, run from another folder, does not mark dimension 3 collapsed")
	}
}

// TestNewUserCLIAndPageAgree (items 4 and 6): viz serve started in a
// temporary folder takes 300 images of 28×20 uploaded as a CSV with its
// defaults, saying what model it chose and which flag raises the limit;
// a one-row file is refused by the page and by viz fit with the same
// words; -iters caps the whole fit, restarts included.
func TestNewUserCLIAndPageAgree(t *testing.T) {
	dir := newUserEnv(t)
	one := "y_a [dBm],y_b [dBm]\n1,2\n"
	if err := os.WriteFile(filepath.Join(dir, "one.csv"), []byte(one), 0o644); err != nil {
		t.Fatal(err)
	}
	const refused = "1 training row: a fit needs at least 2"
	_, stderr, err := vizProc(t, dir, "fit", "-data", "one.csv", "-quiet")
	if err == nil || !strings.Contains(stderr, refused) {
		t.Errorf("viz fit of one row: %v, stderr %q; want %q", err, stderr, refused)
	}

	data := copyExample(t, dir, "loop.csv")
	vizOK(t, dir, "fit", "-data", data, "-hidden", "2", "-inducing", "4", "-restarts", "2", "-iters", "6", "-quiet", "-out", "m.json")
	var mf struct {
		Fit struct {
			TotalIters int `json:"total_iters"`
		} `json:"fit"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, "m.json")), &mf); err != nil || mf.Fit.TotalIters < 1 || mf.Fit.TotalIters > 6 {
		t.Errorf("-iters 6 with 2 restarts: %d iterations in all (%v)", mf.Fit.TotalIters, err)
	}

	cmd := vizCommand("serve", "-addr", "127.0.0.1:0", "-log-level", "warn")
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "dgpviz: serving on "); ok {
				urls <- strings.TrimSpace(u)
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(30 * time.Second):
		t.Fatal("viz serve printed no address within 30 s")
	}
	post := func(query, body string) (int, string) {
		t.Helper()
		r, err := http.Post(url+"data"+query, "text/csv", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(b)
	}
	if code, body := post("", one); code != http.StatusBadRequest || !strings.Contains(body, refused) {
		t.Errorf("the page's upload of one row: %d %q, want 400 with %q", code, body, refused)
	}
	code, body := post("?name=faces&shape=28x20", blobFacesCSV(300, 28, 20))
	var reply struct{ Resume, Note string }
	if err := json.Unmarshal([]byte(body), &reply); code != http.StatusOK || err != nil || reply.Resume == "" {
		t.Fatalf("300 images of 28×20: %d %q (%v), want a session to resume", code, body, err)
	}
	var k int
	if _, err := fmt.Sscanf(reply.Note, "%d inducing points per layer instead of", &k); err != nil || !strings.Contains(reply.Note, "-session-memory") {
		t.Errorf("the upload's note %q: want the inducing points chosen and the flag that raises the limit", reply.Note)
	}
}

// blobFacesCSV is n images of h×w grey levels, a blob circling the frame,
// as a CSV of only y columns (an autoencoder's data).
func blobFacesCSV(n, h, w int) string {
	var b strings.Builder
	for k := range h * w {
		if k > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "y%d", k+1)
	}
	b.WriteByte('\n')
	for i := range n {
		a := 2 * math.Pi * float64(i) / float64(n)
		cy, cx := float64(h-1)/2+float64(h)/4*math.Sin(a), float64(w-1)/2+float64(w)/4*math.Cos(a)
		for r := range h {
			for c := range w {
				if r > 0 || c > 0 {
					b.WriteByte(',')
				}
				d2 := (float64(r)-cy)*(float64(r)-cy) + (float64(c)-cx)*(float64(c)-cx)
				fmt.Fprintf(&b, "%.0f", math.Round(255*math.Exp(-d2/4)))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestNewUserFitStops (items 7 and 6): a fit run from a temporary folder
// stops by itself under the stopping rule, well within -iters, and says
// so and why; its ETA states a time or says it is estimating. (The robot and Frey presets' stops, which take seconds of CPU, are
// measured by the train package's TestTimeToTarget.)
func TestNewUserFitStops(t *testing.T) {
	dir := newUserEnv(t)
	_, stderr := vizOK(t, dir, "fit", "-data", "step", "-hidden", "1", "-inducing", "8", "-restarts", "1", "-out", "m.json")
	for _, want := range []string{"stopped by function convergence", "the rule stops below"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("viz fit's stderr has no %q:\n%s", want, stderr)
		}
	}
	// Its progress lines' ETA (item 6): a time ("under 2s" at the line's
	// resolution) or "estimating…", either with what holds beside it.
	const d = `(?:[0-9]+m)?[0-9.]+m?s`
	const holds = `(?: \((?:at least |at most )?` + d + `(?: to ` + d + `)?\))?`
	eta := regexp.MustCompile(`ETA (?:estimating…|under 2s|` + d + `)` + holds + `\)$`)
	lines := 0
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "ETA") {
			lines++
			if !eta.MatchString(line) {
				t.Errorf("a progress line's ETA: %q", line)
			}
		}
	}
	if lines == 0 {
		t.Errorf("no progress line with an ETA:\n%s", stderr)
	}
}
