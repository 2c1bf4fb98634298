package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"dgpviz/internal/montecarlo"
	"dgpviz/internal/wire"
)

// Lessons: guided walks through the live session, one JSON file per
// lesson in static/lessons/ (embedded), in the format docs/lessons.md
// describes. The page (static/lesson.js) runs them; the server reads them
// once, to list them in the page, and ParseLesson checks each against the
// format, so that a lecturer's mistake is named at startup and in the
// tests, not found in front of a class.

// Limits of a lesson (docs/lessons.md).
const (
	maxLessonBytes  = 64 << 10
	maxLessonSteps  = 40
	maxLessonTitle  = 120
	maxLessonAbout  = 600
	maxStepTitle    = 80
	maxStepText     = 600
	maxLessonHidden = 5 // hidden layers: layers ≤ 6, the server's limit
	maxLessonWidth  = 8
	maxLessonM      = 64
)

// Lesson is a lesson file.
type Lesson struct {
	Title string       `json:"title"`
	About string       `json:"about,omitempty"`
	Steps []LessonStep `json:"steps"`
}

// LessonStep is one step: what it says and what it does to the session.
type LessonStep struct {
	Title string `json:"title"`
	Text  string `json:"text"`
	// View is what the page shows: live (the default), samples, depth or
	// messages (static/follow.js SHOWS).
	View  string       `json:"view,omitempty"`
	Model *LessonModel `json:"model,omitempty"`
	Run   string       `json:"run,omitempty"` // play or pause
	// At is the input the samples' slice is taken at, in the data's
	// original units (absent: the steepest point of the fit).
	At            *float64      `json:"at,omitempty"`
	MessageFigure *LessonFigure `json:"message_figure,omitempty"`
	Compare       bool          `json:"compare,omitempty"`
	// WatchRepair, when set, turns on (or off) the repair of an edit at
	// the session's speed (the "speed" command's watch_repair).
	WatchRepair *bool    `json:"watch_repair,omitempty"`
	Focus       []string `json:"focus,omitempty"`
	// Claims are the step's quantitative sentences, each with the live
	// quantity it rests on.
	Claims []LessonClaim `json:"claims,omitempty"`
}

// LessonClaim is one quantitative sentence of a step's text and the
// quantity it rests on, measured on the step data's fits with 1, 2 and 3
// layers as the depth comparison makes them (regression.FitDepth):
// TestLessonClaims measures every claim of every embedded lesson and fails
// when the numbers contradict the words, so that a lesson cannot drift
// from the model.
type LessonClaim struct {
	// Says is the words of the claim, as they occur in the step's text.
	Says string `json:"says"`
	// Quantity is one of LessonQuantities.
	Quantity string `json:"quantity"`
	// Layers are the depths (1…3) the quantity is measured at.
	Layers []int `json:"layers"`
	// Order, "rises" or "falls", claims the quantity rises or falls from
	// each depth of Layers to the next.
	Order string `json:"order,omitempty"`
	// Above and Below claim bounds on the quantity at every depth of
	// Layers.
	Above *float64 `json:"above,omitempty"`
	Below *float64 `json:"below,omitempty"`
}

// LessonQuantities names the quantities a claim may rest on, with what
// each is (docs/lessons.md).
var LessonQuantities = map[string]string{
	"bound":               "the bound of the best of three restarts (nats), the depth slide's",
	"start bound":         "the bound of the first restart (nats): the lesson's seed, which the live session starts from",
	"likelihood":          "the bound's data term, the expected log-likelihood (nats)",
	"kl":                  "the KL terms of every layer, summed (nats)",
	"rise":                "the 10–90 % rise width of the predictive mean (input units)",
	"overshoot":           "how far the mean goes beyond the data's levels (output units; negative: it stays inside)",
	"propagation at edge": "the distance from the mean's steepest input to the datum of the largest propagation penalty (input units)",
	"bend kl":             "the smallest KL from the true response to the Gaussian message among the message figure's inputs across a bend, the second layer's (nats)",
	"edge spread":         "the samples' standard deviation at the mean's steepest input over the Gaussian final message's",
	"bimodal beyond":      "the fraction of the samples view's inputs beyond the data where the prediction has two or more modes",
	"switch distance":     "the mean input distance between a sample path's crossings of the levels' midpoint beyond the data (input units)",
}

