// Command mcpscope is a terminal inspector for MCP sessions: it connects to a
// server over Streamable HTTP or spawns one over stdio and shows every frame,
// call, notification and progress stream; the same engine runs headless.
package main

import (
	"os"

	"mcpscope/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
