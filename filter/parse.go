package filter

import (
	"fmt"
	"regexp/syntax"
	"strings"
)

// Filter is a parsed filter expression. It is immutable and safe for
// concurrent use; a nil *Filter matches everything.
type Filter struct {
	root *node // nil: the empty filter
}

// Parse reads a filter expression (see the package doc). The empty string
// (or only spaces) is the filter that matches everything. Errors are
// *SyntaxError.
func Parse(src string) (*Filter, error) {
	p := &parser{src: src, toks: lex(src)}
	if p.peek().kind == tEOF {
		return &Filter{}, nil
	}
	root, err := p.or(0, "")
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF { // only a ) can be left over
		return nil, p.fail(t, "unexpected ): there is no ( to close")
	}
	return &Filter{root: root}, nil
}

// maxDepth bounds nesting of ( and !, so no input can exhaust the stack.
const maxDepth = 100

type parser struct {
	src  string
	toks []token
	pos  int
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF && t.kind != tBad {
		p.pos++
	}
	return t
}

// fail is the error at token t: its own when it could not be lexed.
func (p *parser) fail(t token, format string, args ...any) *SyntaxError {
	if t.kind == tBad {
		return t.err
	}
	return errAt(p.src, t.off, format, args...)
}

// or reads and ( | and )*. after names what came before, for errors.
func (p *parser) or(depth int, after string) (*node, error) {
	n, err := p.and(depth, after)
	if err != nil {
		return nil, err
	}
	kids := []*node{n}
	for p.peek().kind == tOr {
		p.next()
		k, err := p.and(depth, "|")
		if err != nil {
			return nil, err
		}
		kids = appendFlat(kids, k, opOr)
	}
	return group(opOr, kids), nil
}

// and reads unary ( [&] unary )*: adjacent operands are an implicit &.
func (p *parser) and(depth int, after string) (*node, error) {
	n, err := p.unary(depth, after)
	if err != nil {
		return nil, err
	}
	kids := []*node{n}
	for {
		t := p.peek()
		switch {
		case t.kind == tAnd:
			p.next()
			after = "&"
		case t.startsOperand():
			after = ""
		default:
			return group(opAnd, kids), nil
		}
		k, err := p.unary(depth, after)
		if err != nil {
			return nil, err
		}
		kids = appendFlat(kids, k, opAnd)
	}
}

// appendFlat adds k to the operands of an op, taking in k's own operands
// when k is the same op: (a & b) & c is a & b & c.
func appendFlat(kids []*node, k *node, o op) []*node {
	if k.op == o {
		return append(kids, k.kids...)
	}
	return append(kids, k)
}

func group(o op, kids []*node) *node {
	if len(kids) == 1 {
		return kids[0]
	}
	return (&node{op: o, kids: kids}).finish()
}

// unary reads ! unary, ( or ), or a term.
func (p *parser) unary(depth int, after string) (*node, error) {
	t := p.peek()
	if (t.kind == tNot || t.kind == tLParen) && depth >= maxDepth {
		return nil, p.fail(t, "nested too deeply (more than %d levels of ( and !)", maxDepth)
	}
	switch {
	case t.kind == tNot:
		p.next()
		k, err := p.unary(depth+1, "!")
		if err != nil {
			return nil, err
		}
		return &node{op: opNot, kids: []*node{k}}, nil
	case t.kind == tLParen:
		p.next()
		n, err := p.or(depth+1, "(")
		if err != nil {
			return nil, err
		}
		switch end := p.next(); end.kind {
		case tRParen:
			return n, nil
		case tBad:
			return nil, end.err
		}
		return nil, p.fail(t, "unclosed (: no ) matches it")
	case t.kind == tTerm:
		p.next()
		return p.term(t)
	case t.isValue():
		p.next()
		return p.bare(t)
	}
	return nil, p.missing(t, after)
}

// missing explains why t cannot start an operand here.
func (p *parser) missing(t token, after string) *SyntaxError {
	switch {
	case after != "":
		return p.fail(t, "expected a filter after %s", after)
	case t.kind == tRParen:
		return p.fail(t, "unexpected ): there is no ( to close")
	case t.kind == tEOF:
		return p.fail(t, "expected a filter")
	}
	return p.fail(t, "expected a filter before %s", p.src[t.off:t.off+1])
}

// bare reads bare text: a substring, or a /regex/.
func (p *parser) bare(t token) (*node, error) {
	pat, err := p.text(t)
	if err != nil {
		return nil, err
	}
	return &node{op: opText, pat: pat}, nil
}

func (p *parser) text(t token) (*pattern, error) {
	if t.kind == tRegex {
		return p.regex(t)
	}
	return newText(t.text), nil
}

func (p *parser) glob(t token) (*pattern, error) {
	if t.kind == tRegex {
		return p.regex(t)
	}
	return newGlob(t.text, false), nil
}

