package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"mcpscope/connect"
	"mcpscope/internal/gcgoal"
	"mcpscope/internal/shell"
	"mcpscope/internal/termsafe"
	"mcpscope/session"
	"mcpscope/themes"
	"mcpscope/transport"
	"mcpscope/ui"
)

func newOpenCmd() *cobra.Command {
	var (
		f      connFlags
		target string
	)
	cmd := &cobra.Command{
		Use:   "open FILE [--target URL | -- CMD [ARGS...]]",
		Short: "Open a journal in the inspector, offline: panes, detail, raw bytes, waterfall, filters",
		Long: "Open a journal in the inspector without a server: the same panes, detail (raw bytes too), waterfall, " +
			"filters and session info as a live session. The journal is read in the background and paged from the " +
			"file, so a long one opens at once and fills while the status bar shows how far it got.\n\n" +
			"Nothing is connected, so cancel, calls from the catalog and raw messages are refused with the reason. " +
			"A replay (r, or e to edit it first) connects to the target given with --target or after --, else to the " +
			"recorded one; a recorded stdio command is shown and run only once you confirm it. The live session then " +
			"takes the screen; o switches back to the recording.",
		GroupID: groupSessions,
		Example: "  mcpscope open ~/.local/state/mcpscope/journal/20261123-101500.000-4242.jsonl\n" +
			"  mcpscope open session.jsonl --target http://127.0.0.1:3001/mcp\n" +
			"  mcpscope open session.jsonl -- node server.js",
		Args: func(cmd *cobra.Command, args []string) error {
			own, url, _ := split(cmd, args)
			switch {
			case len(own) == 0:
				return usagef(cmd.CommandPath(), "open needs a journal file (mcpscope journals lists the saved ones)")
			case len(own) > 1:
				return usagef(cmd.CommandPath(), "open takes one journal; %q is one too many (a replay target goes in --target URL or after --)", own[1])
			case url != "":
				return usagef(cmd.CommandPath(), "give the replay target as --target %s", url)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			own, _, command := split(cmd, args)
			if target != "" && !hasHTTPScheme(target) {
				if h := schemeHint(target); h != "" {
					return usagef(cmd.CommandPath(), "--target: %s", h)
				}
				return usagef(cmd.CommandPath(), "--target takes a URL (http:// or https://); a stdio server's command goes after --")
			}
			return openOffline(cmd, own[0], &f, target, command)
		},
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	cmd.Flags().StringVar(&target, "target", "", "replay against this URL instead of the recorded target")
	return cmd
}

// openOffline shows the journal at path in the TUI, offline. Replays go to
// url or command when given, else to the target the journal recorded.
func openOffline(cmd *cobra.Command, path string, f *connFlags, url string, command []string) error {
	if _, err := journalHeader(cmd.CommandPath(), path); err != nil {
		return err
	}
	if err := needTerminal(cmd, "mcpscope journal FILE summarises it and mcpscope export FILE writes it out"); err != nil {
		return err
	}
	s, h, err := session.Open(path)
	if err != nil {
		return fmt.Errorf("open the journal %s: %w", path, err)
	}
	defer s.Close()
	// The recording is what this process holds, so it reads under a
	// memory limit and keeps a tight GC goal once read, until a replay's
	// live session starts.
	gc := gcgoal.AfterReadBack(s, gcgoal.BigJournal)
	defer gc.Release()
	lv, err := liveTarget(cmd, f, url, command, h.Target)
	if err != nil {
		return err
	}
	releaseOnConnect(lv.live, gc)
	store, err := f.sess.state.open(cmd.CommandPath()) // the D view lists --state / MCPSCOPE_STATE
	if err != nil {
		return err
	}
	err = runTUI(cmd, ui.Options{Session: s, Live: lv.live, Target: lv.target, TargetLine: lv.line, StateStore: store, OTLPStatus: lv.otlpStatus})
	lv.close(cmd.ErrOrStderr())
	if l := s.Loading(); l.Err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "mcpscope: %s: %s\n", termsafe.Line(path), termsafe.Text(l.Err.Error()))
	}
	return err
}

// releaseOnConnect puts the GC goal back as the replay's live session
// starts: from then on the process holds more than the recording.
func releaseOnConnect(live *ui.Live, gc *gcgoal.ReadBack) {
	connect := live.Connect
	if connect == nil {
		return
	}
	live.Connect = func(ctx context.Context) (*session.Session, *ui.Responder, error) {
		gc.Release()
		return connect(ctx)
	}
}

// needTerminal is the usage error for the inspector without a terminal on
// stdin and stdout, said before anything connects or spawns (bubbletea
// would fail only after).
func needTerminal(cmd *cobra.Command, headless string) error {
	if isTerminal(cmd.InOrStdin()) && isTerminal(cmd.OutOrStdout()) {
		return nil
	}
	return usagef(cmd.CommandPath(), "the inspector needs a terminal on stdin and stdout; without one, %s", headless)
}

