package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"mcpscope/connect"
	"mcpscope/internal/near"
	"mcpscope/internal/render"
	"mcpscope/internal/schema"
	"mcpscope/internal/shell"
	"mcpscope/internal/termsafe"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/taskfollow"
	"mcpscope/transport"
	"mcpscope/ui/result"
)

func newCallCmd() *cobra.Command {
	var (
		f      connFlags
		asJSON bool
		args   string
		asTask bool
		detach bool
		ttl    durationFlag

		unchecked bool
	)
	cmd := &cobra.Command{
		Use:     "call TOOL [key=value...] [target]",
		Short:   "Call a tool (key=value typed by its schema, or --args JSON)",
		GroupID: groupHeadless,
		Example: `  mcpscope call echo message=hello -- node server.js
  mcpscope call add --args '{"a":1,"b":2}' http://127.0.0.1:3001/mcp
  mcpscope call research topic=x --task http://127.0.0.1:3001/mcp
  mcpscope call ask --answer 'elicitation/create={"action":"accept","content":{"name":"Ada"}}'
  mcpscope call trigger-long-running-operation duration=600 --detach http://127.0.0.1:3001/mcp`,
		Args: headlessArgs(1, -1, "a tool name"),
		RunE: withSession(&f, oneShotGrace, func(cmd *cobra.Command, own []string) error {
			return checkPairs(cmd, own[1:])
		}, func(cmd *cobra.Command, own []string, s *session.Session, sp connect.Spec) error {
			ctx, out, errw := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			name := own[0]
			if detach {
				// Refused before anything is sent: nothing would be left to
				// pick up again.
				if why := s.WhyNotDetachable(); why != "" {
					return usagef(cmd.CommandPath(), "--detach: %s; what would work: %s", why, detachAlternatives(s))
				}
			}
			tools := &toolListing{s: s}
			arguments, err := toolArguments(cmd, tools, name, args, own[1:], unchecked)
			if err != nil {
				return err
			}
			if !asTask && requiresTask(ctx, s, tools, name) {
				// execution.taskSupport "required": the server would refuse
				// it as a plain call.
				fmt.Fprintf(errw, "mcpscope: note: %s requires running as a task (execution.taskSupport \"required\"): it runs as one\n", termsafe.Line(name))
				asTask = true
			}
			params := map[string]any{"name": name, "arguments": arguments}
			var c *session.Call
			taskNoted := false
			if asTask {
				if !serverHasTasks(s.Info().Capabilities) {
					fmt.Fprintf(errw, "mcpscope: note: --task: the server declares no tasks capability, so %s runs as a plain call\n", termsafe.Line(name))
					taskNoted = true
				}
				c = s.CallAsTask("tools/call", params, ttl.d)
			} else {
				c = s.Call("tools/call", params)
			}
			if detach {
				d, ended, err := s.DetachWhenRejoinable(ctx, c)
				if errors.Is(err, session.ErrNotRejoinable) {
					// Nobody could ever get its result: do not leave it running.
					_ = s.Cancel(c, "mcpscope call --detach: the call cannot be rejoined")
					if s.WhyNotDetachable() == "" { // the server's answer decided: say what else would work
						return fmt.Errorf("%w; what would work: %s", err, detachAlternatives(s))
					}
					return err
				}
				if err != nil {
					return err
				}
				if !ended {
					return printDetached(out, errw, asJSON, d, s.RejoinCommandHere(d.Handle))
				}
				if _, err := c.Await(ctx); errors.Is(err, session.ErrTimeout) {
					// It did not end by itself: nothing came that it could
					// be detached on before mcpscope gave up on it.
					return fmt.Errorf("--detach: %s timed out before it could be detached (the server made no task of it and sent no SSE event id for it): %w",
						termsafe.Line(name), err)
				}
				fmt.Fprintln(errw, "the call ended before it could be detached: its result follows")
			}
			stopProgress := func() {}
			if isTerminal(errw) && !detach {
				stopProgress = showProgress(errw, s, c)
				defer stopProgress()
			}
			res, err := c.Await(ctx)
			stopProgress() // the progress line goes before anything else is printed
			if err != nil {
				return withAnswerHint(err, s, sp.Answers, nil)
			}
			final := lastRound(c).Snapshot()
			if asTask && !taskNoted && c.Snapshot().TaskID == "" {
				fmt.Fprintf(errw, "mcpscope: note: --task: the server answered with a plain result, not a task: %s ran as a plain call\n", termsafe.Line(name))
			}
			if id := c.Snapshot().TaskID; id != "" {
				_ = s.Stored(ctx) // its rejoin record is written before the task is told
				fmt.Fprintf(errw, "task %s created\n", termsafe.Line(id))
				res, err = taskfollow.Follow(ctx, s, id, func(t protocol.Task) { printTaskStatus(errw, t) })
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if err != nil {
					return withTaskHint(err, s, id, sp.URL)
				}
				final.IsError = protocol.IsToolError(res)
			}
			printResult(out, asJSON, res, render.Contents, func() json.RawMessage { return outputSchemaOf(ctx, tools, name) })
			if final.IsError {
				return shown{withAnswerHint(&session.ToolError{Name: name}, s, sp.Answers, res)}
			}
			return nil
		}),
	}
	cmd.ValidArgsFunction = completeToolNames(&f)
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for programs")
	cmd.Flags().StringVar(&args, "args", "", "the tool's arguments as a JSON object (key=value arguments are added to it)")
	cmd.Flags().BoolVar(&asTask, "task", false, "run the tool as a task (2025-11-25): follow its status, fetch its result")
	cmd.Flags().Var(&ttl, "ttl", "how long the server should keep the task (with --task)")
	cmd.Flags().BoolVar(&unchecked, "no-check", false, "send the arguments as given, unchecked against the tool's inputSchema (required ones, types; a key=value that fits no type goes as JSON or text), even to a tool the server does not list")
	cmd.Flags().BoolVar(&detach, "detach", false, "leave the call running on the server once it can be rejoined (an SSE event id, or a task): print its handle for 'mcpscope rejoin HANDLE' and exit")
	return cmd
}

