package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/artifact/mock"
	"mcpscope/internal/termsafe"
)

func newServeCmd() *cobra.Command {
	var (
		addr       string
		speed      float64
		noWait     bool
		answerWait time.Duration
		quiet      bool
		strict     bool
	)
	cmd := &cobra.Command{
		Use:   "serve FILE",
		Short: "Serve a journal as a mock MCP server (stdio or Streamable HTTP)",
		Long: "Serve a journal as a mock MCP server: a client gets the recorded answers, byte for byte, in the protocol era " +
			"that was recorded (the initialize era with sessions, or the stateless 2026-07-28 protocol; a 2025 client of a " +
			"2026 recording gets an initialize answer made from the recorded server/discover). The id of each answer " +
			"and the progress token of each progress notification become the client's own; nothing else changes.\n\n" +
			"Requests are matched ignoring ids and params._meta: exactly first (recorded repeats are served in order), " +
			"then by method and tool, prompt or resource name (the closest params win), else a JSON-RPC error names the " +
			"closest recording. An answer matched by name alone (the request's params differ from the recording's) says so " +
			"in its result's _meta (" + mock.MetaMatch + ") and on stderr; --strict refuses such requests instead. What the server sent during a call (progress, logs, sampling or elicitation requests) " +
			"comes again with its recorded spacing, scaled by --speed; what it sent outside calls is replayed from the " +
			"handshake on. A line per request on stderr says how it was matched.",
		GroupID: groupSessions,
		Example: "  mcpscope serve session.jsonl                       # stdio: point a client's command at this\n" +
			"  mcpscope serve session.jsonl --http 127.0.0.1:3001  # Streamable HTTP at http://127.0.0.1:3001/mcp\n" +
			"  mcpscope tools -- mcpscope serve session.jsonl",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef(cmd.CommandPath(), "serve needs one journal file")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if speed <= 0 {
				return usagef(cmd.CommandPath(), "--speed takes a factor above 0 (2 is twice as fast; --no-wait sends at once), got %v", speed)
			}
			if _, err := journalHeader(cmd.CommandPath(), args[0]); err != nil {
				return err
			}
			rec, err := mock.Load(args[0])
			if err != nil {
				return err
			}
			errw := cmd.ErrOrStderr()
			o := mock.Options{Speed: speed, NoWait: noWait, AnswerWait: answerWait, Warn: errw, Strict: strict}
			if !quiet {
				o.Log = errw
			}
			fmt.Fprintf(errw, "mcpscope serve: %s: %s %s, %s era (protocol %s), %d recorded calls, recorded over %s\n",
				termsafe.Line(args[0]), termsafe.Line(rec.ServerInfo.Name), termsafe.Line(rec.ServerInfo.Version), rec.Era,
				termsafe.Line(rec.ProtocolVersion), len(rec.Calls), rec.Transport)
			for _, n := range rec.Notes {
				fmt.Fprintf(errw, "mcpscope serve: note: %s\n", termsafe.Line(n))
			}
			srv := mock.New(rec, o)
			if addr == "" {
				return srv.ServeStdio(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout())
			}
			return srv.ServeHTTP(cmd.Context(), addr, func(url string) {
				fmt.Fprintf(cmd.OutOrStdout(), "mcpscope serve listening on %s\n", url)
			})
		},
	}
	cmd.Flags().StringVar(&addr, "http", "", "serve Streamable HTTP on this host:port (127.0.0.1:0 picks a port) instead of stdio")
	cmd.Flags().Float64Var(&speed, "speed", 1, "replay at this factor of the recorded pace (2 is twice as fast)")
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "send everything at once, without the recorded spacing (a client may then handle a call's result before its progress: the TypeScript SDK does, and drops that progress)")
	cmd.Flags().DurationVar(&answerWait, "answer-wait", 10*time.Second, "how long a replayed server request waits for the client's answer")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print no line per request on stderr")
	cmd.Flags().BoolVar(&strict, "strict", false, "answer only requests whose params match a recording exactly; others get an error naming the closest")
	return cmd
}
