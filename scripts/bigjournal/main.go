// Command bigjournal writes a synthetic journal of any size for measuring
// how mcpscope reads long journals: a Streamable HTTP session (POSTs with
// their headers, SSE streams and their metadata) or, with -stdio, a stdio
// one; cycles of a tools/call, its progress notifications and its result,
// with a log line, an error and a cancelled call now and then. mcpscope
// bench --only journal writes the same journals for its read-back rows.
//
//	go run ./scripts/bigjournal -frames 1000000 -o big-http.jsonl
//	go run ./scripts/bigjournal -frames 1000000 -stdio -o big-stdio.jsonl
package main

import (
	"flag"
	"fmt"
	"os"

	"mcpscope/bench"
)

func main() {
	frames := flag.Int("frames", 1_000_000, "how many frames to write (at least)")
	out := flag.String("o", "big.jsonl", "the journal to write")
	stdio := flag.Bool("stdio", false, "a stdio session (default: Streamable HTTP with SSE metadata)")
	flag.Parse()
	if err := bench.WriteJournal(*out, *frames, !*stdio); err != nil {
		fmt.Fprintln(os.Stderr, "bigjournal:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "wrote %s (at least %d frames)\n", *out, *frames)
}
