package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// goTypeInText finds Go's vocabulary in an error's text: a %T verb, or a
// type's name such as float64, []int or *mat.Dense.
var goTypeInText = regexp.MustCompile(`%T|\b(u?int(8|16|32|64)?|float(32|64)|\[\][a-z]\w*|\*?mat\.Dense)\b`)

// TestErrorTextsAreForPeople reads the source of every package for the
// error texts it writes (fmt.Errorf, errors.New, and the commands' usage
// errors badInput and view.Bad) and checks that none starts with a
// package's name ("train: …") or names a Go type. Clients see these texts
// as they are: nothing strips a prefix on the way (TestErrorsForPeople
// reads what the commands print).
func TestErrorTextsAreForPeople(t *testing.T) {
	root := filepath.Join("..", "..")
	pkgs := map[string]bool{"json": true, "strconv": true}
	var files []string
	for _, top := range []string{"cmd", "internal", "web"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules"):
				return filepath.SkipDir
			case d.IsDir() && d.Name() != "viz": // the program's name: "viz fit: …" says which command
				pkgs[d.Name()] = true
			case strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") && !strings.HasSuffix(p, "_templ.go"):
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var prefix []string
	for p := range pkgs {
		prefix = append(prefix, regexp.QuoteMeta(p))
	}
	pkgPrefix := regexp.MustCompile(`^(` + strings.Join(prefix, "|") + `): `)
	makers := map[string]bool{"fmt.Errorf": true, "errors.New": true, "badInput": true, "view.Bad": true, "Bad": true}

	texts := 0
	fset := token.NewFileSet()
	for _, p := range files {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, p, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 || !makers[callee(call.Fun)] {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			text, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			texts++
			where := fset.Position(lit.Pos())
			if m := pkgPrefix.FindString(text); m != "" {
				t.Errorf("%s: %q starts with the package prefix %q", where, text, m)
			}
			if m := goTypeInText.FindString(text); m != "" {
				t.Errorf("%s: %q names the Go type %q", where, text, m)
			}
			return true
		})
	}
	t.Logf("%d error texts in %d files", texts, len(files))
	if texts < 500 { // the walk found the source: there are about 1,000
		t.Fatalf("read %d error texts in %d files, want the whole tree's", texts, len(files))
	}
}

// callee is a call's function as written: "fmt.Errorf", "badInput".
func callee(e ast.Expr) string {
	switch f := e.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok {
			return x.Name + "." + f.Sel.Name
		}
	}
	return ""
}
