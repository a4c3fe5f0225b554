// Package info is the session info view (i): what the session knows about
// the server and the connection — the server's name and version, its
// instructions (which the handshake carries and nothing else shows;
// Markdown rendered as in results), capabilities, the protocol version and era with the reason, the session
// id, transport, endpoint, pid, uptime and journal. Every server string is
// made inert.
package info

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/framestore"
	"mcpscope/internal/termsafe"
	"mcpscope/session"
	"mcpscope/transport"
	"mcpscope/ui/keys"
	"mcpscope/ui/result"
	"mcpscope/ui/view"
	"mcpscope/ui/widget"
)

// Scope is where the view's keys are looked up.
const Scope keys.Scope = "info"

// Session is what the view reads of the session: facts, no intents.
type Session interface {
	Info() session.Info
	// Connection is the connection in one word, and why when it is not
	// plainly connected (the status bar's words).
	Connection() (word, why string)
	Transport() transport.Transport // nil for a recording
	Journaled() bool
	// OTLP is the live OpenTelemetry exporter in one line (where to,
	// spans sent and dropped), "" when there is none.
	OTLP() string
	// Roots is what roots/list is answered with, in one line ("" when
	// nothing answers: a recording).
	Roots() string
}

// View is the info view; its state is the scroll position.
type View struct {
	s   Session
	top int
}

// New opens the view over s.
func New(s Session) *View { return &View{s: s} }

// Keys is the view's part of the keymap.
var Keys = view.Group{Scope: Scope, Bindings: bindings.Keys(), Footer: []string{"copy", "info-close", "help"}}

var bindings = view.Bindings[*View]{
	{Binding: keys.Binding{Name: "info-close", Scope: Scope, Keys: []string{"esc", "i"}, Help: "close"},
		Run: func(*View, view.Context) view.Action { return view.Close() }},
	// Global bindings the view gives its own meaning.
	{Binding: keys.Binding{Name: "quit"}, Run: func(*View, view.Context) view.Action { return view.Action{Quit: true} }},
	{Binding: keys.Binding{Name: "help"}, Run: func(*View, view.Context) view.Action { return view.Action{Help: true} }},
	{Binding: keys.Binding{Name: "up"}, Run: scroll(func(int) int { return -1 })},
	{Binding: keys.Binding{Name: "down"}, Run: scroll(func(int) int { return 1 })},
	{Binding: keys.Binding{Name: "page-up"}, Run: scroll(func(page int) int { return -page })},
	{Binding: keys.Binding{Name: "page-down"}, Run: scroll(func(page int) int { return page })},
	{Binding: keys.Binding{Name: "top"}, Run: func(v *View, _ view.Context) view.Action { v.top = 0; return view.Action{} }},
	{Binding: keys.Binding{Name: "follow"}, Run: func(v *View, _ view.Context) view.Action { v.top = 1 << 30; return view.Action{} }},
	{Binding: keys.Binding{Name: "copy"}, Run: func(v *View, c view.Context) view.Action {
		return view.Action{Copy: &view.Copy{Text: ansi.Strip(strings.Join(v.lines(c, 100), "\n")), What: "session info"}}
	}},
}

// scroll moves by d(page), a page being the screen less the bars.
func scroll(d func(page int) int) func(*View, view.Context) view.Action {
	return func(v *View, c view.Context) view.Action {
		v.top += d(max(1, c.Height-4))
		return view.Action{}
	}
}

func (v *View) Scope() keys.Scope { return Scope }

func (v *View) Key(c view.Context, name string, _ tea.KeyPressMsg) view.Action {
	a, _ := bindings.Do(v, c, name)
	return a
}

func (v *View) Render(c view.Context, w, h int) string {
	lines := v.lines(c, w)
	v.top = widget.Clamp(v.top, 0, max(0, len(lines)-(h-1)))
	head := c.Theme.Title.Render(widget.Fit(" Session info — "+c.KeyOf("copy")+" copies, "+c.KeyOf("info-close")+" closes", w))
	end := min(len(lines), v.top+h-1)
	return head + "\n" + strings.Join(lines[v.top:end], "\n")
}

