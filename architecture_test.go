package main

import (
	"maps"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"mcpscope/testkit/goldentest"
)

// ARCHITECTURE.md's package list is the code's: every package `go list
// ./...` prints is named in it, and every package it names exists. The
// module's root (package main) is exempt: the list names it as main.go,
// and a path for it would read as nothing.
func TestArchitecturePackages(t *testing.T) {
	const path = "ARCHITECTURE.md"
	section := goldentest.ReadSection(t, path, "packages").Text()
	named := map[string]bool{}
	// A package is named as a path in backquotes ending in a slash:
	// `session/`, `ui/widget/pager/`.
	for _, m := range regexp.MustCompile("`([a-z0-9_./]+)/`").FindAllStringSubmatch(section, -1) {
		named[m[1]] = true
	}

	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	const module = "mcpscope"
	listed := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		if p == module {
			continue // the root: main.go
		}
		listed[strings.TrimPrefix(p, module+"/")] = true
	}
	if len(listed) < 40 {
		t.Fatalf("go list ./... printed only %d packages: %q", len(listed), out)
	}

	// Every word of the drawing (the section's first code block) is a
	// package, main.go, or a folder of packages written X/….
	var bad []string
	if k := strings.Index(section, "```\n"); k >= 0 {
		draw := section[k+4:]
		draw = draw[:strings.Index(draw, "```")]
		for _, w := range regexp.MustCompile(`[A-Za-z0-9_./…*]+`).FindAllString(draw, -1) {
			if w == "main.go" || w == "…" {
				continue
			}
			if dir, ok := strings.CutSuffix(w, "/…"); ok {
				if !slices.ContainsFunc(slices.Collect(maps.Keys(listed)), func(p string) bool { return strings.HasPrefix(p, dir+"/") }) {
					bad = append(bad, w)
				}
				continue
			}
			if !listed[w] {
				bad = append(bad, w)
			}
		}
	} else {
		t.Errorf("%s's package section has no drawing (a code block)", path)
	}
	if len(bad) > 0 {
		t.Errorf("%s's package drawing has words that are not packages of go list ./...:\n%s", path, strings.Join(bad, "\n"))
	}

	var missing, gone []string
	for p := range listed {
		if !named[p] {
			missing = append(missing, p+"/")
		}
	}
	for p := range named {
		if !listed[p] {
			gone = append(gone, p+"/")
		}
	}
	sort.Strings(missing)
	sort.Strings(gone)
	if len(missing) > 0 {
		t.Errorf("%s's package list does not name these packages of go list ./... (add a line for each):\n%s",
			path, strings.Join(missing, "\n"))
	}
	if len(gone) > 0 {
		t.Errorf("%s's package list names packages go list ./... does not print (moved or removed?):\n%s",
			path, strings.Join(gone, "\n"))
	}
}