// runTUI runs the inspector on o's session with the person's theme.
func runTUI(cmd *cobra.Command, o ui.Options) error {
	// The theme: MCPSCOPE_THEME, else the one chosen with T last time, else
	// the terminal's background decides.
	name := os.Getenv("MCPSCOPE_THEME")
	if name == "" {
		name = themes.Saved()
	}
	o.Theme, o.AutoTheme, o.SaveTheme = themes.FromEnv(name), name == "", themes.Save
	if o.Context == nil {
		o.Context = cmd.Context()
	}
	return ui.Run(cmd.Context(), o, tea.WithInput(cmd.InOrStdin()), tea.WithOutput(cmd.OutOrStdout()))
}

// liveSetup is where a session that cannot send sends replays.
type liveSetup struct {
	live *ui.Live
	// target and line name the target in copied command lines (nil and ""
	// when none is known).
	target []string
	line   string
	// close closes the live session if one was made, saying where its
	// journal went.
	close func(io.Writer)
	// otlpStatus is the live session's OpenTelemetry exporter in one line
	// (nil without --otlp; "" until a live session starts).
	otlpStatus func() string
}

// liveTarget is where a session that cannot send (a recording, an HTTP
// proxy attached to) sends replays: url or command when given, else
// recorded ("stdio: CMD", "http: URL", as journals and proxies name their
// targets). A recorded command is run only once the person confirms it.
func liveTarget(cmd *cobra.Command, f *connFlags, url string, command []string, recorded string) (liveSetup, error) {
	noop := func(io.Writer) {}
	missing := func(why string) (liveSetup, error) { return liveSetup{live: &ui.Live{Missing: why}, close: noop}, nil }
	confirm, shellLine := false, false
	if url == "" && len(command) == 0 && f.server.url == "" && f.server.server == "" {
		kind, rest, _ := strings.Cut(recorded, ": ")
		if !strings.Contains(recorded, ": ") && hasHTTPScheme(recorded) {
			kind, rest = "http", recorded
		}
		give := "give one when opening it: --target URL, or -- CMD ARGS"
		switch {
		case strings.TrimSpace(rest) == "":
			return missing("no target was recorded; " + give)
		case strings.Contains(rest, "[redacted]"):
			return missing("the recorded target lost a credential to redaction; " + give)
		case kind == "stdio":
			command, confirm, shellLine = []string{rest}, true, true
		case kind == "http" || kind == "http+sse":
			url = rest
			if kind == "http+sse" && f.server.transport == "" {
				f.server.transport = "sse"
			}
		default:
			return missing(fmt.Sprintf("the recorded target %q is not one mcpscope can reach; %s", termsafe.Line(recorded), give))
		}
	}
	sp, err := f.spec(cmd, url, command)
	if err != nil {
		return liveSetup{}, err
	}
	if shellLine {
		sp.Shell = true // the recorded line is shell-quoted: sh -c reads it back into the words it was
	}
	resp := ui.NewResponder(sp.Roots, sp.AskRoots)
	sp.Responder = resp
	sp.Notes = io.Discard // the TUI owns the screen; notes are in the live session's journal
	sp.Auth.Interactive = true
	if sp.Grace == 0 {
		sp.Grace = 2 * time.Second
	}
	var name string
	switch {
	case sp.URL != "":
		name = transport.RedactURL(sp.URL)
	case shellLine: // what runs, exactly: the recorded line is a shell's to read
		name = "stdio: " + shell.Join([]string{"sh", "-c", sp.Command[0]})
	default:
		name = "stdio: " + transport.CommandLine(sp.Command)
	}
	// With --otlp (or the environment) each live session sends its spans
	// as it runs, like the inspector's; the recording's own are export's.
	ep, traced, err := f.otlp.resolve(cmd)
	if err != nil {
		return liveSetup{}, err
	}
	var (
		mu     sync.Mutex
		made   []*session.Session
		traces []*liveTrace
	)
	live := &ui.Live{Target: name, Confirm: confirm, Connect: func(ctx context.Context) (*session.Session, *ui.Responder, error) {
		spc := sp
		var lt *liveTrace
		if traced {
			var err error
			if lt, err = f.otlp.startAt(cmd, ep, &spc); err != nil {
				return nil, nil, err
			}
		}
		s, err := connect.Connect(ctx, spc)
		if err != nil {
			lt.finish()
			return nil, nil, err
		}
		mu.Lock()
		made = append(made, s)
		if lt != nil {
			traces = append(traces, lt)
		}
		mu.Unlock()
		return s, resp, nil
	}}
	closeLive := func(w io.Writer) {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range made {
			s.Close()
			journalHint(w, "the replays' live session's journal", s.Info().JournalPath)
		}
		for _, lt := range traces {
			lt.finish() // after its session closed: its last spans
		}
	}
	status := func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(traces) == 0 {
			return ""
		}
		return traces[len(traces)-1].e.Status()
	}
	ls := liveSetup{live: live, target: targetArgs(sp), line: targetLine(sp), close: closeLive}
	if traced {
		ls.otlpStatus = status
	}
	return ls, nil
}
