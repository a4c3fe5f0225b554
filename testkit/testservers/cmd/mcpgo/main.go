// Command mcpgo serves testservers.MCPGo (a server written with
// github.com/mark3labs/mcp-go) over stdio, for tests that spawn it
// (testservers.BuildMCPGo).
package main

import (
	"fmt"
	"os"

	"github.com/mark3labs/mcp-go/server"

	"mcpscope/testkit/testservers"
)

func main() {
	if err := server.ServeStdio(testservers.MCPGo()); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgo:", err)
		os.Exit(1)
	}
}
