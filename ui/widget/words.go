package widget

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"mcpscope/internal/termsafe"
	"mcpscope/session"
	"mcpscope/transport"
)

// Words for what a session holds, shared by the root's panes and the
// views: one line of JSON, a transport event, where an MRTR round went.

// Counted is "1 match", "2 matches": n and the noun in its number.
func Counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// ChainText says where an input_required round went.
func ChainText(sn session.CallSnapshot) string {
	switch {
	case sn.Next != "":
		return "answered → round " + strconv.Itoa(sn.Round+2) + " is #" + sn.Next
	case sn.ChainErr != nil:
		return "no retry: " + termsafe.Line(sn.ChainErr.Error())
	}
	return "waiting for your answer"
}

// streamName says whose SSE stream a key names: "post:5" is call 5's
// response stream, "get:…" a listen stream.
func streamName(key string) string {
	if k, ok := strings.CutPrefix(key, "post:"); ok {
		return "stream of call " + termsafe.Line(k)
	}
	if strings.HasPrefix(key, "get:") {
		return "listen stream " + termsafe.Line(key)
	}
	return "stream " + termsafe.Line(key)
}

// EventText describes a transport event in words.
func EventText(mt transport.Meta) string {
	var b strings.Builder
	b.WriteString(termsafe.Line(mt.Event))
	switch mt.Event {
	case transport.EvSessionID:
		b.WriteString(" " + termsafe.Line(mt.Detail))
		mt.Detail = ""
	case transport.EvExited:
		if mt.ExitCode != nil {
			b.WriteString(fmt.Sprintf(" code %d", *mt.ExitCode))
		}
		if mt.Signal != "" {
			b.WriteString(" signal " + mt.Signal)
		}
	case transport.EvSpawned:
		if mt.PID != 0 {
			b.WriteString(fmt.Sprintf(" pid %d", mt.PID))
		}
	}
	if mt.Stream != "" {
		b.WriteString(" " + streamName(mt.Stream))
	}
	if mt.Status != 0 {
		b.WriteString(fmt.Sprintf(" HTTP %d", mt.Status))
	}
	if mt.EventID != "" {
		b.WriteString(" event-id " + termsafe.Line(mt.EventID))
	}
	if mt.Detail != "" {
		b.WriteString(" — " + termsafe.Line(mt.Detail))
	}
	return b.String()
}

// OneLine squeezes a JSON value (or any bytes) into one sanitized line of
// at most max bytes, without parsing all of a huge payload.
func OneLine(raw []byte, max int) string {
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

// IDText is a call's key (session's canonical id text) as a person reads
// it: a string id without its quotes when nothing could mistake it for a
// number (7 and "7" are different ids) or hide an escape; else as it is.
func IDText(key string) string {
	if len(key) < 2 || key[0] != '"' {
		return termsafe.Line(key)
	}
	s, err := strconv.Unquote(key)
	if err != nil || s == "" || strconv.Quote(s) != key || strings.ContainsAny(s, " \"") ||
		strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return termsafe.Line(key)
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return termsafe.Line(key)
	}
	return termsafe.Line(s)
}

// MidCut fits s to n runes by eliding its middle: an id's head and its
// tail (a counter) both stay readable.
func MidCut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n < 3 {
		return string(r[:max(n, 0)])
	}
	head := (n - 1) / 2
	tail := n - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}
