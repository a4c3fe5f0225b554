package main

import (
	"context"
	"fmt"
	"io"

	"mcpscope/internal/demo"
)

// runDemo serves the embedded demo server: stdio by default (what mcpscope
// spawns when given no target), or Streamable HTTP with --http ADDR.
func runDemo(ctx context.Context, o *options, stdout, stderr io.Writer) error {
	opts := demo.Options{}
	if o.httpAddr == "" {
		return demo.ServeStdio(ctx, opts)
	}
	return demo.ServeHTTP(ctx, o.httpAddr, opts, func(url string) {
		fmt.Fprintf(stdout, "mcpscope demo server listening on %s\n", url)
		fmt.Fprintf(stderr, "inspect it with: mcpscope %s\n", url)
	})
}
