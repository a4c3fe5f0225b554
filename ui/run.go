package ui

import (
	"context"
	"errors"

	tea "charm.land/bubbletea/v2"
)

// Run shows the inspector until the user quits or ctx ends. Extra program
// options are for tests (input, output, window size).
func Run(ctx context.Context, o Options, popts ...tea.ProgramOption) error {
	m := New(o)
	popts = append([]tea.ProgramOption{tea.WithContext(ctx)}, popts...)
	p := tea.NewProgram(m, popts...)
	_, err := p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, tea.ErrInterrupted) {
		return context.Canceled
	}
	return err
}
