package scan

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"mcpscope/journal"
	"mcpscope/protocol"
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
	ServerInfo      protocol.Implementation
	Capabilities    json.RawMessage
	Instructions    string
	SessionID       string
	// ClientCapabilities are what the recorded client declared (its
	// initialize, or the _meta of its server/discover); nil when no
	// handshake request was recorded.
	ClientCapabilities json.RawMessage
	// Frames and Calls count what was observed.
	Frames, Calls int
}

// Observe learns from one frame.
func (in *Info) Observe(fr *Frame) {
	in.Frames++
	m := &fr.Meta // read only: no copy of it per frame
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
	if fr.Dir == transport.Out && fr.Env != nil && fr.Env.Class() == journal.ClassRequest {
		in.Calls++
		in.observeClient(fr.Env)
	}
	if fr.Dir != transport.In || fr.Env == nil || fr.Call == nil || fr.Env.Class() != journal.ClassResult || fr.Late {
		return
	}
	switch fr.Call.Method {
	case "initialize":
		var r protocol.InitResult
		if json.Unmarshal(fr.Env.Result, &r) == nil {
			in.Era, in.ProtocolVersion = protocol.EraLegacy, r.ProtocolVersion
			in.ServerInfo, in.Capabilities, in.Instructions = r.ServerInfo, r.Capabilities, r.Instructions
		}
	case "server/discover":
		var d protocol.DiscoverResult
		if json.Unmarshal(fr.Env.Result, &d) != nil || !slices.Contains(d.SupportedVersions, protocol.ModernVersion) {
			return // a legacy server's answer to the probe: initialize follows
		}
		in.Era, in.ProtocolVersion = protocol.EraModern, protocol.ModernVersion
		in.Capabilities, in.Instructions = d.Capabilities, d.Instructions
		if si, ok := d.Meta[protocol.MetaServerInfo]; ok {
			_ = json.Unmarshal(si, &in.ServerInfo)
		}
	}
}

// observeClient learns the capabilities the client declared from its
// handshake request: initialize carries them in params, server/discover
// (and every 2026-07-28 request) in _meta.
func (in *Info) observeClient(e *journal.Envelope) {
	if e.Method != "initialize" && e.Method != "server/discover" {
		return // before p, which json.Unmarshal puts on the heap: one a request
	}
	var p struct {
		Capabilities json.RawMessage            `json:"capabilities"`
		Meta         map[string]json.RawMessage `json:"_meta"`
	}
	switch e.Method {
	case "initialize":
		if json.Unmarshal(e.Params, &p) == nil && len(p.Capabilities) > 0 {
			in.ClientCapabilities = p.Capabilities
		}
	case "server/discover":
		if json.Unmarshal(e.Params, &p) == nil && len(p.Meta[protocol.MetaClientCapabilities]) > 0 {
			in.ClientCapabilities = p.Meta[protocol.MetaClientCapabilities]
		}
	}
}

// TransportOf names the transport a journal header's target describes
// ("stdio: cmd", "http: URL", "sse: URL").
func TransportOf(target string) string {
	kind, _, _ := strings.Cut(target, ":")
	return kind
}

// ErrEmpty is a file with nothing in it: no header, no frame.
var ErrEmpty = errors.New("the file is empty: no journal header and no frame")

// Header reads a journal's header, without reading the rest: what a command
// shows before it streams the frames. `record` output has no header (a zero
// Header); a file that is neither is journal.ErrNotJournal.
func Header(path string) (journal.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return journal.Header{}, fmt.Errorf("open journal: %w", err)
	}
	defer f.Close()
	frames := 0
	h, err := journal.Read(f, func(uint64, transport.Frame) error { frames++; return errStop })
	var damage *journal.Damage
	switch {
	case errors.Is(err, errStop), errors.As(err, &damage):
	case err != nil:
		return h, fmt.Errorf("%s: %w", path, err)
	case h.Format == "" && frames == 0:
		return h, fmt.Errorf("%s: %w", path, ErrEmpty)
	}
	return h, nil
}

var errStop = errors.New("stop")
