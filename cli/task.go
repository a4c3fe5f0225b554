package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/connect"
	"mcpscope/internal/render"
	"mcpscope/internal/shell"
	"mcpscope/internal/termsafe"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/taskfollow"
	"mcpscope/transport"
)

// newTasksCmd lists tasks: tasks/list, or in the 2026 era (whose tasks
// extension has no tasks/list) the tasks this machine remembers.
func newTasksCmd() *cobra.Command {
	var f connFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "tasks [target]",
		Short:   "List the server's tasks (2026-07-28: the ones mcpscope started there and remembers)",
		GroupID: groupHeadless,
		Args:    headlessArgs(0, 0, ""),
		RunE: withSession(&f, oneShotGrace, nil, func(cmd *cobra.Command, _ []string, s *session.Session, sp connect.Spec) error {
			if s.Era() == protocol.EraModern {
				return listKnownTasks(cmd, s, sp.URL, asJSON)
			}
			all, err := s.ListAll(cmd.Context(), "tasks/list", "tasks")
			if err != nil {
				return err
			}
			if asJSON {
				return render.Line(cmd.OutOrStdout(), map[string]any{"tasks": all})
			}
			if len(all) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "(no tasks)")
			}
			for _, raw := range all {
				var t protocol.Task
				_ = json.Unmarshal(raw, &t)
				printTaskStatus(cmd.OutOrStdout(), t)
			}
			return nil
		}),
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for programs")
	return cmd
}

// newTaskCmd groups the actions on one task.
func newTaskCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "task get|result|cancel|update ID [target]",
		Short:   "Get, follow to its result, cancel or answer one task",
		GroupID: groupHeadless,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef(cmd.CommandPath(), "task needs an action (get, result, cancel or update) and a task id")
			}
			return usagef(cmd.CommandPath(), "task actions are get, result, cancel and update, got %q", args[0])
		},
		RunE: func(*cobra.Command, []string) error { return nil },
	}
	for _, a := range []struct{ name, short string }{
		{"get", "Print a task's state (tasks/get)"},
		{"result", "Follow a task to its end and print its result (tasks/result; 2026-07-28: tasks/get until done)"},
		{"cancel", "Cancel a task (tasks/cancel)"},
		{"update", "2026-07-28: answer an input_required task's requests from --answer/--answers (tasks/update)"},
	} {
		cmd.AddCommand(newTaskActionCmd(a.name, a.short))
	}
	return cmd
}

func newTaskActionCmd(action, short string) *cobra.Command {
	var f connFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   action + " ID [target]",
		Short: short,
		Args:  headlessArgs(1, 1, "a task id"),
		RunE: withSession(&f, oneShotGrace, nil, func(cmd *cobra.Command, own []string, s *session.Session, sp connect.Spec) error {
			return taskAction(cmd, s, action, own[0], sp.URL, asJSON)
		}),
	}
	f.add(cmd.Flags())
	f.otlp.add(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for programs")
	return cmd
}

// taskAction runs one action. In the 2026 era (tasks extension) there is no
// tasks/result: result follows the task with tasks/get to its end,
// answering what it asks on the way; update answers an input_required
// task's requests.
func taskAction(cmd *cobra.Command, s *session.Session, action, id, url string, asJSON bool) error {
	ctx, stdout, stderr := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	switch action {
	case "get", "cancel":
		res, err := s.CallWith("tasks/"+action, map[string]any{"taskId": id}, session.CallOptions{Timeout: -1}).Await(ctx)
		if err != nil {
			return err
		}
		render.Indented(stdout, res)
		return nil
	case "result":
		// taskfollow.Follow: tasks/result (2025-11-25) or tasks/get to the end
		// (2026-07-28), and a task that failed or was cancelled says so.
		res, err := taskfollow.Follow(ctx, s, id, func(t protocol.Task) { printTaskStatus(stderr, t) })
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return withTaskHint(err, s, id, url)
		}
		printResult(stdout, asJSON, res, render.Contents, nil)
		return nil
	}
	// update
	if s.Era() != protocol.EraModern {
		return usagef(cmd.CommandPath(), "task update is the 2026-07-28 tasks extension's tasks/update; %s speaks the %s era, where input arrives as server requests",
			termsafe.Line(s.Info().Target), s.Era())
	}
	if _, err := s.Call("tasks/get", map[string]any{"taskId": id}).Await(ctx); err != nil {
		return err
	}
	t, _ := s.Task(id)
	if t.Status != "input_required" {
		return &taskStateError{id: id, status: t.Status}
	}
	n, err := s.AnswerTask(ctx, id)
	if n > 0 {
		fmt.Fprintf(stderr, "sent %d answer(s) to task %s (tasks/update)\n", n, termsafe.Line(id))
	}
	if err != nil {
		return withTaskHint(err, s, id, url)
	}
	return nil
}

