package hosts

import (
	"errors"
	"path/filepath"
	"strings"
)

// span is a range of a file's bytes.
type span struct{ start, end int }

// entryText is one server entry in its file's text, as wrap edits it: where
// the entry is, the command line the host reads from it, and where its
// command and args sit. Each format (JSONC, TOML) finds it its own way; the
// edits (wrapEdits, unwrapEdits) are the same for all.
type entryText struct {
	span
	command   string
	args      []string
	decodeErr error // the command line could not be read

	cmd     *span // the command's string value; nil: none, or not a string
	argsAt  *span // the args array; nil: no args key
	elems   []span
	argsErr error // args is there but is not an array of strings
	// addArgs is the edit that adds args = [list] right after the
	// command, in the file's own syntax and layout.
	addArgs func(list string) edit
	// layout is the text whose blanks say how elements are laid out (for
	// JSONC, the file with its comments blanked).
	layout []byte
}

// findEntry finds the entry at path in a host file's text: nil when there
// is none; the error is a file that cannot be parsed.
func findEntry(file string, src []byte, path []string) (*entryText, error) {
	if isTOML(file) {
		return findTOMLEntry(src, path)
	}
	p, err := parseJSONC(src)
	if err != nil {
		return nil, err
	}
	n := p.root.at(path)
	if n == nil || n.kind != '{' {
		return nil, nil
	}
	e := &entryText{span: span{n.start, n.end}, layout: p.json}
	raw, err := decodeEntry(p, n)
	e.command, e.args, e.decodeErr = raw.Command, raw.Args, err
	if cm := n.member("command"); cm != nil && cm.val.kind == '"' {
		e.cmd = &span{cm.val.start, cm.val.end}
		e.addArgs = func(list string) edit {
			return edit{cm.val.end, cm.val.end, "," + lineBreak(p.json, cm.keyStart) + `"args": [` + list + "]"}
		}
	}
	if am := n.member("args"); am != nil {
		if am.val.kind != '[' {
			e.argsErr = errors.New(`its "args" is not an array`)
		} else {
			e.argsAt = &span{am.val.start, am.val.end}
			for _, el := range am.val.elems {
				e.elems = append(e.elems, span{el.start, el.end})
			}
		}
	}
	return e, nil
}

// isTOML reports whether a host file is TOML (Codex CLI's config.toml).
func isTOML(file string) bool { return strings.EqualFold(filepath.Ext(file), ".toml") }
