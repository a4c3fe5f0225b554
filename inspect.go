package main

import (
	"context"
	"io"
)

// runInspector is a placeholder until the TUI lands (ui/ replaces this file):
// it records the session to stdout so the default command does something.
func runInspector(ctx context.Context, o *options, stdout, _ io.Writer) error {
	return runRecord(ctx, o, stdout)
}
