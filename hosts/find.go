package hosts

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// NotFoundError is a name no host's file has.
type NotFoundError struct {
	Name  string
	Hosts []string // the host it was looked for in ("" = all)
	Near  []string // selectors of servers with a similar name
	Empty bool     // no server is configured at all
}

func (e *NotFoundError) Error() string {
	where := "any host's configuration"
	if len(e.Hosts) == 1 {
		where = Title(e.Hosts[0]) + "'s configuration"
	}
	msg := fmt.Sprintf("no MCP server named %q in %s", e.Name, where)
	switch {
	case e.Empty:
		return msg + " (none is configured there): run 'mcpscope servers' to see the files mcpscope reads"
	case len(e.Near) > 0:
		return msg + fmt.Sprintf("; did you mean %s? ('mcpscope servers' lists them all)", strings.Join(e.Near, " or "))
	}
	return msg + ": run 'mcpscope servers' to list the configured ones"
}

// AmbiguousError is a name that several entries have.
type AmbiguousError struct {
	Name       string
	Candidates []Server
	Selectors  []string // what to type for each candidate
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q names %d configured servers; pick one with HOST/NAME (or --host):", e.Name, len(e.Candidates))
	w := 0
	for _, s := range e.Selectors {
		w = max(w, len(s))
	}
	same := false
	for i, s := range e.Candidates {
		fmt.Fprintf(&b, "\n  %-*s  %s", w, e.Selectors[i], s.File)
		if s.Host == ClaudeCode && s.Project != "" && filepath.Base(s.File) == ".claude.json" {
			fmt.Fprintf(&b, " (project %s)", s.Project)
		}
		for j := range i {
			same = same || e.Selectors[j] == e.Selectors[i]
		}
	}
	if same {
		b.WriteString("\nsome share host and name: rename one in its file, or give the target directly (URL, or -- and the command)")
	}
	return b.String()
}

// Find picks the server sel names: NAME when only one entry has that name,
// or HOST/NAME (cursor/github). Where one host has the name at several
// levels, the nearest wins as in the hosts themselves: the current
// project's entries over user entries, and entries of other projects (in
// ~/.claude.json) only when nothing else has the name.
func (c *Catalog) Find(sel string) (Server, error) {
	var cands []Server
	for _, s := range c.Servers {
		if s.Name == sel || s.Host+"/"+s.Name == sel {
			cands = append(cands, s)
		}
	}
	if len(cands) == 0 {
		return Server{}, c.notFound(sel)
	}
	cands = c.nearest(cands)
	if len(cands) == 1 {
		return cands[0], nil
	}
	e := &AmbiguousError{Name: sel, Candidates: cands}
	for _, s := range cands {
		e.Selectors = append(e.Selectors, s.Host+"/"+s.Name)
	}
	return Server{}, e
}

// Selector is the shortest thing to type that Find turns into s: its name
// when that is enough, else HOST/NAME.
func (c *Catalog) Selector(s Server) string {
	if f, err := c.Find(s.Name); err == nil && f.File == s.File && slices.Equal(f.path, s.path) {
		return s.Name
	}
	return s.Host + "/" + s.Name
}

// Shadowed is the entry that s's selector picks instead of s, when there
// is one: a nearer entry of the same host and name (the project's over the
// user's), or an entry of the current project over another project's.
func (c *Catalog) Shadowed(s Server) (Server, bool) {
	f, err := c.Find(s.Host + "/" + s.Name)
	if err != nil || (f.File == s.File && slices.Equal(f.path, s.path)) {
		return Server{}, false
	}
	return f, true
}

// Only is the catalog restricted to one host.
func (c *Catalog) Only(host string) *Catalog {
	o := *c
	o.Servers, o.Places, o.Problems, o.StaleWraps = nil, nil, nil, nil
	for _, s := range c.Servers {
		if s.Host == host {
			o.Servers = append(o.Servers, s)
		}
	}
	for _, p := range c.Places {
		if p.Host == host {
			o.Places = append(o.Places, p)
		}
	}
	for _, p := range c.Problems {
		if p.Host == host {
			o.Problems = append(o.Problems, p)
		}
	}
	for _, r := range c.StaleWraps {
		if r.Host == host {
			o.StaleWraps = append(o.StaleWraps, r)
		}
	}
	return &o
}

// rank orders one host's entries of a name, highest first: a project
// entry of the current directory in ~/.claude.json (Claude Code's "local"
// servers), the project's files, user files, other projects.
func (c *Catalog) rank(s Server) int {
	switch {
	case s.Scope != "project":
		return 1
	case !within(c.dir, s.Project):
		return 0
	case s.Host == ClaudeCode && filepath.Base(s.File) == ".claude.json":
		return 3
	}
	return 2
}

// nearest keeps, for each host, the highest-ranked entries, and drops
// other projects' entries when anything else matched.
func (c *Catalog) nearest(cands []Server) []Server {
	best := map[string]int{}
	near := false
	for _, s := range cands {
		r := c.rank(s)
		best[s.Host] = max(best[s.Host], r)
		near = near || r > 0
	}
	var out []Server
	for _, s := range cands {
		if r := c.rank(s); r == best[s.Host] && (r > 0 || !near) {
			out = append(out, s)
		}
	}
	return out
}

// within reports whether dir is project or inside it.
func within(dir, project string) bool {
	if dir == "" || project == "" {
		return false
	}
	rel, err := filepath.Rel(filepath.Clean(project), filepath.Clean(dir))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func (c *Catalog) notFound(sel string) error {
	e := &NotFoundError{Name: sel}
	name, in := sel, c
	if h, n, ok := strings.Cut(sel, "/"); ok && IsHost(h) {
		name, in = n, c.Only(h)
		e.Hosts = []string{h}
	}
	e.Empty = len(in.Servers) == 0
	seen := map[string]bool{}
	for _, s := range in.Servers {
		l, n := strings.ToLower(s.Name), strings.ToLower(name)
		if l == n || strings.Contains(l, n) || strings.Contains(n, l) {
			if sl := c.Selector(s); !seen[sl] {
				seen[sl] = true
				e.Near = append(e.Near, sl)
			}
		}
	}
	sort.Strings(e.Near)
	if len(e.Near) > 5 {
		e.Near = e.Near[:5]
	}
	return e
}
