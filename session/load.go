package session

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"mcpscope/transport"
)

// Load reads a journal back into an offline session: the same store, calls
// and info a live session had, rebuilt by the same correlation code. When the
// file ends in a torn line, the session holds everything before it and the
// error says so.
func Load(path string) (*Session, Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Header{}, fmt.Errorf("open journal: %w", err)
	}
	defer f.Close()
	s := New(nil, Options{Timeout: -1, MaxTimeout: -1})
	s.offline = true
	h, err := ReadJournal(f, func(seq uint64, fr transport.Frame) error {
		s.mu.Lock()
		s.seq = seq - 1 // keep the journal's numbering
		s.mu.Unlock()
		s.Ingest(fr)
		return nil
	})
	s.info.Target = h.Target
	s.info.JournalPath = path
	return s, h, err
}

// adoptLocked makes a call record for a request seen in a journal (offline
// sessions have no CallWith to make them).
func (s *Session) adoptLocked(e *Envelope, at time.Time, seq uint64) *Call {
	c := s.newCall(e.Key(), e.ID, e.Method, at)
	c.Params, c.Name, c.Seq = e.Params, e.h.name, seq
	if len(e.h.metaToken) > 0 {
		c.Token = idKey(e.h.metaToken)
		s.byToken[c.Token] = c
	}
	s.calls[c.Key] = c
	s.order = append(s.order, c)
	s.pending[c.Key] = c
	return c
}

// noteResultLocked records what a result teaches about the connection.
func (s *Session) noteResultLocked(c *Call, e *Envelope) {
	result := e.Result
	switch c.Method {
	case "tools/list":
		s.noteToolsLocked(result)
		return
	case "tools/call", "tasks/get", "tasks/cancel", "tasks/list", "tasks/result":
		s.noteTaskResultLocked(c, e)
		if c.Method == "tools/call" && c.resultType == "task" {
			s.noteTaskExtLocked(c, result) // the 2026 tasks extension (tasksext.go)
		}
		return
	case "server/discover":
		var d DiscoverResult
		if json.Unmarshal(result, &d) == nil {
			if si, ok := d.Meta[MetaServerInfo]; ok {
				_ = json.Unmarshal(si, &s.info.ServerInfo)
			}
			s.info.Capabilities, s.info.Instructions = d.Capabilities, d.Instructions
			if slices.Contains(d.SupportedVersions, ModernVersion) {
				s.info.ProtocolVersion = ModernVersion
			}
		}
		return
	case "initialize":
	default:
		return
	}
	var res InitResult
	if json.Unmarshal(result, &res) == nil {
		s.info.ProtocolVersion = res.ProtocolVersion
		s.info.ServerInfo = res.ServerInfo
		s.info.Capabilities = res.Capabilities
		s.info.Instructions = res.Instructions
	}
}
