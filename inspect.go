package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"mcpscope/session"
	"mcpscope/themes"
	"mcpscope/ui"
)

// runInspector connects to the target and runs the TUI over the session.
// Server requests (elicitation, sampling, roots) go to the UI's responder.
func runInspector(ctx context.Context, o *options, _, stderr io.Writer) error {
	var roots []session.Root
	for _, u := range o.roots {
		roots = append(roots, session.Root{URI: u})
	}
	resp := ui.NewResponder(roots)
	fmt.Fprintln(stderr, "mcpscope: connecting…")
	s, err := connect(ctx, o, resp, 2*time.Second)
	if err != nil {
		return err
	}
	defer s.Close()
	theme := os.Getenv("MCPSCOPE_THEME")
	screenOwned.Store(true) // from here the terminal is the UI's: OAuth notes go to the notes pane only
	defer screenOwned.Store(false)
	err = ui.Run(ctx, ui.Options{Session: s, Responder: resp, Theme: themes.FromEnv(theme), Target: targetArgs(o)})
	// Quitting leaves long HTTP calls running on the server, to rejoin later.
	if handles := s.DetachAll(); len(handles) > 0 {
		fmt.Fprintf(stderr, "mcpscope: left %d call(s) running on the server; rejoin with:\n", len(handles))
		for _, h := range handles {
			fmt.Fprintf(stderr, "  mcpscope rejoin %s\n", h)
		}
	}
	return err
}

// targetArgs is how a copied command line names this session's target.
func targetArgs(o *options) []string {
	switch {
	case o.url != "":
		return []string{o.url}
	case len(o.command) > 0:
		return append([]string{"--"}, o.command...)
	}
	return nil
}