// TransportOf splits the session's target ("stdio: cmd", "http: url",
// "http+sse: url") into the transport's name and its endpoint, redacted.
func TransportOf(target string) (kind, endpoint string) {
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

// lines lays the session's facts out for width w.
func (v *View) lines(c view.Context, w int) []string {
	in := v.s.Info()
	th := c.Theme
	or := widget.FirstNonEmpty
	var l []string
	row := func(label, value string) {
		// Long values wrap under themselves, not under the label.
		const lw = 15
		width := max(10, w-lw-1)
		for i, part := range strings.Split(ansi.Wrap(value, width, " /,;"), "\n") {
			if i == 0 {
				l = append(l, " "+th.Faint.Render(fmt.Sprintf("%-*s", lw-1, label))+part)
			} else {
				l = append(l, strings.Repeat(" ", lw)+part)
			}
		}
	}
	server := termsafe.Line(strings.TrimSpace(in.ServerInfo.Name + " " + in.ServerInfo.Version))
	if in.ServerInfo.Title != "" {
		server += " — " + termsafe.Line(in.ServerInfo.Title)
	}
	row("server", or(server, "(not known yet: no handshake answer)"))
	proto := termsafe.Line(or(in.ProtocolVersion, "(not negotiated)"))
	if in.Era != "" {
		proto += " · " + termsafe.Line(in.Era) + " era"
	}
	row("protocol", proto)
	row("era reason", termsafe.Line(or(in.EraReason, "(no era decision recorded)")))
	conn, why := v.s.Connection()
	if why != "" {
		conn += ": " + termsafe.Line(why)
	}
	row("connection", conn)
	kind, endpoint := TransportOf(in.Target)
	row("transport", termsafe.Line(or(kind, "(none)")))
	row("endpoint", termsafe.Line(or(endpoint, "(none)")))
	t := v.s.Transport()
	if e, ok := t.(transport.PostEndpoint); ok && e.Endpoint() != "" {
		row("messages to", termsafe.Line(transport.RedactURL(e.Endpoint())))
	}
	noSID := "(none: the server gave no Mcp-Session-Id)"
	if strings.HasPrefix(in.Target, "stdio:") {
		noSID = "(none: stdio carries no session id)"
	}
	row("session id", termsafe.Line(or(in.SessionID, noSID)))
	if in.PID != 0 {
		row("server pid", strconv.Itoa(in.PID))
	}
	if t != nil {
		row("mcpscope pid", strconv.Itoa(os.Getpid()))
	}
	if !in.Started.IsZero() {
		started := in.Started.In(c.Location).Format("2006-01-02 15:04:05 MST")
		if t != nil {
			started += " · up " + widget.Dur(c.Now().Sub(in.Started))
		} else {
			started += " (when it was recorded)"
		}
		row("started", started)
	}
	switch {
	case in.JournalPath != "":
		row("journal", termsafe.Line(in.JournalPath))
	case v.s.Journaled():
		row("journal", "(kept, path not known)")
	default:
		row("journal", fmt.Sprintf("none: memory keeps the newest %d frames", framestore.NoJournalWindow))
	}
	if in.JournalErr != "" {
		row("journal error", termsafe.Line(in.JournalErr))
	}
	row("log level", termsafe.Line(or(in.LogLevel, "(the server's default)")))
	if n := len(in.Subscriptions); n > 0 {
		subs := append([]string(nil), in.Subscriptions...)
		sort.Strings(subs)
		row("subscriptions", termsafe.Line(strings.Join(subs, ", ")))
	}
	if r := v.s.Roots(); r != "" {
		row("roots", r)
	}
	if o := v.s.OTLP(); o != "" {
		row("opentelemetry", termsafe.Line(o))
	}
	row("traffic", fmt.Sprintf("%d calls (%d pending) · %d notifications · %d logs", in.Calls, in.Pending, in.Notifications, in.Logs))

	l = append(l, "", th.Title.Render(" instructions"))
	if strings.TrimSpace(in.Instructions) == "" {
		l = append(l, th.Faint.Render("   (the server gave none)"))
	} else {
		// Rendered as a result's text is (Markdown when it looks like it,
		// in colour unless the theme is NO_COLOR's).
		o := result.Options{Width: max(10, w-4)}
		if !th.NoColor {
			o.Markdown = "dark"
		}
		for _, line := range result.Prose(in.Instructions, o) {
			l = append(l, "   "+line)
		}
	}
	l = append(l, "", th.Title.Render(" capabilities"))
	if len(bytes.TrimSpace(in.Capabilities)) == 0 {
		l = append(l, th.Faint.Render("   (none declared yet)"))
	} else {
		l = append(l, c.JSONRows(in.Capabilities, w-3, "  ")...)
	}
	return l
}
