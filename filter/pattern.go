package filter

import (
	"bytes"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"mcpscope/internal/ascii"
)

// pattern is one compiled text value. As a name (~m ~t ~id ~h) it is a glob
// that must match the whole name; as text (~c, bare text) a substring. Either
// may be a /regex/ instead, which searches.
type pattern struct {
	src   string         // as written (unquoted), for String
	regex bool           // written as /src/
	re    *regexp.Regexp // the regex
	fold  bool           // smart case: src has no upper-case letter
	lit   string         // the literal text (glob unescaped)
	litB  []byte         // lit, for searching content without a conversion
	glob  []rune         // glob items; nil when the glob has no wildcard
	first *[256]bool     // folded text: the bytes a match can start with
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
	var lit strings.Builder // the bytes as they are, broken UTF-8 included
	wild := false
	for i := 0; i < len(src); {
		r, w := utf8.DecodeRuneInString(src[i:])
		switch {
		case r == '*':
			r, wild = globStar, true
		case r == '?':
			r, wild = globAny, true
		case r == '\\' && i+1 < len(src):
			i++
			r, w = utf8.DecodeRuneInString(src[i:])
		}
		items = append(items, r)
		lit.WriteString(src[i : i+w])
		i += w
	}
	if wild {
		p.glob = items
	} else {
		p.lit = lit.String()
	}
	return p
}

// newText compiles a substring. Smart case folds by hand (Unicode simple
// folding, as strings.EqualFold): no regex, no allocation per match.
func newText(src string) *pattern {
	p := &pattern{src: src, lit: src, litB: []byte(src)}
	// Broken UTF-8 has no case: such text matches its bytes exactly.
	if src != "" && !hasUpper(src) && utf8.ValidString(src) {
		p.fold = true
		p.first = firstBytes(src)
	}
	return p
}

// firstBytes marks the bytes that can start a match of lower: the first
// bytes of every case of its first rune (k: k, K and the Kelvin sign).
func firstBytes(lower string) *[256]bool {
	var t [256]bool
	r0, _ := utf8.DecodeRuneInString(lower)
	r := r0
	for {
		t[utf8.AppendRune(nil, r)[0]] = true
		if r = unicode.SimpleFold(r); r == r0 {
			return &t
		}
	}
}

func hasUpper(s string) bool {
	for _, r := range s {
		if unicode.IsUpper(r) {
			return true
		}
	}
	return false
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
		return containsFold(s, p.lit, p.first)
	}
	return strings.Contains(s, p.lit)
}

// inBytes reports whether the text occurs in b.
func (p *pattern) inBytes(b []byte) bool {
	switch {
	case p.re != nil:
		return p.re.Match(b)
	case p.fold:
		return containsFold(b, p.lit, p.first)
	}
	return bytes.Contains(b, p.litB)
}

// containsFold reports whether lower (no upper-case letter, valid UTF-8)
// occurs in h ignoring case; first is firstBytes(lower). One loop for names
// and content alike.
func containsFold[T ~string | ~[]byte](h T, lower string, first *[256]bool) bool {
	for i := 0; i < len(h); i++ {
		if first[h[i]] && hasPrefixFold(h[i:], lower) {
			return true
		}
	}
	return false
}

// hasPrefixFold compares rune by rune: cases may differ in length (ſ and s).
func hasPrefixFold[T ~string | ~[]byte](h T, lower string) bool {
	j := 0
	for k := 0; k < len(lower); {
		if j >= len(h) {
			return false
		}
		if pc, hc := lower[k], h[j]; pc < utf8.RuneSelf && hc < utf8.RuneSelf {
			if ascii.Lower(hc) != pc {
				return false
			}
			j, k = j+1, k+1
			continue
		}
		pr, pw := utf8.DecodeRuneInString(lower[k:])
		hr, hw := utf8.DecodeRuneInString(string(h[j:min(j+utf8.UTFMax, len(h))]))
		if hr == utf8.RuneError && hw == 1 || !equalFold(pr, hr) {
			return false
		}
		j, k = j+hw, k+pw
	}
	return true
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
