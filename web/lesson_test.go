package web

import (
	"encoding/json"
	"io/fs"
	"strconv"
	"strings"
	"testing"

	"dgpviz/internal/admit"
	"dgpviz/internal/dataset"
	"dgpviz/static"
)

// TestEmbeddedLessons parses every embedded lesson against the format
// (docs/lessons.md): its fields known and in range, its data sets in the
// server's default catalogue, its steps' layers within the model the step
// leaves, and at least one lesson (the paper's) present.
func TestEmbeddedLessons(t *testing.T) {
	infos, err := LoadLessons(static.FS)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) == 0 || infos[0].Name != "paper" {
		t.Fatalf("lessons %v, want the paper's among them", infos)
	}
	cat, err := dataset.NewCatalog(nil, admit.DefaultLimits().MaxRows)
	if err != nil {
		t.Fatal(err)
	}
	def := admit.DefaultConfig()
	for _, info := range infos {
		b, err := fs.ReadFile(static.FS, "lessons/"+info.Name+".json")
		if err != nil {
			t.Fatal(err)
		}
		l, err := ParseLesson(b)
		if err != nil {
			t.Fatalf("%s: %v", info.Name, err)
		}
		hidden := def.Hidden
		for i, st := range l.Steps {
			if m := st.Model; m != nil {
				if m.Data != "" && cat.Get(m.Data) == nil {
					t.Errorf("%s step %d: data set %q is not in the catalogue %v", info.Name, i+1, m.Data, cat.Names())
				}
				if m.Hidden != nil {
					hidden = *m.Hidden
				}
			}
			if f := st.MessageFigure; f != nil && f.Layer > len(hidden)+1 {
				t.Errorf("%s step %d: the message figure's layer %d, but the model has %d layers then", info.Name, i+1, f.Layer, len(hidden)+1)
			}
			for _, fc := range st.Focus {
				if n, ok := strings.CutPrefix(fc, "layer "); ok {
					if k, _ := strconv.Atoi(n); k > len(hidden)+1 {
						t.Errorf("%s step %d: focus %q, but the model has %d layers then", info.Name, i+1, fc, len(hidden)+1)
					}
				}
			}
		}
	}
}

// TestParseLessonErrors: bad lessons get errors that name the step (from 1)
// and the field.
func TestParseLessonErrors(t *testing.T) {
	step := func(extra string) string {
		return `{"title":"t","steps":[{"title":"a","text":"b"},{"title":"c","text":"d"` + extra + `}]}`
	}
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", `{`, "not a lesson's JSON"},
		{"unknown field", `{"title":"t","steps":[],"colour":1}`, `unknown field "colour"`},
		{"no title", `{"steps":[{"title":"a","text":"b"}]}`, `"title" is missing`},
		{"no steps", `{"title":"t","steps":[]}`, "0 steps"},
		{"step without text", `{"title":"t","steps":[{"title":"a"}]}`, `step 1: "text" is missing`},
		{"bad view", step(`,"view":"slides"`), `step 2: "view" "slides"`},
		{"bad run", step(`,"run":"go"`), `step 2: "run" "go"`},
		{"unknown step field", step(`,"wait":3`), `unknown field "wait"`},
		{"too wide", step(`,"model":{"hidden":[9]}`), "width 9 out of range"},
		{"too deep", step(`,"model":{"hidden":[1,1,1,1,1,1]}`), "at most 5"},
		{"bad inducing", step(`,"model":{"inducing":0}`), "inducing\" 0 out of range"},
		{"bad data", step(`,"model":{"data":"../etc"}`), "not a data set's name"},
		{"bad preset", step(`,"message_figure":{"layer":2,"preset":"nice"}`), `"preset" "nice"`},
		{"bad figure layer", step(`,"message_figure":{"layer":0,"preset":"across a bend"}`), "layer\" 0 out of range"},
		{"bad focus", step(`,"focus":["everything"]`), `"focus" "everything"`},
		{"long text", `{"title":"t","steps":[{"title":"a","text":"` + strings.Repeat("x", 601) + `"}]}`, "601 characters"},
		{"trailing data", `{"title":"t","steps":[{"title":"a","text":"b"}]} {}`, "more after"},
		{"not UTF-8", "{\"title\":\"\xff\",\"steps\":[]}", "not UTF-8"},
	} {
		_, err := ParseLesson([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "web:") || strings.Contains(err.Error(), "json:")) {
			t.Errorf("%s: %q has a package prefix", tc.name, err)
		}
	}
	good := `{"title":"t","steps":[{"title":"a","text":"b","view":"samples","at":0.5,"model":{"data":"step","hidden":[],"inducing":12,"seed":1},"run":"play","message_figure":{"layer":1,"preset":"across a bend"},"compare":true,"focus":["fit","layer 1","penalties"]}]}`
	if _, err := ParseLesson([]byte(good)); err != nil {
		t.Errorf("a lesson using every field: %v", err)
	}
}

// FuzzParseLesson: no input panics the lesson parser, and what it accepts
// it accepts again after a round trip through JSON.
func FuzzParseLesson(f *testing.F) {
	if b, err := fs.ReadFile(static.FS, "lessons/paper.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"title":"t","steps":[{"title":"a","text":"b"}]}`))
	f.Add([]byte(`{"title":"t","steps":[{"title":"a","text":"b","model":{"hidden":[1,2]},"at":1e308}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseLesson(b)
		if err != nil {
			return
		}
		again, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseLesson(again); err != nil {
			t.Fatalf("a parsed lesson does not parse again: %v\n%s", err, again)
		}
	})
}
