package release

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const root = "../.."

type platform struct {
	Goos   string `yaml:"goos"`
	Goarch string `yaml:"goarch"`
}

// config is the part of .goreleaser.yaml this test checks.
type config struct {
	Version int `yaml:"version"`
	Builds  []struct {
		Main    string     `yaml:"main"`
		Env     []string   `yaml:"env"`
		Flags   []string   `yaml:"flags"`
		Ldflags []string   `yaml:"ldflags"`
		Goos    []string   `yaml:"goos"`
		Goarch  []string   `yaml:"goarch"`
		Ignore  []platform `yaml:"ignore"`
	} `yaml:"builds"`
	Archives []struct {
		Formats []string `yaml:"formats"`
	} `yaml:"archives"`
	Checksum struct {
		NameTemplate string `yaml:"name_template"`
	} `yaml:"checksum"`
}

func readConfig(t *testing.T) config {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c config
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if c.Version != 2 || len(c.Builds) != 1 || len(c.Archives) == 0 || c.Checksum.NameTemplate == "" {
		t.Fatalf(".goreleaser.yaml: want version 2, one build, archives and a checksum; got %+v", c)
	}
	return c
}

// crossBuild reads the release_targets and release_ldflags lines of
// scripts/test.sh.
func crossBuild(t *testing.T) (targets []string, ldflags string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "scripts", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^release_targets=\(([^)]*)\)$`).FindSubmatch(b); m != nil {
		targets = strings.Fields(string(m[1]))
	}
	if m := regexp.MustCompile(`(?m)^release_ldflags='([^']*)'$`).FindSubmatch(b); m != nil {
		ldflags = string(m[1])
	}
	if len(targets) == 0 || ldflags == "" {
		t.Fatal("scripts/test.sh has no release_targets=(...) or release_ldflags='...' line: the cross-build step must name what it builds")
	}
	return targets, ldflags
}

// The release builds what every test run cross-builds, with the same
// flags: a target that ships has been built, and the other way round.
func TestReleaseMatchesCrossBuild(t *testing.T) {
	c := readConfig(t)
	b := c.Builds[0]
	var release []string
	for _, goos := range b.Goos {
		for _, goarch := range b.Goarch {
			if !slices.Contains(b.Ignore, platform{goos, goarch}) {
				release = append(release, goos+"/"+goarch)
			}
		}
	}
	targets, ldflags := crossBuild(t)
	slices.Sort(release)
	slices.Sort(targets)
	if !slices.Equal(release, targets) {
		t.Errorf("the release builds %v, scripts/test.sh cross-builds %v: make them the same list", release, targets)
	}
	if got := strings.Join(b.Ldflags, " "); got != ldflags {
		t.Errorf(".goreleaser.yaml ldflags %q, scripts/test.sh release_ldflags %q: make them the same", got, ldflags)
	}
	if !slices.Contains(b.Flags, "-trimpath") || !slices.Contains(b.Env, "CGO_ENABLED=0") || b.Main != "." {
		t.Errorf(".goreleaser.yaml build: want main '.', -trimpath and CGO_ENABLED=0, as the cross-build step uses; got %+v", b)
	}
}

// The -X flag stamps a package-level string variable that exists: the
// linker ignores an -X naming nothing, and the release would say
// 0.1.0-dev. (The cross-build step checks that --version prints it.)
func TestReleaseStampsARealVariable(t *testing.T) {
	c := readConfig(t)
	m := regexp.MustCompile(`-X ([^ =]+)\.([A-Za-z_][A-Za-z0-9_]*)=\{\{\s*\.Version\s*\}\}`).FindStringSubmatch(strings.Join(c.Builds[0].Ldflags, " "))
	if m == nil {
		t.Fatalf("ldflags %q stamp no variable with {{.Version}}", c.Builds[0].Ldflags)
	}
	pkg, name := m[1], m[2]
	dir, ok := strings.CutPrefix(pkg, "mcpscope/")
	if !ok {
		t.Fatalf("-X names %s.%s, outside the module mcpscope", pkg, name)
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("-X names package %s, which has no Go files at %s", pkg, dir)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.Name != name {
						continue
					}
					// -X sets only a string variable, initialised by a constant or not at all.
					if len(vs.Values) > i {
						if _, ok := vs.Values[i].(*ast.BasicLit); !ok {
							t.Fatalf("%s.%s is initialised by an expression: -X cannot set it", pkg, name)
						}
					} else if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "string" {
						t.Fatalf("%s.%s is not a string: -X cannot set it", pkg, name)
					}
					return
				}
			}
		}
	}
	t.Fatalf("-X names %s.%s, but package %s declares no such variable", pkg, name, pkg)
}
