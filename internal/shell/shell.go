// Package shell quotes words for a POSIX shell, for command lines mcpscope
// shows or copies for people to paste.
package shell

import "strings"

// safe are the bytes a word may hold and stay unquoted.
const safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+,%^"

// Quote returns w as one shell word: unchanged when it needs no quotes,
// else in single quotes (with any ' inside written '\”).
func Quote(w string) string {
	if w != "" && strings.Trim(w, safe) == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// Join quotes each word and joins them with spaces.
func Join(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
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
