package hosts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// The hosts' files are JSON, and VS Code's are JSONC (comments, trailing
// commas). One reader serves both: blank turns JSONC into JSON at the same
// byte offsets, so a value found in the blanked text is the same span of the
// file as written, and wrap can replace that span and nothing else.

// blank returns src with comments, trailing commas and a leading BOM
// replaced by spaces (newlines kept, for line numbers).
func blank(src []byte) ([]byte, error) {
	b := bytes.Clone(src)
	if bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
		copy(b, "   ")
	}
	// Comments first: a trailing comma may be followed by one.
	for i := 0; i < len(b); {
		switch {
		case b[i] == '"':
			i = stringEnd(b, i)
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				line, col := lineCol(src, i)
				return nil, fmt.Errorf("line %d column %d: a /* comment never ends", line, col)
			}
			for j := i; j < i+2+end+2; j++ {
				if b[j] != '\n' {
					b[j] = ' '
				}
			}
			i += 2 + end + 2
		default:
			i++
		}
	}
	for i := 0; i < len(b); {
		switch b[i] {
		case '"':
			i = stringEnd(b, i)
		case ',':
			j := i + 1
			for j < len(b) && isSpace(b[j]) {
				j++
			}
			if j < len(b) && (b[j] == '}' || b[j] == ']') {
				b[i] = ' '
			}
			i++
		default:
			i++
		}
	}
	return b, nil
}

// stringEnd is the index just past the JSON string starting at b[i] (or
// len(b) when it never ends: the JSON check reports that).
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// lineCol is the 1-based line and column of byte off in src.
func lineCol(src []byte, off int) (line, col int) {
	off = min(max(off, 0), len(src))
	line = 1 + bytes.Count(src[:off], []byte("\n"))
	col = off - bytes.LastIndexByte(src[:off], '\n')
	return line, col
}

// node is one JSON value of a file, with its span in the file.
type node struct {
	kind       byte // '{', '[', '"' or 'v' (number, true, false, null)
	start, end int
	members    []member // objects, in file order
	elems      []*node  // arrays
}

type member struct {
	key      string
	keyStart int
	val      *node
}

// get is the value of key in an object (the last one, as encoding/json
// does with repeated keys), nil when there is none.
func (n *node) get(key string) *node {
	if m := n.member(key); m != nil {
		return m.val
	}
	return nil
}

func (n *node) member(key string) *member {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return &n.members[i]
		}
	}
	return nil
}

// at follows path from n, nil when a key is missing.
func (n *node) at(path []string) *node {
	for _, k := range path {
		n = n.get(k)
	}
	return n
}

// parsed is a file read as JSONC.
type parsed struct {
	src, json []byte // as written, and blanked to plain JSON
	root      *node
}

// parseJSONC reads src as JSONC; the error names the line and column.
func parseJSONC(src []byte) (*parsed, error) {
	b, err := blank(src)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(src, int(se.Offset)-1)
			return nil, fmt.Errorf("line %d column %d: %s", line, col, strings.TrimPrefix(se.Error(), "json: "))
		}
		return nil, err
	}
	p := &tree{b: b}
	root, err := p.value()
	if err != nil {
		return nil, err
	}
	return &parsed{src: src, json: b, root: root}, nil
}

// tree builds nodes over JSON already known to be valid.
type tree struct {
	b []byte
	i int
}

func (t *tree) ws() {
	for t.i < len(t.b) && isSpace(t.b[t.i]) {
		t.i++
	}
}

func (t *tree) value() (*node, error) {
	t.ws()
	if t.i >= len(t.b) {
		return nil, errors.New("unexpected end of JSON")
	}
	n := &node{start: t.i}
	switch t.b[t.i] {
	case '{':
		n.kind = '{'
		t.i++
		for t.ws(); t.i < len(t.b) && t.b[t.i] != '}'; t.ws() {
			ks := t.i
			t.i = stringEnd(t.b, t.i)
			var key string
			if err := json.Unmarshal(t.b[ks:t.i], &key); err != nil {
				return nil, err
			}
			t.ws()
			t.i++ // ':'
			v, err := t.value()
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, member{key: key, keyStart: ks, val: v})
			t.comma()
		}
	case '[':
		n.kind = '['
		t.i++
		for t.ws(); t.i < len(t.b) && t.b[t.i] != ']'; t.ws() {
			v, err := t.value()
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
			t.comma()
		}
	case '"':
		n.kind = '"'
		t.i = stringEnd(t.b, t.i)
		n.end = t.i
		return n, nil
	default:
		n.kind = 'v'
		for t.i < len(t.b) && !isSpace(t.b[t.i]) && !strings.ContainsRune(",]}", rune(t.b[t.i])) {
			t.i++
		}
		n.end = t.i
		return n, nil
	}
	t.i++ // the closing bracket
	n.end = t.i
	return n, nil
}

func (t *tree) comma() {
	t.ws()
	if t.i < len(t.b) && t.b[t.i] == ',' {
		t.i++
	}
}

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// splice applies non-overlapping edits to src.
func splice(src []byte, edits []edit) []byte {
	sort.Slice(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var out bytes.Buffer
	at := 0
	for _, e := range edits {
		out.Write(src[at:e.start])
		out.WriteString(e.text)
		at = e.end
	}
	out.Write(src[at:])
	return out.Bytes()
}

// quote is s as a JSON string, with <, > and & as they are.
func quote(s string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
