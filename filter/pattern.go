package filter

import (
	"bytes"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pattern is one compiled text value. As a name (~m ~t ~id ~h) it is a glob
// that must match the whole name; as text (~c, bare text) a substring. Either
// may be a /regex/ instead, which searches.
type pattern struct {
	src   string         // as written (unquoted), for String
	regex bool           // written as /src/
	re    *regexp.Regexp // the regex; also a case-insensitive literal beyond ASCII
	fold  bool           // smart case: src has no upper-case letter
	lit   string         // the literal text (glob unescaped)
	litB  []byte         // lit, for searching content without a conversion
	glob  []rune         // glob items; nil when the glob has no wildcard
}

// Glob items beside literal runes.
const (
	globStar = -1 // *: any run of characters, / included
	globAny  = -2 // ?: one character
)

// newRegex compiles /src/. Regexes are case-sensitive as written: (?i) is there.
func newRegex(src string) (*pattern, error) {
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, err
	}
	return &pattern{src: src, regex: true, re: re}, nil
}

// newGlob compiles a name glob: * and ? are wildcards, \ makes the next
// character literal. fold forces case-insensitivity (header names); otherwise
// case follows smart case.
func newGlob(src string, fold bool) *pattern {
	p := &pattern{src: src, fold: fold || !hasUpper(src)}
	var items []rune
	wild := false
	for i := 0; i < len(src); {
		r, w := utf8.DecodeRuneInString(src[i:])
		i += w
		switch {
		case r == '*':
			r, wild = globStar, true
		case r == '?':
			r, wild = globAny, true
		case r == '\\' && i < len(src):
			r, w = utf8.DecodeRuneInString(src[i:])
			i += w
		}
		items = append(items, r)
	}
	if wild {
		p.glob = items
	} else {
		p.lit = string(items)
	}
	return p
}

// newText compiles a substring. Smart case folds ASCII by hand (fast, no
// allocation) and anything else through a (?i) regex.
func newText(src string) *pattern {
	p := &pattern{src: src, lit: src, litB: []byte(src), fold: !hasUpper(src)}
	switch {
	case !p.fold || isASCII(src):
		// src is already lower-case when folding
	case utf8.ValidString(src):
		p.re = regexp.MustCompile("(?i)" + regexp.QuoteMeta(src))
	default:
		p.fold = false // broken UTF-8 has no case: match the bytes
	}
	return p
}

func hasUpper(s string) bool {
	for _, r := range s {
		if unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// name reports whether the glob (or regex) matches s.
func (p *pattern) name(s string) bool {
	switch {
	case p.re != nil:
		return p.re.MatchString(s)
	case p.glob != nil:
		return globMatch(p.glob, s, p.fold)
	case p.fold:
		return strings.EqualFold(s, p.lit)
	}
	return s == p.lit
}

// everything reports whether the text matches whatever it is given, so the
// content need not be loaded.
func (p *pattern) everything() bool { return !p.regex && p.src == "" }

// inString reports whether the text occurs in s.
func (p *pattern) inString(s string) bool {
	switch {
	case p.re != nil:
		return p.re.MatchString(s)
	case p.fold:
		return containsFold(s, p.lit)
	}
	return strings.Contains(s, p.lit)
}

// inBytes reports whether the text occurs in b.
func (p *pattern) inBytes(b []byte) bool {
	switch {
	case p.re != nil:
		return p.re.Match(b)
	case p.fold:
		return containsFold(b, p.lit)
	}
	return bytes.Contains(b, p.litB)
}

// containsFold reports whether lower (lower-case ASCII) occurs in h, ignoring
// ASCII case. One loop for names and content alike.
func containsFold[T ~string | ~[]byte](h T, lower string) bool {
	if lower == "" {
		return true
	}
	c0, c1 := lower[0], toUpper(lower[0])
	for i := 0; i+len(lower) <= len(h); i++ {
		if h[i] != c0 && h[i] != c1 {
			continue
		}
		j := 1
		for j < len(lower) && toLower(h[i+j]) == lower[j] {
			j++
		}
		if j == len(lower) {
			return true
		}
	}
	return false
}

func toLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func toUpper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// globMatch matches items against all of s. A * remembers where it was and
// is widened one character at a time on a mismatch: linear in practice and
// O(len(s)·len(items)) at worst, never exponential.
func globMatch(items []rune, s string, fold bool) bool {
	pi, si := 0, 0
	star, starS := -1, 0
	for si < len(s) {
		r, w := utf8.DecodeRuneInString(s[si:])
		if pi < len(items) {
			switch it := items[pi]; {
			case it == globStar:
				star, starS = pi, si
				pi++
				continue
			case it == globAny || it == r || fold && equalFold(it, r):
				pi++
				si += w
				continue
			}
		}
		if star < 0 {
			return false
		}
		_, w = utf8.DecodeRuneInString(s[starS:])
		starS += w
		pi, si = star+1, starS
	}
	for pi < len(items) && items[pi] == globStar {
		pi++
	}
	return pi == len(items)
}

// equalFold is strings.EqualFold for one pair of runes.
func equalFold(a, b rune) bool {
	if a == b {
		return true
	}
	for f := unicode.SimpleFold(a); f != a; f = unicode.SimpleFold(f) {
		if f == b {
			return true
		}
	}
	return false
}