// taskStateError is an update for a task that asks for nothing: the
// server's state, so exit 1.
type taskStateError struct{ id, status string }

func (e *taskStateError) Error() string {
	return fmt.Sprintf("task %s is %s, not input_required: it asks for nothing", e.id, e.status)
}

func (e *taskStateError) Is(target error) bool { return target == errServerState }

// errServerState marks errors that report the server's state (exit 1).
var errServerState = errors.New("the server's state")

// taskOpenError is an error about a task that is still open on the server,
// with the command that picks it up again.
type taskOpenError struct {
	err  error
	hint string
}

func (e *taskOpenError) Error() string { return e.err.Error() }
func (e *taskOpenError) Unwrap() error { return e.err }

// withTaskHint wraps err with how to come back to task id when it is still
// open on the server after this command gave up on it (for example, it asked
// for input no --answer covered).
func withTaskHint(err error, s *session.Session, id, url string) error {
	t, ok := s.Task(id)
	if !ok || t.Terminal() || errors.Is(err, taskfollow.ErrExpired) {
		return err // nothing left to pick up
	}
	var answers []string
	if t.Status == "input_required" {
		keys := make([]string, 0, len(t.InputRequests))
		for k := range t.InputRequests {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			answers = append(answers, "--answer", k+"=<json>")
		}
	}
	// The server's id and keys go into the line as words of argv, quoted.
	var argv []string
	store := s.StateStore()
	if store == nil {
		store = statestore.Default()
	}
	if _, gerr := store.Get(protocol.TaskHandle(id)); gerr == nil {
		argv = append(append(statestore.RejoinArgs(store), protocol.TaskHandle(id)), answers...)
	} else if url != "" && !shell.IsFlag(id) {
		argv = append(append([]string{"mcpscope", "task", "result", id}, answers...), transport.RedactURL(url))
	} else if errors.Is(err, session.ErrTimeout) {
		// A stdio server ends with this command, and its tasks with it.
		return &taskOpenError{err: err, hint: fmt.Sprintf("task %s was still %s; it ends with the stdio server when this command exits",
			shell.Quote(id), termsafe.Line(t.Status))}
	} else {
		return err
	}
	return &taskOpenError{err: err, hint: fmt.Sprintf("task %s is still %s on the server; pick it up again with: %s",
		shell.Quote(id), termsafe.Line(t.Status), shell.Join(argv))}
}

// listKnownTasks answers `mcpscope tasks` in the 2026 era, where the tasks
// extension removed tasks/list (a server cannot scope it without sessions):
// the tasks this machine created on the target and still keeps a rejoin
// record of.
func listKnownTasks(cmd *cobra.Command, s *session.Session, url string, asJSON bool) error {
	out := cmd.OutOrStdout()
	store := s.StateStore()
	if store == nil {
		store = statestore.Default()
	}
	list, err := store.List()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	target := transport.RedactURL(url) // as records keep it
	if target == "" {
		target = s.Info().Target
	}
	var mine []statestore.Detached
	for _, d := range list {
		if d.TaskID != "" && url != "" && d.Target == target {
			mine = append(mine, d)
		}
	}
	if asJSON {
		tasks := make([]map[string]any, 0, len(mine))
		for _, d := range mine {
			tasks = append(tasks, map[string]any{"taskId": d.TaskID, "handle": d.Handle, "tool": d.Name, "started": d.Started})
		}
		return render.Line(out, map[string]any{"tasks": tasks, "source": "local rejoin records (2026-07-28 has no tasks/list)"})
	}
	fmt.Fprintf(out, "# %s speaks 2026-07-28, whose tasks extension has no tasks/list; these are the tasks mcpscope started there and remembers\n",
		termsafe.Line(target))
	if len(mine) == 0 {
		fmt.Fprintln(out, "(no tasks)")
		return nil
	}
	for _, d := range mine {
		how := shell.Join([]string{"mcpscope", "rejoin", d.Handle})
		if !shell.IsFlag(d.TaskID) {
			how = shell.Join([]string{"mcpscope", "task", "get", d.TaskID}) + " …, or " + how
		}
		fmt.Fprintf(out, "%-40s %-24s started %s  (%s)\n", termsafe.Line(d.TaskID),
			termsafe.Line(d.Name), d.Started.Local().Format(time.DateTime), how)
	}
	return nil
}
