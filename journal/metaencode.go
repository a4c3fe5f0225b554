package journal

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"mcpscope/transport"
)

// appendMeta appends m as the JSON object encoding/json makes of it: the
// same members in the same order, empty ones left out alike, header names
// sorted. Strings are escaped by appendJSONText, as termsafe.JSON leaves
// encoding/json's output (controls and invisible characters as \u
// escapes, which read back as the same text), and invalid UTF-8 becomes
// U+FFFD, as encoding/json makes it. It is written by hand because the
// HTTP proxy journals two frames with meta for every request: through
// encoding/json they were most of the writer's CPU.
func appendMeta(buf []byte, m *transport.Meta) []byte {
	w := metaWriter{buf: append(buf, '{')}
	w.str("event", m.Event)
	w.str("detail", m.Detail)
	w.str("httpMethod", m.HTTPMethod)
	w.str("url", m.URL)
	w.num("status", int64(m.Status))
	if len(m.Headers) > 0 {
		w.key("headers")
		w.buf = append(w.buf, '{')
		names := make([]string, 0, len(m.Headers))
		for k := range m.Headers {
			names = append(names, k)
		}
		slices.Sort(names)
		for i, k := range names {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.buf = appendMetaString(w.buf, k)
			w.buf = append(w.buf, ':')
			w.buf = appendMetaString(w.buf, m.Headers[k])
		}
		w.buf = append(w.buf, '}')
	}
	w.str("stream", m.Stream)
	w.str("resumes", m.Resumes)
	w.str("eventId", m.EventID)
	w.str("eventType", m.EventType)
	w.num("retryMs", int64(m.Retry))
	w.num("pid", int64(m.PID))
	if m.ExitCode != nil {
		w.key("exitCode")
		w.buf = strconv.AppendInt(w.buf, int64(*m.ExitCode), 10)
	}
	w.str("signal", m.Signal)
	w.str("via", m.Via)
	return append(w.buf, '}')
}

type metaWriter struct {
	buf  []byte
	some bool // a member was written
}

func (w *metaWriter) key(k string) {
	if w.some {
		w.buf = append(w.buf, ',')
	}
	w.some = true
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, k...)
	w.buf = append(w.buf, '"', ':')
}

func (w *metaWriter) str(k, v string) {
	if v != "" {
		w.key(k)
		w.buf = appendMetaString(w.buf, v)
	}
}

func (w *metaWriter) num(k string, v int64) {
	if v != 0 {
		w.key(k)
		w.buf = strconv.AppendInt(w.buf, v, 10)
	}
}

// appendMetaString quotes s, invalid UTF-8 as U+FFFD.
func appendMetaString(buf []byte, s string) []byte {
	s = validUTF8(s)
	// appendJSONString only reads the bytes.
	return appendJSONString(buf, unsafe.Slice(unsafe.StringData(s), len(s)))
}

// validUTF8 is s with each byte that is not UTF-8 replaced by U+FFFD, as
// encoding/json does.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
