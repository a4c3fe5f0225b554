package ui

import (
	"encoding/json"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/atotto/clipboard"

	"mcpscope/internal/shell"
	"mcpscope/session"
)

// copyText puts s on the clipboard twice over: OSC 52 (works over SSH and
// in tmux) and the native clipboard (works where OSC 52 is off).
func (m *Model) copyText(s, what string) tea.Cmd {
	write := m.opts.Clipboard
	if write == nil {
		write = clipboard.WriteAll
	}
	return tea.Batch(tea.SetClipboard(s), func() tea.Msg {
		return copiedMsg{what: what, bytes: len(s), err: write(s)}
	})
}

// copySelected copies the selected call's result (or error), or the
// selected notification's exact bytes.
func (m *Model) copySelected() tea.Cmd {
	if m.focus == paneNotes {
		it := m.selectedNote()
		if it == nil {
			return nil
		}
		data := it.Frame.Data
		if it.Cut {
			b, err := m.s.Store().Bytes(it.Seq)
			if err != nil {
				m.setFlash("copy: " + err.Error())
				return nil
			}
			data = b
		}
		return m.copyText(string(data), "message #"+itoa(int(it.Seq)))
	}
	c := m.selectedCall()
	if c == nil {
		return nil
	}
	sn := c.Snapshot()
	if sn.ResultInJournal {
		res, err := c.Result()
		if err != nil {
			m.setFlash("copy: " + err.Error())
			return nil
		}
		sn.Result = res
	}
	switch {
	case sn.Result != nil:
		return m.copyText(string(prettyParams(sn.Result)), "result of call "+sn.Key)
	case sn.RPCError != nil:
		b, _ := json.MarshalIndent(sn.RPCError, "", "  ")
		return m.copyText(string(b), "error of call "+sn.Key)
	case sn.Failure != nil:
		return m.copyText(sn.Failure.Error(), "failure of call "+sn.Key)
	}
	return m.copyText(string(prettyParams(sn.Params)), "params of call "+sn.Key)
}

// copyCommand copies an mcpscope command line that makes the same call.
func (m *Model) copyCommand() tea.Cmd {
	c := m.selectedCall()
	if c == nil {
		return nil
	}
	line, ok := commandLine(c.Snapshot(), m.opts.Target)
	if !ok {
		m.setFlash("no mcpscope command makes a " + c.Method + " call; y copies its result")
		return nil
	}
	return m.copyText(line, "command line")
}

// commandLine renders the headless command for a call, shell-quoted.
func commandLine(sn session.CallSnapshot, target []string) (string, bool) {
	var p struct {
		Name      string          `json:"name"`
		URI       string          `json:"uri"`
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(sn.Params, &p)
	var argv []string
	switch sn.Method {
	case "tools/call":
		argv = []string{"mcpscope", "call", p.Name}
		if a := strings.TrimSpace(string(p.Arguments)); a != "" && a != "{}" && a != "null" {
			argv = append(argv, "--args", compact(p.Arguments))
		}
	case "resources/read":
		argv = []string{"mcpscope", "read", p.URI}
	case "prompts/get":
		argv = []string{"mcpscope", "prompt", p.Name}
		var args map[string]string
		_ = json.Unmarshal(p.Arguments, &args)
		var kv []string
		for k, v := range args {
			kv = append(kv, k+"="+v)
		}
		sort.Strings(kv)
		argv = append(argv, kv...)
	case "tools/list", "resources/list", "prompts/list", "ping":
		argv = []string{"mcpscope", strings.TrimSuffix(sn.Method, "/list")}
	case "resources/templates/list":
		argv = []string{"mcpscope", "templates"}
	default:
		return "", false
	}
	argv = append(argv, target...)
	return shell.Join(argv), true
}

func compact(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
