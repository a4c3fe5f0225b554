package cli

import (
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"mcpscope/artifact/export"
	"mcpscope/internal/userfile"
	"mcpscope/session"
)

func newExportCmd() *cobra.Command {
	var (
		ff     filterFlag
		format string
		output string
	)
	cmd := &cobra.Command{
		Use:   "export FILE",
		Short: "Export a journal as HAR, JSONL or OpenTelemetry traces (OTLP/JSON)",
		Long: "Export a journal: --format har writes the HTTP exchanges as a HAR 1.2 log (each POST with its JSON answer " +
			"or its SSE events, each GET stream, each DELETE) for a browser's HAR viewer; jsonl writes journal records " +
			"(the output is a journal itself); otlp writes one trace with a span per call after the OpenTelemetry " +
			"conventions for MCP, with progress, notifications and server requests as span events, ready to POST to a " +
			"collector's /v1/traces.\n\n" +
			"With --filter, jsonl keeps the frames it matches, har the exchanges and otlp the calls that hold such a frame. " +
			"The journal is read as a stream: any length exports in bounded memory. Credentials stay redacted.",
		GroupID: groupSessions,
		Example: "  mcpscope export session.jsonl --format har -o session.har\n" +
			"  mcpscope export session.jsonl --format otlp | curl -H 'Content-Type: application/json' --data-binary @- http://127.0.0.1:4318/v1/traces\n" +
			"  mcpscope export session.jsonl --format jsonl --filter '~e'",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef(cmd.CommandPath(), "export needs one journal file")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(export.Formats, format) {
				return usagef(cmd.CommandPath(), "--format takes %s, got %q", strings.Join(export.Formats, ", "), format)
			}
			flt, err := ff.parse(cmd)
			if err != nil {
				return err
			}
			if _, err := journalHeader(cmd.CommandPath(), args[0]); err != nil {
				return err
			}
			o := export.Options{Filter: flt, Version: session.Version}
			write := func(w io.Writer) error {
				err := export.Write(w, args[0], format, o)
				if errors.Is(err, export.ErrNotHTTP) {
					return usagef(cmd.CommandPath(), "%v", err)
				}
				return journalDamage(cmd.ErrOrStderr(), args[0], err)
			}
			if output == "" || output == "-" {
				return write(cmd.OutOrStdout())
			}
			if err := checkOutput(cmd, "-o", output); err != nil {
				return err
			}
			return userfile.Write(output, 0o600, write)
		},
	}
	cmd.Flags().StringVar(&format, "format", "jsonl", "the output format: har, jsonl or otlp")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file instead of standard output (replaced whole; mode 0600 when new; a FIFO or device is written through)")
	ff.add(cmd.Flags(), "frames (jsonl), exchanges (har) or calls (otlp)")
	return cmd
}

// checkOutput rejects, as a usage error, a path the user named for mcpscope
// to write that it cannot write: a directory.
func checkOutput(cmd *cobra.Command, flag, path string) error {
	if _, err := userfile.Resolve(path); errors.Is(err, userfile.ErrDirectory) {
		return usagef(cmd.CommandPath(), "%s %s: %s is a directory; name a file", flag, path, path)
	}
	return nil
}
