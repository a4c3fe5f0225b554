package filter

import (
	"slices"
	"strings"
)

type op uint8

const (
	opAnd op = iota
	opOr
	opNot
	opMethod
	opTool
	opKind
	opError
	opState
	opDir
	opID
	opDur
	opSize
	opContent
	opHeader
	opText // bare text
)

// node is one operator or term. Evaluation is one switch over concrete
// nodes, so the per-match state stays on the stack.
type node struct {
	op    op
	kids  []*node // as written, for String
	order []*node // kids, cheapest first, for evaluation
	pat   *pattern
	val   *pattern // ~h: the value glob, nil for "any value"
	word  string   // ~k ~s ~d: the keyword, lower-case
	q     quantity
}

// eval is one Match: the subject and its content, loaded at most once.
type eval struct {
	s       *Subject
	content []byte
	loaded  bool
}

func (e *eval) bytes() []byte {
	if !e.loaded {
		e.loaded = true
		if e.s.Content != nil {
			e.content = e.s.Content()
		}
	}
	return e.content
}

func (n *node) match(e *eval) bool {
	s := e.s
	switch n.op {
	case opAnd:
		for _, k := range n.order {
			if !k.match(e) {
				return false
			}
		}
		return true
	case opOr:
		for _, k := range n.order {
			if k.match(e) {
				return true
			}
		}
		return false
	case opNot:
		return !n.kids[0].match(e)
	case opMethod:
		return n.pat.name(s.Method)
	case opTool:
		return n.pat.name(s.Tool)
	case opID:
		return n.pat.name(s.ID) || isQuoted(s.ID) && n.pat.name(s.ID[1:len(s.ID)-1])
	case opKind:
		return kindIs(s.Kind, n.word)
	case opError:
		return s.IsError
	case opState:
		return strings.EqualFold(s.State, n.word)
	case opDir:
		return strings.EqualFold(s.Dir, n.word)
	case opDur:
		return s.Duration > 0 && n.q.holds(int64(s.Duration))
	case opSize:
		return n.q.holds(int64(s.Size))
	case opContent:
		return n.pat.everything() || n.pat.inBytes(e.bytes())
	case opText:
		return n.pat.everything() || n.pat.inString(s.Method) || n.pat.inString(s.Tool) || n.pat.inBytes(e.bytes())
	case opHeader:
		return n.header(s.Headers)
	}
	return false
}

// kindIs: progress and log are notifications too.
func kindIs(kind, want string) bool {
	if strings.EqualFold(kind, want) {
		return true
	}
	return want == "notification" && (strings.EqualFold(kind, "progress") || strings.EqualFold(kind, "log"))
}

func isQuoted(id string) bool { return len(id) >= 2 && id[0] == '"' && id[len(id)-1] == '"' }

func (n *node) header(h map[string]string) bool {
	for k, v := range h {
		if n.pat.name(k) && (n.val == nil || n.val.name(v)) {
			return true
		}
	}
	return false
}

// cost ranks nodes so & and | try cheap fields before regexes and content.
func (n *node) cost() int {
	switch n.op {
	case opAnd, opOr, opNot:
		c := 0
		for _, k := range n.kids {
			c = max(c, k.cost())
		}
		return c
	case opContent, opText:
		if n.pat.everything() {
			return 0
		}
		return 3
	case opMethod, opTool, opID, opHeader:
		if n.pat.regex {
			return 2
		}
		return 1
	}
	return 0
}

// finish sets the evaluation order of an & or |.
func (n *node) finish() *node {
	n.order = slices.Clone(n.kids)
	slices.SortStableFunc(n.order, func(a, b *node) int { return a.cost() - b.cost() })
	return n
}

// any reports whether some node in the tree satisfies f.
func (n *node) any(f func(*node) bool) bool {
	if f(n) {
		return true
	}
	return slices.ContainsFunc(n.kids, func(k *node) bool { return k.any(f) })
}
