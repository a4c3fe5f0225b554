package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"mcpscope/internal/termsafe"
	"mcpscope/session"
)

// taskAction runs `mcpscope task get|result|cancel|update ID`. In the 2026
// era (tasks extension) there is no tasks/result: result follows the task
// with tasks/get to its end, answering what it asks on the way; update
// answers an input_required task's requests from --answer/--answers.
func taskAction(ctx context.Context, s *session.Session, o *options, stdout, stderr io.Writer) error {
	action, id := o.args[0], o.args[1]
	modern := s.Era() == session.EraModern
	switch action {
	case "get", "cancel":
		res, err := wait(ctx, s.CallWith("tasks/"+action, map[string]any{"taskId": id}, session.CallOptions{Timeout: -1}))
		if err != nil {
			return err
		}
		return printResult(stdout, true, res, printContents)
	case "result":
		if !modern {
			res, err := wait(ctx, s.CallWith("tasks/result", map[string]any{"taskId": id}, session.CallOptions{Timeout: -1}))
			if err != nil {
				return err
			}
			return printResult(stdout, o.jsonOut, res, printContents)
		}
		res, err := s.FollowTask(ctx, id, func(t session.Task) { printTaskStatus(stderr, t) })
		if ctx.Err() != nil {
			return errInterrupted
		}
		if err != nil {
			return fmt.Errorf("%w%s", err, openTaskHint(s, id, o.url))
		}
		return printResult(stdout, o.jsonOut, res, printContents)
	case "update":
		if !modern {
			return usagef("task update is the 2026-07-28 tasks extension's tasks/update; %s speaks the %s era, where input arrives as server requests",
				s.Info().Target, s.Era())
		}
		if _, err := wait(ctx, s.Call("tasks/get", map[string]any{"taskId": id})); err != nil {
			return err
		}
		t, _ := s.Task(id)
		if t.Status != "input_required" {
			return &toolError{fmt.Sprintf("task %s is %s, not input_required: it asks for nothing", termsafe.Line(id), termsafe.Line(t.Status))}
		}
		n, err := s.AnswerTask(ctx, id)
		if n > 0 {
			fmt.Fprintf(stderr, "sent %d answer(s) to task %s (tasks/update)\n", n, termsafe.Line(id))
		}
		if err != nil {
			return fmt.Errorf("%w%s", err, openTaskHint(s, id, o.url))
		}
		return nil
	}
	return usagef("task actions are get, result, cancel and update, got %q", action)
}

func printTaskStatus(w io.Writer, t session.Task) {
	fmt.Fprintf(w, "task %s: %s %s\n", termsafe.Line(t.TaskID), termsafe.Line(t.Status), termsafe.Line(t.StatusMessage))
}

// openTaskHint says how to come back to a task that is still open on the
// server after this command gave up on it (for example, it asked for input
// that no --answer covered).
func openTaskHint(s *session.Session, id, url string) string {
	t, ok := s.Task(id)
	if !ok || t.Terminal() {
		return ""
	}
	answers := ""
	if t.Status == "input_required" {
		keys := make([]string, 0, len(t.InputRequests))
		for k := range t.InputRequests {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			answers += fmt.Sprintf(" --answer '%s=<json>'", termsafe.Line(k))
		}
	}
	how := ""
	if _, err := session.DefaultStateStore().Get(session.TaskHandle(id)); err == nil {
		how = "mcpscope rejoin " + session.TaskHandle(id) + answers
	} else if url != "" {
		how = fmt.Sprintf("mcpscope task result %s%s %s", termsafe.Line(id), answers, termsafe.Line(url))
	} else {
		return "" // a stdio server ends with this command, and its tasks with it
	}
	return fmt.Sprintf("\n  task %s is still %s on the server; pick it up again with: %s", termsafe.Line(id), termsafe.Line(t.Status), how)
}

// listKnownTasks answers `mcpscope tasks` in the 2026 era, where the tasks
// extension removed tasks/list (a server cannot scope it without sessions):
// the tasks this machine created on the target and still keeps a rejoin
// record of.
func listKnownTasks(s *session.Session, o *options, stdout io.Writer) error {
	list, err := session.DefaultStateStore().List()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	target := o.url
	if target == "" {
		target = s.Info().Target
	}
	var mine []session.Detached
	for _, d := range list {
		if d.TaskID != "" && d.Target == o.url {
			mine = append(mine, d)
		}
	}
	if o.jsonOut {
		out := make([]map[string]any, 0, len(mine))
		for _, d := range mine {
			out = append(out, map[string]any{"taskId": d.TaskID, "handle": d.Handle, "tool": d.Name, "started": d.Started})
		}
		b, _ := json.Marshal(map[string]any{"tasks": out, "source": "local rejoin records (2026-07-28 has no tasks/list)"})
		fmt.Fprintf(stdout, "%s\n", b)
		return nil
	}
	fmt.Fprintf(stdout, "# %s speaks 2026-07-28, whose tasks extension has no tasks/list; these are the tasks mcpscope started there and remembers\n",
		termsafe.Line(target))
	if len(mine) == 0 {
		fmt.Fprintln(stdout, "(no tasks)")
		return nil
	}
	for _, d := range mine {
		fmt.Fprintf(stdout, "%-40s %-24s started %s  (mcpscope task get %s …, or mcpscope rejoin %s)\n", termsafe.Line(d.TaskID),
			termsafe.Line(d.Name), d.Started.Local().Format(time.DateTime), termsafe.Line(d.TaskID), d.Handle)
	}
	return nil
}
