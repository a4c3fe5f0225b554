package ui

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Imports inside the UI run one way: the root imports the views, views
// import the dialogs several of them open (the form), the contract
// (ui/view), the keymap (ui/keys) and the widgets, never the root or one
// another; a dialog imports only what lies below it; the contract, the
// keymap and the widgets import no view or dialog.
func TestUILayers(t *testing.T) {
	lower := map[string]bool{"mcpscope/ui/view": true, "mcpscope/ui/keys": true,
		"mcpscope/ui/widget": true, "mcpscope/ui/widget/textbox": true}
	dialogs := map[string]bool{"mcpscope/ui/form": true}
	views := 0
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == "." || d.Name() == "testdata" {
			return err
		}
		pkg := "mcpscope/ui/" + filepath.ToSlash(path)
		fset := token.NewFileSet()
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, im := range af.Imports {
				imp, _ := strconv.Unquote(im.Path.Value)
				if !strings.HasPrefix(imp, "mcpscope/ui") {
					continue
				}
				switch {
				case imp == "mcpscope/ui":
					t.Errorf("%s imports the root (ui): a view gets a view.Context and its own narrow interface", f)
				case lower[pkg] && !lower[imp]:
					t.Errorf("%s (the contract, keymap or widgets) imports the view or dialog %s", f, imp)
				case dialogs[pkg] && !lower[imp]:
					t.Errorf("%s (a dialog) imports %s: a dialog uses only the contract, keymap and widgets", f, imp)
				case dialogs[imp]:
					// a view opens a dialog
				case !lower[pkg] && !lower[imp]:
					t.Errorf("%s imports another view, %s: views meet only through the root", f, imp)
				}
			}
		}
		seen[pkg] = true
		if !lower[pkg] && !dialogs[pkg] {
			views++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"mcpscope/ui/catalog", "mcpscope/ui/form", "mcpscope/ui/waterfall"} {
		if !seen[p] {
			t.Errorf("no package %s under ui/: the walk is broken or it moved", p)
		}
	}
	if views < 10 {
		t.Errorf("found %d view packages under ui/; the walk is broken", views)
	}
}