func (p *parser) regex(t token) (*pattern, error) {
	pat, err := newRegex(t.text)
	if err != nil {
		msg := err.Error()
		if se, ok := err.(*syntax.Error); ok {
			msg = se.Code.String()
			if se.Expr != t.text {
				msg += " " + se.Expr
			}
		}
		return nil, p.fail(t, "bad regex /%s/: %s", t.text, msg)
	}
	return pat, nil
}

type termSpec struct {
	name string
	op   op
	noun string // the value, for "expected a method after ~m"; "" takes none
}

// terms are the ~names, in the order the docs give them: what each does and
// what value it takes.
var terms = []termSpec{
	{"m", opMethod, "a method"},
	{"t", opTool, "a tool, prompt or resource name"},
	{"k", opKind, "a kind"},
	{"e", opError, ""},
	{"s", opState, "a state"},
	{"d", opDir, "a direction"},
	{"id", opID, "an id"},
	{"dur", opDur, "a duration"},
	{"size", opSize, "a size"},
	{"c", opContent, "text"},
	{"h", opHeader, "a header name"},
}

func lookupTerm(name string) (termSpec, bool) {
	for _, spec := range terms {
		if spec.name == name {
			return spec, true
		}
	}
	return termSpec{}, false
}

// termName is the ~name of a term's op.
func termName(o op) string {
	for _, t := range terms {
		if t.op == o {
			return t.name
		}
	}
	return "?"
}

// Keyword values of ~k, ~s and ~d.
var (
	kinds  = []string{"request", "response", "notification", "progress", "log", "stderr", "garbage", "event"}
	states = []string{"ok", "error", "cancelled", "late", "lost", "detached", "pending", "streaming", "input"}
	dirs   = []string{"in", "out", "local"}
)

func (p *parser) term(t token) (*node, error) {
	spec, ok := lookupTerm(t.text)
	if !ok {
		var names []string
		for _, s := range terms {
			names = append(names, "~"+s.name)
		}
		return nil, p.fail(t, "unknown filter ~%s (there are %s)", t.text, strings.Join(names, " "))
	}
	n := &node{op: spec.op}
	if spec.noun == "" {
		return n, nil
	}
	v := p.peek()
	if !v.isValue() {
		return nil, p.fail(v, "expected %s after ~%s", spec.noun, t.text)
	}
	p.next()
	var err error
	switch n.op {
	case opMethod, opTool, opID:
		n.pat, err = p.glob(v)
	case opContent:
		n.pat, err = p.text(v)
	case opKind:
		n.word, err = p.keyword(t, v, kinds)
	case opState:
		n.word, err = p.keyword(t, v, states)
	case opDir:
		n.word, err = p.keyword(t, v, dirs)
	case opDur:
		n.q, err = p.quantity(t, v, durations)
	case opSize:
		n.q, err = p.quantity(t, v, sizes)
	case opHeader:
		n.pat, n.val, err = p.header(v)
	}
	if err != nil {
		return nil, err
	}
	return n, nil
}

// keyword reads the value of ~k, ~s or ~d, ignoring case.
func (p *parser) keyword(t, v token, words []string) (string, error) {
	if v.kind != tRegex {
		w := strings.ToLower(v.text)
		for _, k := range words {
			if w == k {
				return k, nil
			}
		}
	}
	return "", p.fail(v, "~%s takes one of %s, not %s", t.text, strings.Join(words, ", "), shown(v))
}

// shown is a value as the user wrote it, for messages.
func shown(v token) string {
	if v.kind == tRegex {
		return "/" + v.text + "/"
	}
	return fmt.Sprintf("%q", v.text)
}

// quantity reads the value of ~dur or ~size; the operator may stand apart
// from the number (~dur > 500ms).
func (p *parser) quantity(t, v token, m *measure) (quantity, error) {
	text := v.text
	if v.kind == tRegex {
		return quantity{}, p.fail(v, "~%s takes a %s such as >500ms, not a /regex/", t.text, m.what)
	}
	if k := p.peek().kind; isOperator(text) && (k == tWord || k == tQuoted) {
		text += p.next().text
	}
	q, err := m.parse(text)
	if err != nil {
		return q, p.fail(v, "%s", err)
	}
	return q, nil
}

func isOperator(s string) bool {
	for _, c := range cmpText {
		if s == c.text {
			return true
		}
	}
	return false
}

// header reads NAME[=VALUE]: globs, the name always case-insensitive.
func (p *parser) header(v token) (name, val *pattern, err error) {
	if v.kind == tRegex {
		return nil, nil, p.fail(v, "~h takes a header name glob, not a /regex/")
	}
	n, value, hasValue := strings.Cut(v.text, "=")
	if n == "" {
		return nil, nil, p.fail(v, "expected a header name before =")
	}
	name = newGlob(n, true)
	if hasValue {
		val = newGlob(value, false)
	}
	return name, val, nil
}
