package filter

import "strings"

// zero is the subject Match sees for nil.
var zero Subject

// Match reports whether the subject passes the filter. It never panics, and
// allocates nothing beyond what Subject.Content and regexes do.
func (f *Filter) Match(s *Subject) bool {
	if f == nil || f.root == nil {
		return true
	}
	if s == nil {
		s = &zero
	}
	e := eval{s: s}
	return f.root.match(&e)
}

// NeedsContent reports whether Match may call Subject.Content, so callers
// can skip reading bytes for filters that only look at fields.
func (f *Filter) NeedsContent() bool {
	return f.has(func(n *node) bool {
		return (n.op == opContent || n.op == opText) && !n.pat.everything()
	})
}

// Volatile reports whether the filter reads what changes while a call runs
// (~s, ~e, ~dur): a caller that caches results must match such a call's
// frames again when the call changes.
func (f *Filter) Volatile() bool {
	return f.has(func(n *node) bool { return n.op == opState || n.op == opError || n.op == opDur })
}

func (f *Filter) has(p func(*node) bool) bool {
	return f != nil && f.root != nil && f.root.any(p)
}

// String is the canonical form: explicit &, the fewest parentheses, values
// quoted only when they must be, units normalised. It parses back to a
// filter that matches the same subjects; the empty filter is "".
func (f *Filter) String() string {
	if f == nil || f.root == nil {
		return ""
	}
	var b strings.Builder
	f.root.write(&b)
	return b.String()
}

func (n *node) write(b *strings.Builder) {
	switch n.op {
	case opAnd, opOr:
		sep := " & "
		if n.op == opOr {
			sep = " | "
		}
		for i, k := range n.kids {
			if i > 0 {
				b.WriteString(sep)
			}
			k.writeIn(b, n.op == opAnd && k.op == opOr)
		}
		return
	case opNot:
		b.WriteByte('!')
		n.kids[0].writeIn(b, n.kids[0].op == opAnd || n.kids[0].op == opOr)
		return
	case opText:
		b.WriteString(n.pat.String())
		return
	}
	b.WriteString("~" + termName(n.op))
	if v := n.value(); v != "" {
		b.WriteString(" " + v)
	}
}

func (n *node) writeIn(b *strings.Builder, parens bool) {
	if parens {
		b.WriteByte('(')
	}
	n.write(b)
	if parens {
		b.WriteByte(')')
	}
}

// value is a term's value as it is written back.
func (n *node) value() string {
	switch n.op {
	case opKind, opState, opDir:
		return n.word
	case opDur:
		return durations.format(n.q)
	case opSize:
		return sizes.format(n.q)
	case opHeader:
		if n.val == nil {
			return quote(n.pat.src)
		}
		return quote(n.pat.src + "=" + n.val.src)
	case opError:
		return ""
	}
	return n.pat.String()
}

// String writes the pattern back: /regex/, or text quoted when it must be.
func (p *pattern) String() string {
	if !p.regex {
		return quote(p.src)
	}
	var b strings.Builder
	b.WriteByte('/')
	for i := 0; i < len(p.src); i++ {
		switch c := p.src[i]; {
		case c == '/':
			b.WriteString(`\/`)
		case c == '\\' && i+1 < len(p.src):
			b.WriteString(p.src[i : i+2]) // an escape pair stays whole
			i++
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('/')
	return b.String()
}

// quote returns s as one value token: bare when it reads back the same,
// "quoted" otherwise.
func quote(s string) string {
	if plain(s) {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// plain reports whether s lexes back as one word equal to s.
func plain(s string) bool {
	if s == "" || strings.ContainsAny(s[:1], `~!/`) {
		return false
	}
	t, end := lexWord(s, 0)
	return end == len(s) && t.text == s && !strings.ContainsAny(s, `"'`)
}
