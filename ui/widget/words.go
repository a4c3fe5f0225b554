package widget

import (
	"fmt"
	"strconv"
	"strings"

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
