package ui

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"mcpscope/internal/termsafe"
	"mcpscope/themes"
)

// maxDetailLines bounds what the detail view lays out; the rest is one
// copy away, and a 50 MiB result must not stall the UI.
const maxDetailLines = 20000

// prettyLines indents JSON and returns sanitized lines; text that is not
// JSON comes back as sanitized lines of itself. Strings never span lines
// in indented JSON, so colouring can work line by line later.
func prettyLines(raw []byte) []string {
	var b bytes.Buffer
	var lines []string
	if json.Valid(raw) && json.Indent(&b, raw, "", "  ") == nil {
		lines = strings.Split(b.String(), "\n")
	} else {
		lines = strings.Split(string(raw), "\n")
	}
	if len(lines) > maxDetailLines {
		more := len(lines) - maxDetailLines
		lines = append(lines[:maxDetailLines:maxDetailLines], "… "+strconv.Itoa(more)+" more lines (y copies everything)")
	}
	for i, l := range lines {
		lines[i] = termsafe.Line(strings.TrimRight(l, "\r"))
	}
	return lines
}

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

// colourJSONLine styles one line of indented JSON. It is lenient: text it
// cannot read is written as it is (it was sanitized already).
func colourJSONLine(th themes.Theme, line string) string {
	if th.NoColor {
		return line
	}
	var b strings.Builder
	i := 0
	for i < len(line) {
		c := line[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(line) && line[j] != '"' {
				if line[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(line) {
				b.WriteString(th.JSONString.Render(line[i:]))
				return b.String()
			}
			tok := line[i : j+1]
			k := j + 1
			for k < len(line) && line[k] == ' ' {
				k++
			}
			if k < len(line) && line[k] == ':' {
				b.WriteString(th.JSONKey.Render(tok))
			} else {
				b.WriteString(th.JSONString.Render(tok))
			}
			i = j + 1
		case c == '-' || (c >= '0' && c <= '9'):
			j := i
			for j < len(line) && strings.IndexByte("+-.eE0123456789", line[j]) >= 0 {
				j++
			}
			b.WriteString(th.JSONNumber.Render(line[i:j]))
			i = j
		case strings.HasPrefix(line[i:], "true"), strings.HasPrefix(line[i:], "null"):
			b.WriteString(th.JSONLiteral.Render(line[i : i+4]))
			i += 4
		case strings.HasPrefix(line[i:], "false"):
			b.WriteString(th.JSONLiteral.Render(line[i : i+5]))
			i += 5
		case strings.IndexByte("{}[],:", c) >= 0:
			b.WriteString(th.JSONPunct.Render(line[i : i+1]))
			i++
		default:
			j := i
			for j < len(line) && strings.IndexByte("\"{}[],:-0123456789tfn", line[j]) < 0 {
				j++
			}
			if j == i {
				j++
			}
			b.WriteString(line[i:j])
			i = j
		}
	}
	return b.String()
}
