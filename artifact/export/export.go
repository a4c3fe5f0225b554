// Package export writes a journal out in formats other tools read: JSONL
// (the journal's own records, filtered), HAR 1.2 (the HTTP exchanges, for
// browsers' HAR viewers) and OTLP/JSON traces (a span per call, after the
// OpenTelemetry semantic conventions for MCP).
//
// Every format streams: the journal is read frame by frame (package scan)
// and what is written is held only while it is still open (an HTTP
// exchange, a call), so a journal of any length exports in bounded memory.
// Credentials were redacted when the journal was written; URLs and headers
// go through the same redaction again on the way out, so a journal written
// by an older mcpscope or by hand leaks nothing either. Output is JSON with
// control and bidi characters escaped (termsafe), safe to print.
package export

import (
	"fmt"
	"io"
	"strings"

	"mcpscope/artifact/scan"
	"mcpscope/filter"
	"mcpscope/framefilter"
	"mcpscope/internal/jsonscan"
)

// Formats are the names Write takes.
var Formats = []string{"har", "jsonl", "otlp"}

// Options are what every format takes.
type Options struct {
	// Filter keeps part of the journal (nil: everything): JSONL keeps the
	// frames it matches, HAR the HTTP exchanges holding such a frame, OTLP
	// the calls holding one.
	Filter *filter.Filter
	// Version is mcpscope's, for the creator fields.
	Version string
}

// Write exports the journal at path to w in format.
func Write(w io.Writer, path, format string, o Options) error {
	switch format {
	case "jsonl":
		return JSONL(w, path, o)
	case "har":
		return HAR(w, path, o)
	case "otlp":
		return OTLP(w, path, o)
	}
	return fmt.Errorf("unknown format %q (there are %s)", format, strings.Join(Formats, ", "))
}

// matcher applies a filter to scanned frames through the one adapter.
type matcher struct {
	f    *filter.Filter
	subj *framefilter.Subjects
}

func newMatcher(f *filter.Filter) *matcher { return &matcher{f: f, subj: framefilter.NewSubjects()} }

func (m *matcher) match(fr *scan.Frame) bool {
	if m.f == nil {
		return true
	}
	return m.f.Match(m.subj.Fill(&fr.Frame, fr.Env, fr.Call, fr.Time))
}

// final says whether the filter needs each call as it ended (a second pass).
func (m *matcher) final() bool { return m.f != nil && m.f.Volatile() }

// appendJSONText appends s as the inside of a JSON string, as the journal
// escapes text (jsonscan.AppendJSONText), invalid UTF-8 as U+FFFD.
func appendJSONText(buf []byte, s []byte) []byte { return jsonscan.AppendJSONText(buf, s, true) }
