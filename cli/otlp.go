package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"mcpscope/artifact/otlplive"
	"mcpscope/connect"
	"mcpscope/internal/termsafe"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
)

// otlpFlag is --otlp: live OpenTelemetry, a span per call sent to a
// collector as the call ends (package otlplive).
type otlpFlag struct {
	url   string
	added bool // the command takes it: only those read the environment too
}

func (f *otlpFlag) add(fs *pflag.FlagSet) {
	f.added = true
	fs.StringVar(&f.url, "otlp", "", "send a span per call, live, to this OpenTelemetry collector's OTLP/HTTP endpoint, such as http://127.0.0.1:4318 (default: $OTEL_EXPORTER_OTLP_ENDPOINT; headers from $OTEL_EXPORTER_OTLP_HEADERS)")
}

// otlpCloseWait bounds how long the end of a command waits for the last
// spans to reach the collector (less when OTEL_EXPORTER_OTLP_TIMEOUT is).
const otlpCloseWait = 2 * time.Second

// liveTrace is a running live exporter and where its end is reported.
type liveTrace struct {
	e    *otlplive.Exporter
	errw io.Writer
	wait time.Duration
}

// start starts the live exporter when --otlp or the environment names a
// collector, and hooks it to sp (nil when none).
func (f *otlpFlag) start(cmd *cobra.Command, sp *connect.Spec) (*liveTrace, error) {
	ep, ok, err := f.resolve(cmd)
	if !ok || err != nil {
		return nil, err
	}
	return f.startAt(cmd, ep, sp)
}

// startAt starts a live exporter to ep for the session sp describes and
// hooks it to sp. The journal's path is fixed here, so the trace is named
// by the journal's header as the export of that journal names it.
func (f *otlpFlag) startAt(cmd *cobra.Command, ep otlplive.Endpoint, sp *connect.Spec) (*liveTrace, error) {
	if !sp.NoJournal && sp.Journal == "" {
		sp.Journal = journal.NewPath(journal.DefaultDir(), time.Now())
	}
	target := "http: " + sp.URL
	if sp.URL == "" {
		target = "stdio: " + transport.CommandLine(sp.Command)
	}
	l, err := begin(cmd, ep, sp.Journal, target)
	if err != nil {
		return nil, err
	}
	observe := sp.Observe
	sp.Observe = l.e.Frame
	if observe != nil {
		sp.Observe = func(seq uint64, fr transport.Frame) { observe(seq, fr); l.e.Frame(seq, fr) }
	}
	return l, nil
}

// startFor starts the live exporter for the session journaled at journal
// ("" without one) when --otlp or the environment names a collector.
func (f *otlpFlag) startFor(cmd *cobra.Command, journal, target string) (*liveTrace, error) {
	ep, ok, err := f.resolve(cmd)
	if !ok || err != nil {
		return nil, err
	}
	return begin(cmd, ep, journal, target)
}

// resolve is the collector --otlp or the environment names (ok false when
// none, or when the command takes no --otlp); what the person should know
// about it (headers left out) is said on stderr, once.
func (f *otlpFlag) resolve(cmd *cobra.Command) (otlplive.Endpoint, bool, error) {
	if !f.added {
		return otlplive.Endpoint{}, false, nil
	}
	ep, ok, err := otlplive.Resolve(f.url, nil)
	if err != nil {
		return ep, false, usagef(cmd.CommandPath(), "%v", err)
	}
	if ok && ep.Note != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "mcpscope: OpenTelemetry: %s\n", termsafe.Line(ep.Note))
	}
	return ep, ok, nil
}

// begin starts an exporter to ep for the session journaled at journal.
func begin(cmd *cobra.Command, ep otlplive.Endpoint, journal, target string) (*liveTrace, error) {
	e, err := otlplive.Start(ep, otlplive.Options{Version: session.Version, Journal: journal, Target: transport.RedactTarget(target)})
	if err != nil {
		return nil, err
	}
	return &liveTrace{e: e, errw: cmd.ErrOrStderr(), wait: min(otlpCloseWait, ep.Timeout)}, nil
}

// status is the exporter's line for the info view (nil without one).
func (l *liveTrace) status() func() string {
	if l == nil {
		return nil
	}
	return l.e.Status
}

// records is what the proxy hands each journal record to (nil without an
// exporter).
func (l *liveTrace) records() func([]byte) {
	if l == nil {
		return nil
	}
	return l.e.Record
}

// finish sends the last spans (within wait) and, when some were lost,
// says so on stderr. Safe on nil.
func (l *liveTrace) finish() {
	if l == nil {
		return
	}
	st := l.e.Close(l.wait)
	if st.Dropped > 0 || st.FramesDropped > 0 {
		fmt.Fprintf(l.errw, "mcpscope: OpenTelemetry: %s\n", termsafe.Line(st.String()))
	}
}
