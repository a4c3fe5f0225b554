package ui

import (
	"encoding/json"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/atotto/clipboard"

	"mcpscope/internal/shell"
	"mcpscope/internal/termsafe"
	"mcpscope/session"
	"mcpscope/transport"
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
	sn := snapshotWithParams(c)
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

// snapshotWithParams is c's snapshot with its params, read back from the
// journal when the call left them there (an opened journal's tool call).
func snapshotWithParams(c *session.Call) session.CallSnapshot {
	sn := c.Snapshot()
	if sn.ParamsInJournal {
		sn.Params = c.Params()
	}
	return sn
}

// copyCommand offers what people paste elsewhere for the selected call:
// the equivalent mcpscope command, a curl command (HTTP targets), or the
// JSON-RPC message exactly as it was sent.
func (m *Model) copyCommand() tea.Cmd {
	c := m.selectedCall()
	if c == nil {
		return nil
	}
	sn := snapshotWithParams(c)
	type choice struct {
		label, what, text string
	}
	var choices []choice
	if line, ok := commandLine(sn, m.opts.Target, m.opts.TargetLine); ok {
		choices = append(choices, choice{"mcpscope command   " + shorten(line, 60), "command line", line})
	}
	sent := m.sentFrame(c)
	if u := m.httpTarget(); u != "" && sent != nil {
		line := curlLine(u, sent)
		choices = append(choices, choice{"curl command       " + shorten(line, 60), "curl command", line})
	}
	if sent != nil {
		choices = append(choices, choice{"JSON-RPC message   " + shorten(string(sent.Data), 60), "JSON-RPC message", string(sent.Data)})
	}
	if len(choices) == 0 {
		m.setFlash("nothing to copy for a " + c.Method + " call yet; y copies its result")
		return nil
	}
	labels := make([]string, len(choices))
	for i, ch := range choices {
		labels[i] = termsafe.Line(ch.label)
	}
	m.choose("Copy call "+sn.Key+" as", labels, 0, func(m *Model, i int) tea.Cmd {
		return m.copyText(choices[i].text, choices[i].what)
	})
	return nil
}

// sentFrame is the request exactly as it went out (its Out frame), nil
// when it is no longer in memory or was never sent.
func (m *Model) sentFrame(c *session.Call) *transport.Frame {
	if it := m.s.Store().Get(c.Seq); it != nil && it.Frame.Dir == transport.Out {
		return &it.Frame
	}
	return nil
}

// curlLine is a curl command that sends the request of frame f to url with
// the headers it was sent with (session id, protocol version, the
// 2026-07-28 routing headers, the user's own); a secret header's value is
// a $VARIABLE reference, never the value.
func curlLine(url string, f *transport.Frame) string {
	line := shell.Join([]string{"curl", "-sS", "-N", "-X", "POST", url})
	for _, name := range sortedNames(f.Meta.Headers) {
		switch strings.ToLower(name) {
		case "content-length", "user-agent", "accept-encoding":
			continue
		}
		v := f.Meta.Headers[name]
		switch {
		case strings.EqualFold(name, "Authorization") && strings.HasPrefix(v, "Bearer "):
			line += ` -H "Authorization: Bearer $MCPSCOPE_BEARER"`
		case transport.IsSecretName(name):
			line += " -H " + shell.Ref(name+": ", name)
		default:
			line += " -H " + shell.Quote(name+": "+v)
		}
	}
	return line + " --data-binary " + shell.Quote(string(f.Data))
}

func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// commandLine renders the headless command for a call, shell-quoted; it
// ends with targetLine when there is one (flags and target, already
// quoted), else with target.
func commandLine(sn session.CallSnapshot, target []string, targetLine string) (string, bool) {
	var p struct {
		Name      string          `json:"name"`
		URI       string          `json:"uri"`
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(sn.Params, &p)
	var (
		sub  string   // the subcommand
		args []string // its arguments: the server's names, where a word that reads as a flag cannot go
		opts []string // flags and their values
	)
	switch sn.Method {
	case "tools/call":
		sub, args = "call", []string{p.Name}
		if a := strings.TrimSpace(string(p.Arguments)); a != "" && a != "{}" && a != "null" {
			opts = []string{"--args", compact(p.Arguments)}
		}
	case "resources/read":
		sub, args = "read", []string{p.URI}
	case "prompts/get":
		sub, args = "prompt", []string{p.Name}
		var m map[string]string
		_ = json.Unmarshal(p.Arguments, &m)
		var kv []string
		for k, v := range m {
			kv = append(kv, k+"="+v)
		}
		sort.Strings(kv)
		args = append(args, kv...)
	case "tools/list", "resources/list", "prompts/list", "ping":
		sub = strings.TrimSuffix(sn.Method, "/list")
	case "resources/templates/list":
		sub = "templates"
	default:
		return "", false
	}
	for _, a := range args {
		if shell.IsFlag(a) {
			return "", false // no command line passes it; curl and the message still copy
		}
	}
	argv := append(append([]string{"mcpscope", sub}, args...), opts...)
	if targetLine != "" {
		return shell.Join(argv) + " " + targetLine, true
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