// printResult writes a result (a tool's, a resource read's, a prompt's):
// JSON with --json; on a terminal, the rendering the inspector's response
// tab shows (package result), in colour unless NO_COLOR is set, with the
// tool's outputSchema beside a structuredContent when schema (nil: none)
// finds it; piped, human's text (render.Contents, render.Prompt).
func printResult(out io.Writer, asJSON bool, res json.RawMessage, human func(io.Writer, json.RawMessage) bool, schema func() json.RawMessage) {
	if f, ok := out.(*os.File); ok && !asJSON && isTerminal(out) {
		width := 80
		if w, _, err := term.GetSize(f.Fd()); err == nil && w > 0 {
			width = w
		}
		o := result.Options{Width: width}
		if schema != nil && hasStructured(res) {
			o.OutputSchema = schema()
		}
		if printRendered(out, res, o, os.Getenv("NO_COLOR") == "") {
			return
		}
	}
	render.Result(out, asJSON, res, human)
}

// hasStructured reports whether a tool result carries structuredContent.
func hasStructured(res json.RawMessage) bool {
	var r struct {
		SC json.RawMessage `json:"structuredContent"`
	}
	return json.Unmarshal(res, &r) == nil && len(r.SC) > 0 && string(r.SC) != "null"
}

// printRendered writes res as package result renders it; false when it
// has no rendering (not a result it knows, or too large).
func printRendered(out io.Writer, res json.RawMessage, o result.Options, color bool) bool {
	st := result.Styles{}
	if color {
		o.Markdown, st = "dark", result.ANSI()
	}
	ls, ok := result.Render(res, o, st)
	if !ok {
		return false
	}
	fmt.Fprintln(out, strings.Join(ls, "\n"))
	return true
}

