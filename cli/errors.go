package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"mcpscope/connect"
	"mcpscope/internal/render"
	"mcpscope/internal/shell"
	"mcpscope/internal/termsafe"
	"mcpscope/journal"
	"mcpscope/oauth"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/taskfollow"
	"mcpscope/transport"
)

// Exit codes, chosen by the type of error (also in the help text).
const (
	exitOK        = 0
	exitServerErr = 1 // the server answered with an error, a tool said isError, input nobody gave
	exitUsage     = 2
	exitTransport = 3 // could not connect, or the transport failed
	exitTimeout   = 4
	exitHeld      = 5 // another mcpscope holds the call: a rejoin race lost, or the lease lost while paused or cut off
	exitInterrupt = 130
)

// usageError is a command line that cannot work: exit 2, with the command's
// help named.
type usageError struct {
	cmd string // "mcpscope call"; "" = the root
	msg string
}

func (e *usageError) Error() string { return e.msg }

func usagef(cmd string, format string, a ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, a...)}
}

func exitCode(err error) int {
	var (
		ue   *usageError
		se   *connect.SpecError
		rpc  *journal.RPCError
		tool *session.ToolError
		un   *session.Unanswered
		ms   *connect.MissingSecretError
		es   *exitStatus
		held *statestore.HeldError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &es):
		return es.code
	case errors.As(err, &ue), errors.As(err, &se), errors.As(err, &ms):
		return exitUsage
	case errors.Is(err, context.Canceled):
		return exitInterrupt
	case errors.As(err, &tool), errors.As(err, &rpc), errors.As(err, &un), errors.Is(err, errServerState),
		errors.Is(err, session.ErrTaskEnded), errors.Is(err, session.ErrInvalidResult), errors.Is(err, session.ErrRoundLimit):
		return exitServerErr
	case errors.As(err, &held), errors.Is(err, statestore.ErrLeaseLost), errors.Is(err, statestore.ErrStoreLost):
		return exitHeld
	case errors.Is(err, session.ErrTimeout):
		return exitTimeout
	}
	return exitTransport
}

// printError writes err for a person, sanitised (server words travel in
// error messages), with what to do next.
func printError(w io.Writer, err error) {
	var es *exitStatus
	if errors.As(err, &es) {
		return // mcpscope proxy passes the server's exit code on, quietly
	}
	msg := err.Error()
	if errors.Is(err, context.Canceled) {
		msg = "interrupted"
	}
	fmt.Fprintf(w, "mcpscope: %s\n", termsafe.Text(msg))
	if h := hint(err); h != "" {
		fmt.Fprintf(w, "  %s\n", termsafe.Line(h)) // its command lines are quoted (shell.Quote), which Line leaves as they are
	}
}

// hint says what to do next about err, in terms of the command line (the
// engine's messages never name flags). What a server, a record or a file
// said goes into it as quoted shell words.
func hint(err error) string {
	var (
		ue  *usageError
		he  *transport.HTTPError
		un  *session.Unanswered
		na  *needsAnswer
		je  *journal.FileError
		ee  *connect.EraError
		tsk *taskOpenError
		re  *transport.RedirectError
		ms  *connect.MissingSecretError
		oe  *oauth.Error
	)
	switch {
	case errors.As(err, &ue):
		return "for usage, run: " + shell.Join(append(strings.Fields(ue.cmdOr("mcpscope")), "--help"))
	case errors.As(err, &tsk):
		// A task given up on goes on on the server: how to come back to it
		// first, then what the error alone would say (a limit to raise).
		if h := hint(tsk.err); h != "" {
			return tsk.hint + "\n  or " + h
		}
		return tsk.hint
	case errors.Is(err, taskfollow.ErrExpired):
		return "the server keeps a task only for its ttl (ask for a longer one with --ttl D, 2025-11-25)"
	case errors.Is(err, session.ErrIdleTimeout):
		return "raise the idle limit with --timeout D (progress resets it; 0 = none)"
	case errors.Is(err, session.ErrMaxTimeout):
		return "raise the hard limit with --max-timeout D (0 = none)"
	case errors.Is(err, session.ErrTimeout):
		return "raise the limit with --timeout D"
	case errors.As(err, &un):
		return "answer it with " + shell.Join([]string{"--answer", un.Key + "=<json>"}) + " (or --answers FILE)"
	case errors.As(err, &na):
		return "the server needs an answer to " + na.method + ", which headless mcpscope gives only from --answer: " +
			shell.Join([]string{"--answer", na.method + "=" + answerExamples[na.method]}) + " (or --answers FILE)"
	case errors.As(err, &je):
		return "choose another place with --journal PATH, or run with --no-journal"
	case errors.As(err, &ee):
		return "the server speaks the initialize era: run without --era modern (or with --era legacy)"
	case errors.As(err, &re):
		return "if you trust " + termsafe.Line(re.Origin) + ", follow the redirect with " + shell.Join([]string{"--allow-redirect", re.Origin})
	case errors.As(err, &he) && he.Status == 401:
		return "give credentials with --bearer TOKEN or -H 'Authorization: …', or let mcpscope log in (not with --no-oauth)"
	case errors.As(err, &ms):
		return missingSecretHint(ms)
	case errors.As(err, &oe):
		return "OAuth: --client-id/--client-secret name a registered client, --scope adds scopes, --bearer TOKEN skips the login, --no-oauth turns it off"
	}
	return ""
}

// missingSecretHint says how to give again a secret a rejoin record names.
func missingSecretHint(e *connect.MissingSecretError) string {
	switch ref := e.Ref; {
	case strings.HasPrefix(ref, "env:"):
		name := strings.TrimPrefix(ref, "env:") // from a rejoin record
		if name == "" || strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != "" {
			return "set the environment variable " + shell.Quote(name) + " again"
		}
		return "set $" + name + " again"
	case ref == "flag:--bearer":
		return "pass --bearer TOKEN again"
	case ref == connect.URLSecretRef:
		return "pass the full URL, credentials included, again with --url URL"
	}
	return "pass " + shell.Join([]string{"-H", e.Name + ": …"}) + " again"
}

func (e *usageError) cmdOr(def string) string {
	if e.cmd != "" {
		return e.cmd
	}
	return def
}

// shown is an outcome the command already wrote to stdout (a tool's isError
// result, a diff's drift, a replay's differences): it only sets the exit
// code, so --json output stays one JSON document.
type shown struct{ error }

func (e shown) Unwrap() error { return e.error }

// printJSONError writes err for a program: {"error":{"code":…,"message":…}}
// on one line, with the server's JSON-RPC code and data when it answered
// with an error, else the exit code; kind names the exit code's class.
func printJSONError(w io.Writer, err error) {
	code := exitCode(err)
	e := map[string]any{"code": code, "message": err.Error(), "exit": code, "kind": exitKinds[code]}
	if errors.Is(err, context.Canceled) {
		e["message"] = "interrupted"
	}
	var rpc *journal.RPCError
	if errors.As(err, &rpc) {
		e["code"] = rpc.Code
		switch {
		case json.Valid(rpc.Data):
			e["data"] = rpc.Data
		case len(rpc.Data) > 0:
			e["data"] = string(rpc.Data)
		}
	}
	if h := hint(err); h != "" {
		e["hint"] = h
	}
	_ = render.Line(w, map[string]any{"error": e})
}

var exitKinds = map[int]string{exitServerErr: "server", exitUsage: "usage", exitTransport: "transport", exitTimeout: "timeout", exitInterrupt: "interrupted"}
