package filter

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SyntaxError says what is wrong with a filter and where.
type SyntaxError struct {
	Col   int    // 1-based column, in characters; len+1 means "at the end"
	Msg   string // what failed, in the filter's own words
	Input string // the filter as given
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.Col, e.Msg) }

// Caret renders the input on one line with a caret under the column:
//
//	~m tools/call & (~e
//	                ^
//
// Control characters show as spaces so the caret stays aligned; wide
// characters (CJK, emoji) count as one column and may shift it.
func (e *SyntaxError) Caret() string {
	var b strings.Builder
	for _, r := range e.Input {
		if unicode.IsControl(r) {
			r = ' '
		}
		b.WriteRune(r)
	}
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(" ", max(e.Col-1, 0)))
	b.WriteByte('^')
	return b.String()
}

// errAt makes a SyntaxError at byte offset off of src.
func errAt(src string, off int, format string, args ...any) *SyntaxError {
	return &SyntaxError{
		Col:   utf8.RuneCountInString(src[:off]) + 1,
		Msg:   fmt.Sprintf(format, args...),
		Input: src,
	}
}
