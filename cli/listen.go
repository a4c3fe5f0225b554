package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"mcpscope/connect"
	"mcpscope/framestore"
	"mcpscope/internal/termsafe"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/transport"
)

func newListenCmd() *cobra.Command {
	var (
		f      connFlags
		asJSON bool
		filter session.ListenFilter
	)
	cmd := &cobra.Command{
		Use:     "listen [target]",
		Short:   "2026-07-28: open a subscriptions/listen stream and print its notifications",
		GroupID: groupHeadless,
		Example: "  mcpscope listen --tools http://127.0.0.1:3001/mcp\n  mcpscope listen --task-id 1f3e… --json http://127.0.0.1:3001/mcp",
		Args:    headlessArgs(0, 0, ""),
		RunE: withSession(&f, oneShotGrace, nil, func(cmd *cobra.Command, _ []string, s *session.Session, _ connect.Spec) error {
			return listen(cmd, s, filter, asJSON)
		}),
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	fs := cmd.Flags()
	fs.BoolVar(&asJSON, "json", false, "print each notification's JSON")
	fs.BoolVar(&filter.ToolsListChanged, "tools", false, "changes to the tool list (notifications/tools/list_changed)")
	fs.BoolVar(&filter.PromptsListChanged, "prompts", false, "changes to the prompt list (notifications/prompts/list_changed)")
	fs.BoolVar(&filter.ResourcesListChanged, "resources", false, "changes to the resource list (notifications/resources/list_changed)")
	stringArrayVar(fs, &filter.ResourceSubscriptions, "resource", "updates of the resource at this URI (repeatable)")
	stringArrayVar(fs, &filter.TaskIDs, "task-id", "status changes of the task with this id (repeatable)")
	return cmd
}

// listen opens the stream with the filter (all three list_changed kinds
// when none is named) and prints its notifications until Ctrl-C or the
// server ends it, following re-listens after a drop.
func listen(cmd *cobra.Command, s *session.Session, f session.ListenFilter, asJSON bool) error {
	if !f.ToolsListChanged && !f.PromptsListChanged && !f.ResourcesListChanged && len(f.ResourceSubscriptions) == 0 && len(f.TaskIDs) == 0 {
		f.ToolsListChanged, f.PromptsListChanged, f.ResourcesListChanged = true, true, true
	}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if s.Era() != protocol.EraModern {
		return usagef(cmd.CommandPath(), "listen is the 2026-07-28 way to receive notifications; %s speaks the %s era, where they arrive unasked (use record)",
			termsafe.Line(s.Info().Target), s.Era())
	}
	c := s.Listen(f)
	fmt.Fprintf(stderr, "listening (call %s); Ctrl-C to stop\n", c.Key)
	var seq uint64
	acked, relistens := false, 0
	show := func() {
		if sn := c.Snapshot(); !acked && sn.Ack != nil {
			acked = true
			fmt.Fprintf(stderr, "acknowledged: %s\n", termsafe.Line(string(sn.Ack)))
		}
		follow(s.Store(), &seq, func(e framestore.Entry) bool {
			return e.CallKey == c.Key && e.Dir == transport.In && e.Method != "" && e.Method != "notifications/subscriptions/acknowledged"
		}, func(it *framestore.Item) {
			if it.Env == nil {
				return
			}
			if asJSON {
				stdout.Write(append(termsafe.JSON(it.Frame.Data), '\n'))
				return
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
		})
	}
	for {
		show()
		select {
		case <-s.Store().Changed():
		case <-c.Done():
			show()
			// A dropped stream is listened to again (2026-07-28 has no
			// resumption), a bounded number of times: wait for it.
			if next := c.RelistenWait(cmd.Context()); next != nil {
				relistens++
				fmt.Fprintf(stderr, "the listen stream dropped: %v\nlistening again (call %s, re-listen %d of at most %d)\n",
					termsafe.Text(fmt.Sprint(c.Snapshot().Err())), next.Key, relistens, session.MaxRelistens)
				c, acked = next, false
				continue
			}
			if cmd.Context().Err() != nil {
				return nil
			}
			if err := c.Snapshot().Err(); err != nil {
				return fmt.Errorf("listen ended: %w", err)
			}
			fmt.Fprintln(stderr, "the server ended the listen stream")
			return nil
		case <-cmd.Context().Done():
			_ = s.Cancel(c, "stopped by the user")
			return nil
		}
	}
}
