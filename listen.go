package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"mcpscope/internal/termsafe"
	"mcpscope/session"
)

// runListen opens a subscriptions/listen stream (2026-07-28) with the filter
// the flags name and prints its notifications until Ctrl-C or the server ends
// it: `mcpscope listen [--tools] [--prompts] [--resources] [--resource URI]…
// [--task-id ID]…`.
func runListen(ctx context.Context, o *options, stdout, stderr io.Writer) error {
	f := session.ListenFilter{ToolsListChanged: o.listenTools, PromptsListChanged: o.listenPrompts,
		ResourcesListChanged: o.listenResources, ResourceSubscriptions: o.listenURIs, TaskIDs: o.listenTaskIDs}
	if !f.ToolsListChanged && !f.PromptsListChanged && !f.ResourcesListChanged && len(f.ResourceSubscriptions) == 0 && len(f.TaskIDs) == 0 {
		f.ToolsListChanged, f.PromptsListChanged, f.ResourcesListChanged = true, true, true
	}
	s, err := connect(ctx, o, nil, oneShotGrace)
	if err != nil {
		return err
	}
	defer s.Close()
	if s.Era() != session.EraModern {
		return usagef("listen is the 2026-07-28 way to receive notifications; %s speaks the %s era, where they arrive unasked (use record)",
			s.Info().Target, s.Era())
	}
	c := s.Listen(f)
	fmt.Fprintf(stderr, "listening (call %s); Ctrl-C to stop\n", c.Key)
	var seq uint64
	acked := false
	show := func() {
		for _, it := range s.Store().Since(seq, 0) {
			seq = it.Seq
			if it.Env == nil || it.Env.Method == "" || it.Frame.Dir.String() != "in" {
				continue
			}
			if sn := c.Snapshot(); !acked && sn.Ack != nil {
				acked = true
				fmt.Fprintf(stderr, "acknowledged: %s\n", termsafe.Line(string(sn.Ack)))
			}
			if it.CallKey != c.Key || it.Env.Method == "notifications/subscriptions/acknowledged" {
				continue
			}
			if o.jsonOut {
				fmt.Fprintf(stdout, "%s\n", it.Frame.Data)
				continue
			}
			var p struct {
				URI           string `json:"uri"`
				TaskID        string `json:"taskId"`
				Status        string `json:"status"`
				StatusMessage string `json:"statusMessage"`
			}
			_ = json.Unmarshal(it.Env.Params, &p)
			what := p.URI
			if p.TaskID != "" {
				what = p.TaskID + " " + p.Status + " " + p.StatusMessage
			}
			fmt.Fprintf(stdout, "%s %s %s\n", it.Frame.Time.Format("15:04:05.000"), termsafe.Line(it.Env.Method), termsafe.Line(strings.TrimSpace(what)))
		}
	}
	for {
		show()
		select {
		case <-s.Store().Changed():
		case <-c.Done():
			show()
			if next := c.Next(); next != nil {
				c = next // re-listened after a drop
				continue
			}
			sn := c.Snapshot()
			if err := sn.Err(); err != nil {
				return fmt.Errorf("listen ended: %w", err)
			}
			fmt.Fprintln(stderr, "the server ended the listen stream")
			return nil
		case <-ctx.Done():
			_ = s.Cancel(c, "stopped by the user")
			return nil
		}
	}
}
