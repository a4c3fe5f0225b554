package cli

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"mcpscope/session"
)

// uriScheme matches the start of a URI; one letter alone is a Windows
// drive (C:\dir), not a scheme.
var uriScheme = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]+:`) })

// resolveRoots turns the --root values into what roots/list is answered
// with. None given: the working directory, as hosts answer. "none": an
// empty list. "ask": the inspector asks each time (ask is then true).
// Anything else is a file:// URI or a path to an existing file or
// directory, made absolute.
func resolveRoots(name string, vals []string) (roots []session.Root, ask bool, err error) {
	if len(vals) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return []session.Root{}, false, nil // no working directory: nothing to offer
		}
		return []session.Root{pathRoot(wd)}, false, nil
	}
	for _, v := range vals {
		if (v == "ask" || v == "none") && len(vals) > 1 {
			return nil, false, usagef(name, "--root %s stands alone: it cannot be combined with other --root values", v)
		}
	}
	switch vals[0] {
	case "none":
		return []session.Root{}, false, nil
	case "ask":
		return nil, true, nil
	}
	for _, v := range vals {
		r, err := rootOf(name, v)
		if err != nil {
			return nil, false, err
		}
		roots = append(roots, r)
	}
	return roots, false, nil
}

func rootOf(name, v string) (session.Root, error) {
	const takes = "--root takes a directory, a file:// URI, ask or none"
	if v == "" {
		return session.Root{}, usagef(name, "%s; got an empty value", takes)
	}
	if uriScheme().MatchString(v) {
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "file" {
			return session.Root{}, usagef(name, "%s; got %q (MCP roots are file:// URIs)", takes, v)
		}
		if u.Host != "" && u.Host != "localhost" || u.Path == "" {
			return session.Root{}, usagef(name, "%s; got %q: write file:///absolute/path", takes, v)
		}
		return session.Root{URI: u.String(), Name: baseName(u.Path)}, nil
	}
	abs, err := filepath.Abs(v)
	if err == nil {
		_, err = os.Stat(abs)
	}
	if err != nil {
		return session.Root{}, usagef(name, "%s; %q: %v", takes, v, unwrapPathErr(err))
	}
	return pathRoot(abs), nil
}

// pathRoot is an absolute path as a root: its file:// URI, percent-encoded,
// named by its last element.
func pathRoot(abs string) session.Root {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/dir → /C:/dir
	}
	u := url.URL{Scheme: "file", Path: p}
	return session.Root{URI: u.String(), Name: baseName(p)}
}

func baseName(p string) string {
	b := filepath.Base(filepath.FromSlash(p))
	if b == "/" || b == "." || b == `\` {
		return ""
	}
	return b
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// asksRoots reports whether cmd can ask a person for roots: the inspector
// and open (its replays' live session). The headless commands cannot.
func asksRoots(cmd *cobra.Command) bool {
	return !cmd.HasParent() || cmd.Name() == "open"
}
