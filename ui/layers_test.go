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
// (ui/view), the keymap (ui/keys) and the widgets (ui/widget/…, and the
// result renderer ui/result), never the root or one another; a dialog
// imports only what lies below it; the contract, the keymap and the
// widgets import no view or dialog.
func TestUILayers(t *testing.T) {
	isLower := func(pkg string) bool {
		switch pkg {
		case "mcpscope/ui/view", "mcpscope/ui/keys", "mcpscope/ui/widget", "mcpscope/ui/result":
			return true
		}
		return strings.HasPrefix(pkg, "mcpscope/ui/widget/")
	}
	dialogs := map[string]bool{"mcpscope/ui/form": true}
	// Packages the walk must find, each on its side of the line.
	want := map[string]bool{"mcpscope/ui/detail": false, "mcpscope/ui/info": false,
		"mcpscope/ui/widget/pager": true, "mcpscope/ui/widget/textbox": true, "mcpscope/ui/result": true,
		"mcpscope/ui/catalog": false, "mcpscope/ui/form": false, "mcpscope/ui/waterfall": false}
	views := 0
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
				case isLower(pkg) && !isLower(imp):
					t.Errorf("%s (the contract, keymap or widgets) imports the view or dialog %s", f, imp)
				case dialogs[pkg] && !isLower(imp):
					t.Errorf("%s (a dialog) imports %s: a dialog uses only the contract, keymap and widgets", f, imp)
				case dialogs[imp]:
					// a view opens a dialog
				case !isLower(pkg) && !isLower(imp):
					t.Errorf("%s imports another view, %s: views meet only through the root", f, imp)
				}
			}
		}
		if len(files) == 0 {
			return nil
		}
		if lower, ok := want[pkg]; ok {
			if lower != isLower(pkg) {
				t.Errorf("%s is on the wrong side: widget %t", pkg, isLower(pkg))
			}
			delete(want, pkg)
		}
		if !isLower(pkg) && !dialogs[pkg] {
			views++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range want {
		t.Errorf("the walk did not find %s", pkg)
	}
	if views < 10 {
		t.Errorf("found %d view packages under ui/; the walk is broken", views)
	}
}
