package ui

import (
	"strings"

	"mcpscope/internal/termsafe"
)

// oneLine squeezes a JSON value (or any bytes) into one sanitized line of
// at most max bytes, without parsing all of a huge payload.
func oneLine(raw []byte, max int) string {
	var b strings.Builder
	space := false
	inStr, esc := false, false
	for _, c := range raw {
		if b.Len() >= max {
			b.WriteString("…")
			break
		}
		if inStr {
			b.WriteByte(c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			space = true
			continue
		case '"':
			inStr = true
		}
		if space && b.Len() > 0 {
			prev := b.String()[b.Len()-1]
			if prev != '{' && prev != '[' && prev != ':' && prev != ',' && c != '}' && c != ']' && c != ',' && c != ':' {
				b.WriteByte(' ')
			}
		}
		space = false
		b.WriteByte(c)
	}
	return termsafe.Line(b.String())
}
