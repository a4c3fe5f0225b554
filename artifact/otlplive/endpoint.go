// Package otlplive sends a session's spans to an OpenTelemetry collector as
// the session runs (--otlp URL, or the standard OTEL_EXPORTER_OTLP_*
// environment), over OTLP/HTTP with protobuf (post.go). The spans
// are built by the tracer behind export --format otlp (export.Spans), so a
// collector receives live what the export of the same journal writes.
//
// A collector that is down or slow never slows the session: frames and
// spans wait in bounded queues, uploads are bounded by the exporter's
// timeout, and what does not fit or fails is dropped and counted.
package otlplive

import (
	"fmt"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"mcpscope/transport"
)

// Endpoint is where spans go and with what headers.
type Endpoint struct {
	// URL receives the spans (OTLP/HTTP, protobuf): a base URL's
	// /v1/traces.
	URL string
	// Headers are sent with every upload: only those of the environment,
	// and only to the environment's own endpoint. They are credentials:
	// never written or printed (String names them, values redacted).
	Headers map[string]string
	// Timeout bounds one upload (OTEL_EXPORTER_OTLP_TIMEOUT, default 10s).
	Timeout time.Duration
	// Gzip compresses the uploads (OTEL_EXPORTER_OTLP_COMPRESSION=gzip,
	// or the _TRACES_ one over it; "none" or unset: not compressed).
	Gzip bool
	// Note is something to tell the person once (headers left out).
	Note string
}

// DefaultTimeout bounds an upload when the environment sets none.
const DefaultTimeout = 10 * time.Second

// Resolve finds the endpoint from --otlp (flag) and the environment:
// the flag when given, else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as
// is), else OTEL_EXPORTER_OTLP_ENDPOINT (a base URL). A base URL gets
// /v1/traces appended to its path, as the OpenTelemetry specification
// says, unless it already ends so. ok is false when neither names one.
// The environment's headers (OTEL_EXPORTER_OTLP_HEADERS, and the _TRACES_
// ones over them) go only to the environment's endpoint: with a flag
// naming another origin they are not sent, and Note says so.
// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn the
// environment's endpoint off (not --otlp).
func Resolve(flag string, getenv func(string) string) (ep Endpoint, ok bool, err error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	envURL, envName := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	exact := envURL != ""
	if !exact {
		envURL, envName = getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "OTEL_EXPORTER_OTLP_ENDPOINT"
	}
	if envURL != "" {
		if envURL, err = tracesURL(envURL, exact); err != nil {
			return Endpoint{}, false, fmt.Errorf("%s: %w", envName, err)
		}
	}
	off := strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none")
	switch {
	case flag != "":
		if ep.URL, err = tracesURL(flag, false); err != nil {
			return Endpoint{}, false, fmt.Errorf("--otlp: %w", err)
		}
	case off:
		return Endpoint{}, false, nil // the environment turns traces off; --otlp still asks for them
	case envURL != "":
		ep.URL = envURL
	default:
		return Endpoint{}, false, nil
	}
	headers, err := parseHeaders(getenv("OTEL_EXPORTER_OTLP_HEADERS"))
	if err != nil {
		return Endpoint{}, false, fmt.Errorf("OTEL_EXPORTER_OTLP_HEADERS: %w", err)
	}
	traces, err := parseHeaders(getenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS"))
	if err != nil {
		return Endpoint{}, false, fmt.Errorf("OTEL_EXPORTER_OTLP_TRACES_HEADERS: %w", err)
	}
	for k, v := range traces {
		headers[k] = v
	}
	if len(headers) > 0 {
		switch {
		case envURL != "" && origin(envURL) == origin(ep.URL):
			ep.Headers = headers
		case envURL != "":
			ep.Note = fmt.Sprintf("the OTEL_EXPORTER_OTLP headers are for %s, not sent to %s", transport.RedactURL(origin(envURL)), transport.RedactURL(origin(ep.URL)))
		default:
			ep.Note = "the OTEL_EXPORTER_OTLP headers are not sent: no OTEL_EXPORTER_OTLP_ENDPOINT names where they belong"
		}
	}
	ep.Timeout = DefaultTimeout
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			ms, err := strconv.Atoi(v)
			if err != nil || ms <= 0 {
				return Endpoint{}, false, fmt.Errorf("%s: want milliseconds (a positive whole number), got %q", name, v)
			}
			ep.Timeout = time.Duration(ms) * time.Millisecond
			break
		}
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			switch {
			case strings.EqualFold(v, "gzip"):
				ep.Gzip = true
			case strings.EqualFold(v, "none"):
			default:
				return Endpoint{}, false, fmt.Errorf("%s: want gzip or none, got %q", name, v)
			}
			break
		}
	}
	return ep, true, nil
}

// tracesURL checks raw and, unless exact, appends /v1/traces to its path.
func tracesURL(raw string, exact bool) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s is not an http(s) URL of a collector, such as http://127.0.0.1:4318", transport.RedactURL(raw))
	}
	if !exact && !strings.HasSuffix(u.Path, "/v1/traces") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
		u.RawPath = ""
	}
	return u.String(), nil
}

func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Scheme + "://" + strings.ToLower(u.Host)
}

// parseHeaders reads the W3C Baggage-like list the OTLP exporters take:
// key=value pairs, comma-separated, values URL-encoded.
func parseHeaders(v string) (map[string]string, error) {
	out := map[string]string{}
	for _, pair := range strings.Split(v, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, val, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n:") {
			return nil, fmt.Errorf("want name=value pairs separated by commas; a pair has no name (%d bytes, not shown: it may be a credential)", len(pair))
		}
		dec, err := url.PathUnescape(strings.TrimSpace(val))
		if err != nil || strings.ContainsAny(dec, "\r\n") {
			return nil, fmt.Errorf("the value of %s is not URL-encoded text (not shown: it is a credential)", k)
		}
		out[k] = dec
	}
	return out, nil
}

// String is the endpoint fit to show: its URL redacted, the names of its
// headers with their values redacted.
func (ep Endpoint) String() string {
	s := transport.RedactURL(ep.URL)
	if len(ep.Headers) > 0 {
		names := make([]string, 0, len(ep.Headers))
		for k := range ep.Headers {
			names = append(names, k+": [redacted]")
		}
		sort.Strings(names)
		s += " (" + strings.Join(names, ", ") + ")"
	}
	return s
}