// outputSchemaOf is the tool's outputSchema as the server lists it (nil
// when it has none, or the listing fails: the result shows without it).
func outputSchemaOf(ctx context.Context, tools *toolListing, name string) json.RawMessage {
	t, _, _ := tools.find(ctx, name)
	return t.OutputSchema
}

// listedTool is what a call reads of a tool as tools/list shows it.
type listedTool struct {
	Name         string          `json:"name"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Execution    struct {
		TaskSupport string `json:"taskSupport"`
	} `json:"execution"`
}

// toolListing is the server's tools/list, asked for once per command.
type toolListing struct {
	s     *session.Session
	tools []json.RawMessage
	err   error
	done  bool
}

// find is the tool named name; ok false when the server lists none such
// (err: the listing failed).
func (l *toolListing) find(ctx context.Context, name string) (t listedTool, ok bool, err error) {
	if !l.done {
		l.tools, l.err = l.s.ListAll(ctx, "tools/list", "tools")
		l.done = l.err == nil // a failed listing may be asked again
	}
	if l.err != nil {
		return t, false, l.err
	}
	for _, raw := range l.tools {
		var lt listedTool
		if json.Unmarshal(raw, &lt) == nil && lt.Name == name {
			return lt, true, nil
		}
	}
	return t, false, nil
}

// requiresTask reports whether the tool must run as a task: a 2025-11-25
// server with the tasks capability that lists it with execution.taskSupport
// "required". (The 2026-07-28 extension is declared on every request and
// the server decides; a server without tasks is not asked.)
func requiresTask(ctx context.Context, s *session.Session, tools *toolListing, name string) bool {
	if s.Era() == protocol.EraModern || !serverHasTasks(s.Info().Capabilities) {
		return false
	}
	t, ok, _ := tools.find(ctx, name)
	return ok && t.Execution.TaskSupport == "required"
}

// detachAlternatives says what would let a call of s be detached.
func detachAlternatives(s *session.Session) string {
	if s.WhyNotRejoinable() != "" {
		return "a server over HTTP that makes tasks (2026-07-28 tasks extension, or 2025-11-25 tasks with --task) or keeps an event store (its streams carry SSE event ids); or run the call without --detach"
	}
	legacy := "--era legacy, if the server also speaks 2025-11-25 and keeps an event store (its streams carry SSE event ids, which a rejoin resumes); "
	if s.Era() == protocol.EraModern && serverHasTasks(s.Info().Capabilities) {
		return legacy + "a call the server makes a task of (it decides which: the demo does for slow of 30 s or more, or task=always); or run the call without --detach"
	}
	return legacy + "a server that offers the tasks extension; or run the call without --detach"
}

// printDetached tells where a call left running can be picked up again:
// its handle on stdout (JSON with --json), the command on stderr.
func printDetached(out, errw io.Writer, asJSON bool, d session.Detachment, rejoin string) error {
	if asJSON {
		return render.Line(out, d)
	}
	fmt.Fprintln(out, termsafe.Line(shell.Quote(d.Handle)))
	what := "call"
	if d.TaskID != "" {
		what = "task " + termsafe.Line(d.TaskID)
	}
	fmt.Fprintf(errw, "%s left running on the server (%s); rejoin with: %s\n", what, termsafe.Line(d.State),
		termsafe.Line(rejoin))
	return nil
}

// lastRound is the last MRTR round of a call (the call itself without any).
func lastRound(c *session.Call) *session.Call {
	for next := c.Next(); next != nil; next = next.Next() {
		c = next
	}
	return c
}

// toolArguments builds a call's arguments: --args, then key=value pairs
// typed by the tool's inputSchema. Unless unchecked, it then checks them
// as the inspector's form does before anything is sent: the tool is one
// the server lists, its required arguments are all given, and what --args
// gives is of the types the schema allows. Unchecked, they go as given
// (a key=value that fits no type as JSON or text), to see what the server
// makes of them. A listing that fails for another reason than a timeout
// checks nothing: the server decides.
func toolArguments(cmd *cobra.Command, tools *toolListing, name, argsJSON string, kvs []string, unchecked bool) (map[string]any, error) {
	args := map[string]any{}
	if argsJSON != "" {
		if err := json.Unmarshal([]byte(argsJSON), &args); err != nil {
			return nil, usagef(cmd.CommandPath(), "--args must be a JSON object of tool arguments: %v", err)
		}
	}
	if len(kvs) == 0 && unchecked {
		return args, nil
	}
	t, listed, err := tools.find(cmd.Context(), name)
	if err != nil {
		if !unchecked && (len(kvs) > 0 || errors.Is(err, session.ErrTimeout)) {
			return nil, fmt.Errorf("tools/list (to read %s's arguments before calling it): %w", termsafe.Line(name), err)
		}
		listed = false
	}
	if err == nil && !listed && !unchecked {
		return nil, noSuchTool(cmd, tools, name)
	}
	types := schema.PropertyTypes(t.InputSchema) // none when it is not listed
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		val, err := schema.Coerce(types[k], v)
		if err != nil {
			if !unchecked {
				return nil, usagef(cmd.CommandPath(), "argument %s: %v (--no-check sends it as it is)", k, err)
			}
			val, _ = schema.Coerce(nil, v)
		}
		args[k] = val
	}
	if listed && !unchecked {
		if err := checkArguments(cmd, name, t.InputSchema, args); err != nil {
			return nil, err
		}
	}
	return args, nil
}

// checkArguments refuses arguments the tool's inputSchema says the server
// will refuse: a required one missing, or one from --args of a type the
// schema does not allow (key=value pairs were typed by it already). What
// the server named is quoted for the shell.
func checkArguments(cmd *cobra.Command, name string, inputSchema json.RawMessage, args map[string]any) error {
	var s struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(inputSchema, &s)
	types := schema.PropertyTypes(inputSchema)
	typeOf := func(k string) string {
		if t := strings.Join(types[k], " or "); t != "" {
			return " (" + t + ")"
		}
		return ""
	}
	var missing, described, pairs []string
	for _, k := range s.Required {
		if _, ok := args[k]; ok || slices.Contains(missing, k) {
			continue
		}
		missing = append(missing, k)
		described = append(described, shell.Quote(k)+termsafe.Line(typeOf(k)))
		pairs = append(pairs, shell.Quote(k+"=VALUE"))
	}
	if len(missing) > 0 {
		what, them := "argument", "it"
		if len(missing) > 1 {
			what, them = "arguments", "them"
		}
		example := map[string]string{}
		for _, k := range missing {
			example[k] = "…"
		}
		b, _ := json.Marshal(example)
		return usagef(cmd.CommandPath(), "%s needs the required %s %s, which the call does not give; pass %s as %s (or in --args %s), or send the call as it is with --no-check",
			termsafe.Line(name), what, strings.Join(described, ", "), them, strings.Join(pairs, " "), shell.Quote(string(b)))
	}
	keys := slices.Sorted(maps.Keys(args))
	for _, k := range keys {
		if !schema.Fits(types[k], args[k]) {
			return usagef(cmd.CommandPath(), "argument %s of %s is %s, and its inputSchema allows %s; give it as %s, or send the call as it is with --no-check",
				shell.Quote(k), termsafe.Line(name), schema.Kind(args[k]), termsafe.Line(strings.Join(types[k], " or ")), shell.Quote(k+"=VALUE"))
		}
	}
	return nil
}

// noSuchTool is the error for a tool the server does not list, with the
// names it lists that the user may have meant.
func noSuchTool(cmd *cobra.Command, tools *toolListing, name string) error {
	msg := fmt.Sprintf("the server lists no tool named %q", name)
	var names []string
	for _, raw := range tools.tools {
		var lt listedTool
		if json.Unmarshal(raw, &lt) == nil {
			names = append(names, lt.Name)
		}
	}
	if meant := near.Names(name, names, 3); len(meant) > 0 {
		for i, n := range meant {
			meant[i] = termsafe.Line(shell.Quote(n))
		}
		msg += "; did you mean " + strings.Join(meant, " or ") + "?"
	}
	return usagef(cmd.CommandPath(), "%s (mcpscope tools lists them; --no-check calls it anyway)", msg)
}

// checkPairs rejects tool arguments that are not key=value, before
// anything starts.
func checkPairs(cmd *cobra.Command, kvs []string) error {
	for _, kv := range kvs {
		if !strings.Contains(kv, "=") {
			hint := ""
			if strings.HasPrefix(strings.TrimSpace(kv), "{") {
				hint = " (arguments as JSON go in --args)"
			}
			return usagef(cmd.CommandPath(), "tool arguments are key=value, got %q%s", kv, hint)
		}
	}
	return nil
}

// showProgress keeps one line on a terminal's stderr up to date with the
// call's progress (the last round's), until stop, which clears it.
func showProgress(w io.Writer, s *session.Session, c *session.Call) (stop func()) {
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		shown := false
		for {
			select {
			case <-quit:
				if shown {
					fmt.Fprint(w, "\r\x1b[K")
				}
				return
			case <-s.Store().Changed():
			}
			sn := lastRound(c).Snapshot()
			if !sn.HasProgress {
				continue
			}
			p := sn.Progress
			line := fmt.Sprintf("%s: %g", sn.Name, p.Value)
			if p.Total > 0 {
				line += fmt.Sprintf("/%g", p.Total)
			}
			if p.Message != "" {
				line += " " + p.Message
			}
			fmt.Fprintf(w, "\r\x1b[K%s", termsafe.Line(shorten(line, 100)))
			shown = true
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(quit); <-finished }) }
}

// shorten cuts s to n runes with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// serverHasTasks reports whether the server's capabilities (caps) declare
// tasks: the tasks capability (2025-11-25) or the tasks extension
// (2026-07-28).
func serverHasTasks(caps json.RawMessage) bool { return protocol.ServerHasTasks(caps) }

// needsAnswer is a call that failed for want of an answer to a server
// request of the initialize era (elicitation, sampling) that headless
// mcpscope gives only from --answer: the hint says how.
type needsAnswer struct {
	error
	method string
}

func (e *needsAnswer) Unwrap() error { return e.error }

// answerExamples are what an answer to each such method looks like.
var answerExamples = map[string]string{
	"elicitation/create":     `{"action":"accept","content":{…}}`,
	"sampling/createMessage": `{"role":"assistant","content":{"type":"text","text":"…"},"model":"…"}`,
}

// withAnswerHint adds the --answer hint to a failed call's err when the
// server asked for an answer nobody gave, or said (in its error, or in the
// tool's result res) that it needed one: a server request in the session
// that --answer did not cover, or the server naming elicitation or
// sampling, which it may not even ask for when the client did not declare
// it (the client declares only what --answer can answer).
func withAnswerHint(err error, s *session.Session, given map[string]json.RawMessage, res json.RawMessage) error {
	var rpc *journal.RPCError
	var tool *session.ToolError
	if !errors.As(err, &rpc) && !errors.As(err, &tool) {
		return err
	}
	asked := map[string]bool{}
	for _, it := range s.Store().Since(0, 0) {
		if it.Class == journal.ClassRequest && it.Frame.Dir == transport.In && it.Env != nil {
			asked[it.Env.Method] = true
		}
	}
	said := strings.ToLower(err.Error() + " " + string(res))
	for _, m := range []string{"elicitation/create", "sampling/createMessage"} {
		if _, ok := given[m]; ok {
			continue
		}
		word := strings.ToLower(strings.SplitN(m, "/", 2)[0])
		if asked[m] || strings.Contains(said, word) {
			return &needsAnswer{error: err, method: m}
		}
	}
	return err
}
