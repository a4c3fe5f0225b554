// Package shell quotes words for a POSIX shell, for command lines mcpscope
// shows or copies for people to paste.
//
// Every word that came from a server, a journal, a state-store record or a
// config file goes through Quote, and the result is safe twice over: pasted,
// it is exactly that one word (nothing in it runs); shown, it holds no byte
// a terminal acts on. A word with control characters (newline, tab, ESC…),
// DEL, C1 controls, invisible or bidi characters or invalid UTF-8 is written
// in $'…' with those bytes as octal escapes, so the line stays printable
// and still pastes back to the very same bytes (bash, zsh, ksh, busybox sh
// and POSIX.1-2024 sh read $'…'). termsafe.Line of a quoted word is the word
// itself: sanitising after quoting changes nothing, so it never un-quotes.
package shell

import (
	"strings"
	"unicode/utf8"

	"mcpscope/internal/termsafe"
)

// safe are the bytes a word may hold and stay unquoted.
const safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+,%^"

// Quote returns w as one shell word: unchanged when it needs no quotes;
// else in single quotes (with any ' inside written '\”); or, when w holds
// bytes a terminal must not get raw, in $'…' with those bytes escaped.
func Quote(w string) string {
	if w != "" && strings.Trim(w, safe) == "" {
		return w
	}
	if !needsEscapes(w) {
		return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	// $'…': the bytes to hide as \ooo (three digits, which every dialect
	// reads the same way; \x is greedy in some), ' as \047 too so that
	// quote-following scanners (transport's redactor) see no quote inside,
	// and \ as \\. Printable characters stay as they are.
	const oct = "01234567"
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(w); {
		r, n := utf8.DecodeRuneInString(w[i:])
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\'' || hidden(r, n):
			for _, c := range []byte(w[i : i+n]) {
				b.Write([]byte{'\\', oct[c>>6], oct[c>>3&7], oct[c&7]})
			}
		default:
			b.WriteString(w[i : i+n])
		}
		i += n
	}
	b.WriteByte('\'')
	return b.String()
}

// needsEscapes reports whether w holds a byte Quote must escape.
func needsEscapes(w string) bool {
	for i := 0; i < len(w); {
		r, n := utf8.DecodeRuneInString(w[i:])
		if hidden(r, n) {
			return true
		}
		i += n
	}
	return false
}

// hidden reports a rune (of encoded length n) that must not reach a
// terminal or a paste raw: the controls (a pasted tab completes, a pasted
// newline runs the line so far), invalid UTF-8, and what termsafe hides.
func hidden(r rune, n int) bool {
	return r < 0x20 || (r == utf8.RuneError && n == 1) || termsafe.Hidden(r)
}

// Join quotes each word and joins them with spaces: the one way mcpscope
// builds a command line it prints or copies.
func Join(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}

// IsFlag reports a word that mcpscope's command line reads as a flag
// where an argument is meant (a task id, a tool name from a server):
// quoting does not change that, so no printed command line can pass it
// there, and callers print none.
func IsFlag(w string) bool { return len(w) > 1 && w[0] == '-' }

// Ref is one word of prefix followed by the value of the variable VarName
// makes of name, for a secret a person sets in their own shell (never its
// value): "X-Api-Key: $X_API_KEY". A prefix of plain words goes in the
// double quotes; any other (a header name from a config file) is quoted on
// its own, so nothing in it expands.
func Ref(prefix, name string) string {
	ref := `"$` + VarName(name) + `"`
	if strings.Trim(prefix, safe+" ") == "" {
		return `"` + prefix + ref[1:]
	}
	return Quote(prefix) + ref
}

// VarName is a shell variable name made from a header or setting name, for
// a reference a person fills in: X-Api-Key becomes X_API_KEY.
func VarName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, name)
}
