package ui

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/internal/termsafe"
	"mcpscope/session"
	"mcpscope/transport"
	"mcpscope/ui/keys"
)

// infoView shows what the session knows about the server and the
// connection: the server's name and version, its instructions (which
// the handshake carries and nothing else shows), capabilities, the
// protocol version and era with the reason, the session id, transport,
// endpoint, pid, uptime and journal. Every server string is made inert.
type infoView struct{ top int }

func (m *Model) openInfo() { m.push(&infoView{}) }

func (v *infoView) scope() keys.Scope { return keys.Info }

func (v *infoView) key(m *Model, name string, _ tea.KeyPressMsg) (bool, tea.Cmd) {
	page := max(1, m.hgt-4)
	switch name {
	case "info-close":
		return true, nil
	case "quit":
		m.quit = true
	case "help":
		m.push(newHelp(m))
	case "up":
		v.top--
	case "down":
		v.top++
	case "page-up":
		v.top -= page
	case "page-down":
		v.top += page
	case "top":
		v.top = 0
	case "follow":
		v.top = 1 << 30
	case "copy":
		return false, m.copyText(ansi.Strip(strings.Join(m.infoLines(100), "\n")), "session info")
	}
	return false, nil
}

func (v *infoView) render(m *Model, w, h int) string {
	lines := m.infoLines(w)
	v.top = clamp(v.top, 0, max(0, len(lines)-(h-1)))
	head := m.th.Title.Render(fit(" Session info — "+m.keyOf("copy")+" copies, "+m.keyOf("info-close")+" closes", w))
	end := min(len(lines), v.top+h-1)
	return head + "\n" + strings.Join(lines[v.top:end], "\n")
}

// connState is the connection in one word, and why when it is not
// plainly connected.
func (m *Model) connState() (word, why string) {
	in := m.info
	t := m.s.Transport()
	switch {
	case t == nil:
		return "recording", "offline · " + m.journalName()
	case m.s.Follows():
		if why := m.feedEnded(); why != "" {
			return "disconnected", why
		}
		return "attached", termsafe.Line(t.Describe())
	case in.Closed:
		return "disconnected", in.CloseReason
	case in.CloseReason != "": // the server process exited; the session is not closed yet
		return "disconnected", in.CloseReason
	}
	select {
	case <-t.Done():
		return "disconnected", "the transport ended"
	default:
	}
	if n := in.Reconnecting; n > 0 {
		return "reconnecting", fmt.Sprintf("%d stream(s) waiting to be resumed (%s reconnects now)", n, m.keyOf("reconnect"))
	}
	return "connected", ""
}

// transportOf splits the session's target ("stdio: cmd", "http: url",
// "http+sse: url") into the transport's name and its endpoint, redacted.
func transportOf(target string) (kind, endpoint string) {
	k, rest, ok := strings.Cut(transport.RedactTarget(target), ": ")
	if !ok {
		return "", k
	}
	switch k {
	case "stdio":
		return "stdio (the server is a child process)", rest
	case "http":
		return "Streamable HTTP", rest
	case "http+sse":
		return "HTTP+SSE (2024-11-05)", rest
	}
	return k, rest
}

// infoLines lays the session's facts out for width w.
func (m *Model) infoLines(w int) []string {
	in := m.info
	var l []string
	row := func(label, value string) {
		// Long values wrap under themselves, not under the label.
		const lw = 15
		width := max(10, w-lw-1)
		for i, part := range strings.Split(ansi.Wrap(value, width, " /,;"), "\n") {
			if i == 0 {
				l = append(l, " "+m.th.Faint.Render(fmt.Sprintf("%-*s", lw-1, label))+part)
			} else {
				l = append(l, strings.Repeat(" ", lw)+part)
			}
		}
	}
	server := termsafe.Line(strings.TrimSpace(in.ServerInfo.Name + " " + in.ServerInfo.Version))
	if in.ServerInfo.Title != "" {
		server += " — " + termsafe.Line(in.ServerInfo.Title)
	}
	row("server", firstNonEmpty(server, "(not known yet: no handshake answer)"))
	proto := termsafe.Line(firstNonEmpty(in.ProtocolVersion, "(not negotiated)"))
	if in.Era != "" {
		proto += " · " + termsafe.Line(in.Era) + " era"
	}
	row("protocol", proto)
	row("era reason", termsafe.Line(firstNonEmpty(in.EraReason, "(no era decision recorded)")))
	conn, why := m.connState()
	if why != "" {
		conn += ": " + termsafe.Line(why)
	}
	row("connection", conn)
	kind, endpoint := transportOf(in.Target)
	row("transport", termsafe.Line(firstNonEmpty(kind, "(none)")))
	row("endpoint", termsafe.Line(firstNonEmpty(endpoint, "(none)")))
	if e, ok := m.s.Transport().(transport.PostEndpoint); ok && e.Endpoint() != "" {
		row("messages to", termsafe.Line(transport.RedactURL(e.Endpoint())))
	}
	noSID := "(none: the server gave no Mcp-Session-Id)"
	if strings.HasPrefix(in.Target, "stdio:") {
		noSID = "(none: stdio carries no session id)"
	}
	row("session id", termsafe.Line(firstNonEmpty(in.SessionID, noSID)))
	if in.PID != 0 {
		row("server pid", itoa(in.PID))
	}
	if m.s.Transport() != nil {
		row("mcpscope pid", itoa(os.Getpid()))
	}
	if !in.Started.IsZero() {
		started := in.Started.In(m.opts.Location).Format("2006-01-02 15:04:05 MST")
		if m.s.Transport() != nil {
			started += " · up " + fmtDur(m.opts.Now().Sub(in.Started))
		} else {
			started += " (when it was recorded)"
		}
		row("started", started)
	}
	switch {
	case in.JournalPath != "":
		row("journal", termsafe.Line(in.JournalPath))
	case m.s.Store().Journaled():
		row("journal", "(kept, path not known)")
	default:
		row("journal", fmt.Sprintf("none: memory keeps the newest %d frames", session.NoJournalWindow))
	}
	if in.JournalErr != "" {
		row("journal error", termsafe.Line(in.JournalErr))
	}
	row("log level", termsafe.Line(firstNonEmpty(in.LogLevel, "(the server's default)")))
	if n := len(in.Subscriptions); n > 0 {
		subs := append([]string(nil), in.Subscriptions...)
		sort.Strings(subs)
		row("subscriptions", termsafe.Line(strings.Join(subs, ", ")))
	}
	if m.opts.OTLPStatus != nil {
		row("opentelemetry", termsafe.Line(m.opts.OTLPStatus()))
	}
	row("traffic", fmt.Sprintf("%d calls (%d pending) · %d notifications · %d logs", in.Calls, in.Pending, in.Notifications, in.Logs))

	l = append(l, "", m.th.Title.Render(" instructions"))
	if strings.TrimSpace(in.Instructions) == "" {
		l = append(l, m.th.Faint.Render("   (the server gave none)"))
	} else {
		text := strings.ReplaceAll(termsafe.Text(in.Instructions), "\t", "    ")
		for _, line := range strings.Split(ansi.Wrap(text, max(10, w-4), ""), "\n") {
			l = append(l, "   "+line)
		}
	}
	l = append(l, "", m.th.Title.Render(" capabilities"))
	if len(bytes.TrimSpace(in.Capabilities)) == 0 {
		l = append(l, m.th.Faint.Render("   (none declared yet)"))
	} else {
		l = append(l, jsonRows(m.th, in.Capabilities, w-3, "  ")...)
	}
	return l
}
