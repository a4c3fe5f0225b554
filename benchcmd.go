package main

import (
	"fmt"
	"io"
	"os"

	"mcpscope/internal/bench"
)

// runBench prints ingest figures beside a bare decode loop in the same run.
func runBench(o *options, stdout io.Writer) error {
	n := o.count
	if n <= 0 {
		n = 200_000
	}
	dir, err := os.MkdirTemp("", "mcpscope-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	r, err := bench.Run(n, dir)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, r.String())
	return nil
}