// LessonModel is the session a step needs; what it leaves out stays.
type LessonModel struct {
	Data     string  `json:"data,omitempty"`
	Hidden   *[]int  `json:"hidden,omitempty"`
	Inducing *int    `json:"inducing,omitempty"`
	Seed     *uint64 `json:"seed,omitempty"`
}

// LessonFigure is the message figure a step shows: a layer (from 1) and
// an input set (montecarlo.InputSetNames).
type LessonFigure struct {
	Layer    int    `json:"layer"`
	InputSet string `json:"preset"`
}

// LessonInfo is what the page lists of a lesson.
type LessonInfo struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	Steps int    `json:"steps"`
}

var (
	lessonViews = []string{"live", "samples", "depth", "messages"}
	lessonName  = regexp.MustCompile(`^[a-z0-9-]{1,40}$`)
	focusName   = regexp.MustCompile(`^(fit|bound|depth|messages|layers|penalties|layer [1-6])$`)
)

// ParseLesson reads and checks a lesson file: every field known, every
// value in range. Its errors name the step (from 1) and the field, for
// the lecturer who wrote it.
func ParseLesson(b []byte) (*Lesson, error) {
	if len(b) > maxLessonBytes {
		return nil, fmt.Errorf("the lesson is %d bytes, more than %d", len(b), maxLessonBytes)
	}
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("the lesson is not UTF-8 text")
	}
	var l Lesson
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&l); err != nil {
		return nil, fmt.Errorf("the lesson is not a lesson's JSON object: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if d.More() {
		return nil, fmt.Errorf("the lesson has more after its JSON object")
	}
	if err := text("title", l.Title, maxLessonTitle, true); err != nil {
		return nil, err
	}
	if err := text("about", l.About, maxLessonAbout, false); err != nil {
		return nil, err
	}
	if len(l.Steps) == 0 || len(l.Steps) > maxLessonSteps {
		return nil, fmt.Errorf("the lesson has %d steps; want 1…%d", len(l.Steps), maxLessonSteps)
	}
	for i, st := range l.Steps {
		if err := st.check(); err != nil {
			return nil, fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	return &l, nil
}

func text(field, s string, max int, required bool) error {
	switch n := utf8.RuneCountInString(s); {
	case required && strings.TrimSpace(s) == "":
		return fmt.Errorf("%q is missing", field)
	case n > max:
		return fmt.Errorf("%q has %d characters, more than %d", field, n, max)
	}
	return nil
}

func (st LessonStep) check() error {
	if err := text("title", st.Title, maxStepTitle, true); err != nil {
		return err
	}
	if err := text("text", st.Text, maxStepText, true); err != nil {
		return err
	}
	if st.View != "" && !slices.Contains(lessonViews, st.View) {
		return fmt.Errorf("\"view\" %q: want one of %s", wire.Truncate(st.View, 40), strings.Join(lessonViews, ", "))
	}
	if st.Run != "" && st.Run != "play" && st.Run != "pause" {
		return fmt.Errorf("\"run\" %q: want play or pause", wire.Truncate(st.Run, 40))
	}
	if m := st.Model; m != nil {
		if m.Data != "" && !lessonName.MatchString(m.Data) && !strings.HasPrefix(m.Data, "csv:") {
			return fmt.Errorf("\"model\".\"data\" %q is not a data set's name", wire.Truncate(m.Data, 40))
		}
		if m.Hidden != nil {
			if len(*m.Hidden) > maxLessonHidden {
				return fmt.Errorf("\"model\".\"hidden\" has %d layers; at most %d", len(*m.Hidden), maxLessonHidden)
			}
			for _, w := range *m.Hidden {
				if w < 1 || w > maxLessonWidth {
					return fmt.Errorf("\"model\".\"hidden\": width %d out of range 1…%d", w, maxLessonWidth)
				}
			}
		}
		if m.Inducing != nil && (*m.Inducing < 1 || *m.Inducing > maxLessonM) {
			return fmt.Errorf("\"model\".\"inducing\" %d out of range 1…%d", *m.Inducing, maxLessonM)
		}
	}
	if st.At != nil && (math.IsNaN(*st.At) || math.Abs(*st.At) > 1e12) {
		return fmt.Errorf("\"at\" must be a finite input")
	}
	if f := st.MessageFigure; f != nil {
		if f.Layer < 1 || f.Layer > maxLessonHidden+1 {
			return fmt.Errorf("\"message_figure\".\"layer\" %d out of range 1…%d", f.Layer, maxLessonHidden+1)
		}
		if !slices.Contains(montecarlo.InputSetNames(), f.InputSet) {
			return fmt.Errorf("\"message_figure\".\"preset\" %q: want one of %q", wire.Truncate(f.InputSet, 40), montecarlo.InputSetNames())
		}
	}
	for i, c := range st.Claims {
		if err := c.check(st.Text); err != nil {
			return fmt.Errorf("\"claims\" %d: %w", i+1, err)
		}
	}
	for _, f := range st.Focus {
		if !focusName.MatchString(f) {
			return fmt.Errorf("\"focus\" %q: want fit, bound, depth, messages, layers, penalties or layer N (N from 1)", wire.Truncate(f, 40))
		}
	}
	return nil
}

// LoadLessons reads every lessons/NAME.json of fsys, checked, in name
// order; a bad lesson is an error naming its file.
func LoadLessons(fsys fs.FS) ([]LessonInfo, error) {
	names, err := fs.Glob(fsys, "lessons/*.json")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []LessonInfo
	for _, f := range names {
		name := strings.TrimSuffix(path.Base(f), ".json")
		if !lessonName.MatchString(name) {
			return nil, fmt.Errorf("%s: a lesson's file name is lower-case letters, digits and hyphens", f)
		}
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		l, err := ParseLesson(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, LessonInfo{Name: name, Title: l.Title, Steps: len(l.Steps)})
	}
	return out, nil
}

// maxClaimDepth is the deepest model a claim may name: the depth
// comparison's.
const maxClaimDepth = 3

func (c LessonClaim) check(text string) error {
	if strings.TrimSpace(c.Says) == "" {
		return fmt.Errorf("\"says\" is missing")
	}
	if !strings.Contains(text, c.Says) {
		return fmt.Errorf("\"says\" %q is not in the step's text", wire.Truncate(c.Says, 60))
	}
	if _, ok := LessonQuantities[c.Quantity]; !ok {
		names := slices.Sorted(maps.Keys(LessonQuantities))
		return fmt.Errorf("\"quantity\" %q: want one of %s", wire.Truncate(c.Quantity, 40), strings.Join(names, ", "))
	}
	if len(c.Layers) == 0 {
		return fmt.Errorf("\"layers\" is missing")
	}
	for _, l := range c.Layers {
		if l < 1 || l > maxClaimDepth {
			return fmt.Errorf("\"layers\": %d out of range 1…%d", l, maxClaimDepth)
		}
	}
	switch {
	case c.Order != "" && c.Order != "rises" && c.Order != "falls":
		return fmt.Errorf("\"order\" %q: want rises or falls", wire.Truncate(c.Order, 40))
	case c.Order != "" && len(c.Layers) < 2:
		return fmt.Errorf("\"order\" needs two or more \"layers\"")
	case c.Order == "" && c.Above == nil && c.Below == nil:
		return fmt.Errorf("claims nothing: give \"order\", \"above\" or \"below\"")
	}
	return nil
}

// Holds reports whether the claim is true of the quantity's values at
// its Layers, in order, and if not, why, in words with the numbers.
func (c LessonClaim) Holds(values []float64) (bool, string) {
	for i, v := range values {
		switch {
		case math.IsNaN(v):
			return false, fmt.Sprintf("%s is not defined at %d layers", c.Quantity, c.Layers[i])
		case c.Above != nil && !(v > *c.Above):
			return false, fmt.Sprintf("%s at %d layers is %.4g, not above %g", c.Quantity, c.Layers[i], v, *c.Above)
		case c.Below != nil && !(v < *c.Below):
			return false, fmt.Sprintf("%s at %d layers is %.4g, not below %g", c.Quantity, c.Layers[i], v, *c.Below)
		}
		if i == 0 {
			continue
		}
		if p := values[i-1]; (c.Order == "rises" && !(v > p)) || (c.Order == "falls" && !(v < p)) {
			return false, fmt.Sprintf("%s %s, but is %.4g at %d layers and %.4g at %d", c.Quantity, c.Order, p, c.Layers[i-1], v, c.Layers[i])
		}
	}
	return true, ""
}
