package scan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"mcpscope/session"
	"mcpscope/transport"
)

// Info is what a journal says about the connection it recorded: gathered
// frame by frame with Observe, the way the session learns it live.
type Info struct {
	// Transport is stdio, http (Streamable HTTP) or sse (HTTP+SSE,
	// 2024-11-05); "" until a frame says.
	Transport string
	// URL is the HTTP endpoint as journaled (already redacted).
	URL string
	// Era is legacy (initialize) or modern (2026-07-28 server/discover).
	Era             string
	ProtocolVersion string
	ServerInfo      session.Implementation
	Capabilities    json.RawMessage
	Instructions    string
	SessionID       string
	// Frames and Calls count what was observed.
	Frames, Calls int
}

// Observe learns from one frame.
func (in *Info) Observe(fr *Frame) {
	in.Frames++
	m := fr.Meta
	switch {
	case m.Event == transport.EvSpawned && in.Transport == "":
		in.Transport = "stdio"
	case m.Stream == transport.LegacySSEStream:
		in.Transport = "sse"
	case m.URL != "" && in.Transport == "":
		in.Transport = "http"
	}
	if m.URL != "" && in.URL == "" && m.Stream != transport.LegacySSEStream {
		in.URL = m.URL
	}
	if m.Event == transport.EvSessionID && m.Detail != "" {
		in.SessionID = m.Detail
	}
	if fr.Dir == transport.Out && fr.Env != nil && fr.Env.Class() == session.ClassRequest {
		in.Calls++
	}
	if fr.Dir != transport.In || fr.Env == nil || fr.Call == nil || fr.Env.Class() != session.ClassResult || fr.Late {
		return
	}
	switch fr.Call.Method {
	case "initialize":
		var r session.InitResult
		if json.Unmarshal(fr.Env.Result, &r) == nil {
			in.Era, in.ProtocolVersion = session.EraLegacy, r.ProtocolVersion
			in.ServerInfo, in.Capabilities, in.Instructions = r.ServerInfo, r.Capabilities, r.Instructions
		}
	case "server/discover":
		var d session.DiscoverResult
		if json.Unmarshal(fr.Env.Result, &d) != nil || !slices.Contains(d.SupportedVersions, session.ModernVersion) {
			return // a legacy server's answer to the probe: initialize follows
		}
		in.Era, in.ProtocolVersion = session.EraModern, session.ModernVersion
		in.Capabilities, in.Instructions = d.Capabilities, d.Instructions
		if si, ok := d.Meta[session.MetaServerInfo]; ok {
			_ = json.Unmarshal(si, &in.ServerInfo)
		}
	}
}

// TransportOf names the transport a journal header's target describes
// ("stdio: cmd", "http: URL", "sse: URL").
func TransportOf(target string) string {
	kind, _, _ := strings.Cut(target, ":")
	return kind
}

// Header reads a journal's first line, its header, without reading the
// rest: what a command shows before it streams the frames.
func Header(path string) (session.Header, error) {
	var h session.Header
	f, err := os.Open(path)
	if err != nil {
		return h, fmt.Errorf("open journal: %w", err)
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 4096).ReadSlice('\n')
	if err != nil && len(line) == 0 {
		return h, fmt.Errorf("journal %s is empty", path)
	}
	if !bytes.Contains(line, []byte(`"format"`)) || json.Unmarshal(line, &h) != nil || !strings.HasPrefix(h.Format, "mcpscope-journal/") {
		return h, fmt.Errorf("%s is not an mcpscope journal (its first line is not a journal header)", path)
	}
	return h, nil
}
