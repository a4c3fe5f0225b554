package filter

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind uint8

const (
	tEOF tokKind = iota
	tLParen
	tRParen
	tNot
	tAnd
	tOr
	tTerm   // ~name; text is the name
	tWord   // unquoted text
	tQuoted // "..." or '...'; text is unescaped
	tRegex  // /.../; text is the regex source
	tBad    // the first lexing error; nothing follows it
)

type token struct {
	kind tokKind
	off  int // byte offset in the source
	text string
	err  *SyntaxError // tBad
}

// isValue reports whether the token can be a term's value.
func (t token) isValue() bool {
	return t.kind == tWord || t.kind == tQuoted || t.kind == tRegex
}

// startsOperand reports whether the token can begin an operand, which is
// what makes two adjacent terms an implicit &.
func (t token) startsOperand() bool {
	return t.isValue() || t.kind == tTerm || t.kind == tNot || t.kind == tLParen
}

// delimiters end an unquoted word wherever they appear in it.
const delimiters = "()&|"

// lex splits src into tokens, ending with tEOF at len(src), or with tBad
// at the first error: the parser reports it only if nothing before it is
// wrong, so the leftmost error wins (~mtools/call is an unknown filter, not
// an unclosed regex).
func lex(src string) []token {
	var toks []token
	for i := 0; i < len(src); {
		r, w := utf8.DecodeRuneInString(src[i:])
		if unicode.IsSpace(r) {
			i += w
			continue
		}
		if k, ok := punct[r]; ok {
			toks = append(toks, token{kind: k, off: i})
			i++
			continue
		}
		var t token
		var end int
		var err *SyntaxError
		switch r {
		case '~':
			t, end, err = lexTerm(src, i)
		case '"', '\'':
			t, end, err = lexQuoted(src, i)
		case '/':
			t, end, err = lexRegex(src, i)
		default:
			t, end = lexWord(src, i)
		}
		if err != nil {
			return append(toks, token{kind: tBad, off: i, err: err})
		}
		toks = append(toks, t)
		i = end
	}
	return append(toks, token{kind: tEOF, off: len(src)})
}

var punct = map[rune]tokKind{'(': tLParen, ')': tRParen, '!': tNot, '&': tAnd, '|': tOr}

// lexTerm reads ~name: the name is ASCII letters, and whatever follows them
// starts the next token, so ~dur>1s reads as ~dur >1s.
func lexTerm(src string, i int) (token, int, *SyntaxError) {
	j := i + 1
	for j < len(src) && isLetter(src[j]) {
		j++
	}
	if j == i+1 {
		return token{}, 0, errAt(src, i, "expected a filter name after ~")
	}
	return token{kind: tTerm, off: i, text: src[i+1 : j]}, j, nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// lexQuoted reads "..." or '...'. A backslash escapes the quote, a backslash,
// n (newline) and t (tab); before anything else it stays, so "\*" and "\u00e9"
// reach the glob or the content search as written.
func lexQuoted(src string, i int) (token, int, *SyntaxError) {
	q := src[i]
	var b strings.Builder
	for j := i + 1; j < len(src); j++ {
		c := src[j]
		switch {
		case c == q:
			return token{kind: tQuoted, off: i, text: b.String()}, j + 1, nil
		case c == '\\' && j+1 < len(src):
			j++
			b.WriteString(unescape(src[j]))
		default:
			b.WriteByte(c)
		}
	}
	return token{}, 0, errAt(src, i, "unclosed %c quote", q)
}

func unescape(c byte) string {
	switch c {
	case '"', '\'', '\\':
		return string(c)
	case 'n':
		return "\n"
	case 't':
		return "\t"
	}
	return "\\" + string(c)
}

// lexRegex reads /.../; \/ is a slash, every other escape is the regex's own.
func lexRegex(src string, i int) (token, int, *SyntaxError) {
	var b strings.Builder
	for j := i + 1; j < len(src); j++ {
		c := src[j]
		switch {
		case c == '/':
			return token{kind: tRegex, off: i, text: b.String()}, j + 1, nil
		case c == '\\' && j+1 < len(src):
			j++
			if src[j] != '/' {
				b.WriteByte('\\')
			}
			b.WriteByte(src[j])
		default:
			b.WriteByte(c)
		}
	}
	return token{}, 0, errAt(src, i, "unclosed /regex/: no closing /")
}

// lexWord reads unquoted text up to a space or one of ( ) & |.
func lexWord(src string, i int) (token, int) {
	j := i
	for j < len(src) {
		r, w := utf8.DecodeRuneInString(src[j:])
		if unicode.IsSpace(r) || strings.ContainsRune(delimiters, r) {
			break
		}
		j += w
	}
	return token{kind: tWord, off: i, text: src[i:j]}, j
}
