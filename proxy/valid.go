package proxy

import "mcpscope/internal/jsonscan"

// validJSON reports whether b is one JSON value, surrounding whitespace
// allowed: exactly what encoding/json.Valid accepts (strings may hold any
// byte from 0x20 up, invalid UTF-8 included; nesting deeper than 10000 is
// refused), in a fraction of its time. The journal's kind of every server
// line (message or garbage) is decided with it.
func validJSON(b []byte) bool {
	const maxDepth = 10000 // encoding/json's maxNestingDepth
	var (
		small [64]bool // true: in an object; false: in an array
		stack = small[:0]
		i     = skipSpace(b, 0)
	)
value:
	if i >= len(b) {
		return false
	}
	switch c := b[i]; {
	case c == '{':
		if len(stack) >= maxDepth {
			return false
		}
		stack = append(stack, true)
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			stack = stack[:len(stack)-1]
			i++
			goto after
		}
		goto key
	case c == '[':
		if len(stack) >= maxDepth {
			return false
		}
		stack = append(stack, false)
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			stack = stack[:len(stack)-1]
			i++
			goto after
		}
		goto value
	case c == '"':
		if i = validString(b, i); i < 0 {
			return false
		}
	case c == '-' || c >= '0' && c <= '9':
		if i = jsonscan.SkipNumber(b, i); i < 0 {
			return false
		}
	case c == 't':
		if i = validLiteral(b, i, "true"); i < 0 {
			return false
		}
	case c == 'f':
		if i = validLiteral(b, i, "false"); i < 0 {
			return false
		}
	case c == 'n':
		if i = validLiteral(b, i, "null"); i < 0 {
			return false
		}
	default:
		return false
	}
after:
	i = skipSpace(b, i)
	if len(stack) == 0 {
		return i == len(b)
	}
	if i >= len(b) {
		return false
	}
	switch b[i] {
	case ',':
		i = skipSpace(b, i+1)
		if stack[len(stack)-1] {
			goto key
		}
		goto value
	case '}':
		if !stack[len(stack)-1] {
			return false
		}
	case ']':
		if stack[len(stack)-1] {
			return false
		}
	default:
		return false
	}
	stack = stack[:len(stack)-1]
	i++
	goto after
key:
	if i >= len(b) || b[i] != '"' {
		return false
	}
	if i = validString(b, i); i < 0 {
		return false
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return false
	}
	i = skipSpace(b, i+1)
	goto value
}

// strPlain marks the bytes a JSON string holds as they are.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// validString returns the index after the string starting at b[i] == '"',
// or -1.
func validString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		c := b[i]
		if strPlain[c] {
			continue
		}
		switch c {
		case '"':
			return i + 1
		case '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return -1
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		default: // a control character
			return -1
		}
	}
	return -1
}

func validLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}
