package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"mcpscope/connect"
	"mcpscope/framestore"
	"mcpscope/internal/render"
	"mcpscope/internal/termsafe"
	"mcpscope/protocol"
	"mcpscope/statestore"
	"mcpscope/taskfollow"
	"mcpscope/transport"
)

func newRejoinCmd() *cobra.Command {
	var (
		h      httpFlags
		sf     sessionFlags
		otlp   otlpFlag
		forget bool
		asJSON bool
		target string
	)
	cmd := &cobra.Command{
		Use:     "rejoin [HANDLE]",
		Short:   "List calls left running (detached, or their mcpscope died), or rejoin one",
		GroupID: groupSessions,
		Long: `Without a handle, rejoin lists the calls mcpscope left running on HTTP servers: detached with d in the inspector, left when it quit, or left by a process that died. With a handle it picks the call up again: the progress it missed, then the result. Secrets are never stored: pass again the --bearer or -H the call was made with (or set the environment variable), and the --url if the call's URL had credentials in it.

A record is read as untrusted input: anyone who can write to a shared store can plant one. rejoin prints the call's target before it connects, never runs a program for a record, reads no environment variable a record names except the ones mcpscope records itself (` + connect.EnvBearer + `), and sends credentials (--bearer, -H, an OAuth login) only to an origin you named: a record sealed with your state key, or the one --url gives. Records are sealed with an HMAC key from $` + statestore.EnvStateKey + `, else the file $XDG_CONFIG_HOME/mcpscope/state.key (made, 0600, on first use); copy that file to each machine that rejoins your calls with credentials. Other records are listed as foreign.`,
		Example: "  mcpscope rejoin\n  mcpscope rejoin 7c1d… --bearer $TOKEN\n  mcpscope rejoin --forget 7c1d…",
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var sp connect.Spec
			sf.state.warn = io.Discard // completing, nobody reads it
			if sf.fill(&sp, cmd.CommandPath()) != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			list, _ := sp.StateStore.List()
			out := make([]string, 0, len(list))
			for _, d := range list {
				out = append(out, completion(d.Handle, d.Method+" "+d.Name+" on "+d.Target))
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef(cmd.CommandPath(), "rejoin takes one handle, got %d arguments", len(args))
			}
			if forget && len(args) == 0 {
				return usagef(cmd.CommandPath(), "--forget needs the handle of the record to drop")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var sp connect.Spec
			sf.state.warn = cmd.ErrOrStderr()
			if err := sf.fill(&sp, cmd.CommandPath()); err != nil {
				return err
			}
			store := sp.StateStore
			if len(args) == 0 {
				return listDetached(cmd, store, asJSON)
			}
			if forget {
				if st := statestore.CallState(store, statestore.Detached{Handle: args[0]}); st.Holder != nil {
					return fmt.Errorf("call %s is %s: not forgotten", args[0], leaseText(st))
				}
				return store.Delete(args[0])
			}
			if err := h.fill(&sp, cmd.CommandPath()); err != nil {
				return err
			}
			if target != "" {
				if err := checkURL(target); err != nil {
					return usagef(cmd.CommandPath(), "--url: %v", err)
				}
				sp.URL = target
			}
			sp.Notes = cmd.ErrOrStderr()
			sp.Auth.Interactive = isTerminal(cmd.ErrOrStderr())
			live, err := otlp.start(cmd, &sp)
			if err != nil {
				return err
			}
			defer live.finish() // after the rejoined session closed: its last spans
			return rejoin(cmd, sp, store, args[0], asJSON)
		},
	}
	fs := cmd.Flags()
	h.add(fs)
	sf.add(fs)
	fs.StringVar(&target, "url", "", "the full URL the call was made on, when it had credentials in it (they are never stored)")
	fs.BoolVar(&forget, "forget", false, "drop the record of a detached call instead of rejoining it")
	fs.BoolVar(&asJSON, "json", false, "print JSON for programs")
	otlp.add(fs)
	return cmd
}

// listedCall is one line of mcpscope rejoin --json: the record, how its
// call is held, whether it is foreign (not sealed with this user's state
// key: someone else may have written it), and whether it is a local copy
// (kept in the store's fallback folder, on this machine only, while Redis
// could not be reached).
type listedCall struct {
	statestore.Detached
	Lease       statestore.LeaseState `json:"lease"`
	Foreign     bool                  `json:"foreign"`
	Local       bool                  `json:"local,omitempty"`
	LocalFolder string                `json:"localFolder,omitempty"`
}

// trustText says how far a record is trusted, for the line rejoin prints
// before it connects.
func trustText(t connect.RecordTrust) string {
	switch {
	case t.Sealed:
		return "record sealed with your state key"
	case t.Named:
		return "foreign record: not sealed with your state key; --url names its origin"
	}
	return "foreign record: not sealed with your state key; no credential goes there unless --url names it"
}

func listDetached(cmd *cobra.Command, store statestore.Store, asJSON bool) error {
	out := cmd.OutOrStdout()
	list, err := store.List()
	if err != nil && len(list) == 0 {
		return err // it names the store
	}
	if err != nil {
		// Redis unreachable: the local copies this machine kept are all
		// that can be listed; said first, and the exit is still an error.
		fmt.Fprintf(cmd.ErrOrStderr(), "mcpscope: %s cannot be reached: listed below are only the %d call(s) this machine kept a local copy of\n",
			termsafe.Line(store.String()), len(list))
	}
	if lerr := listCalls(out, store, list, asJSON); lerr != nil {
		return lerr
	}
	return err
}

// listCalls prints the records in list, a line each (or JSON).
func listCalls(out io.Writer, store statestore.Store, list []statestore.Detached, asJSON bool) error {
	if asJSON {
		rows := make([]listedCall, 0, len(list))
		for _, d := range list {
			rows = append(rows, listedCall{d, statestore.CallState(store, d), !statestore.RecordSealed(d), d.Fallback != "", d.Fallback})
		}
		return render.Line(out, rows)
	}
	if len(list) == 0 {
		fmt.Fprintf(out, "(no detached calls in %s)\n", termsafe.Line(store.String()))
		return nil
	}
	// Columns as wide as their widest cell, so a short lease state ("free")
	// leaves no run of blanks.
	leases := make([]string, len(list))
	wHandle, wLease := 0, 0
	for i, d := range list {
		leases[i] = termsafe.Cut(leaseText(statestore.CallState(store, d)), 120)
		wHandle = max(wHandle, ansi.StringWidth(termsafe.Cut(d.Handle, 80)))
		wLease = max(wLease, ansi.StringWidth(leases[i]))
	}
	now := time.Now()
	for i, d := range list {
		prog := ""
		if d.Progress.Updates > 0 {
			prog = fmt.Sprintf(" %g/%g", d.Progress.Value, d.Progress.Total)
		}
		notes := ""
		if !statestore.RecordSealed(d) {
			notes = "  foreign"
		}
		if d.Fallback != "" {
			notes += "  " + statestore.FallbackLabel
		}
		fmt.Fprintf(out, "%s  %s  %s %s%s  session %s  %s  age %s%s\n", pad(termsafe.Cut(d.Handle, 80), wHandle),
			pad(leases[i], wLease), termsafe.Cut(d.Method, 60), termsafe.Cut(d.Name, 80), prog,
			termsafe.Cut(d.SessionID, 80), termsafe.Cut(transport.RedactTarget(d.Target), 200), now.Sub(d.Started).Round(time.Second), notes)
	}
	return nil
}

// leaseText says who holds a call: "held by pid 12 on host until 15:04:05",
// "free", "expired (pid 12 on host stopped)".
func leaseText(st statestore.LeaseState) string {
	switch {
	case st.Holder != nil:
		return fmt.Sprintf("held by %s until %s", st.Holder.Owner, st.Holder.Expires.Local().Format("15:04:05"))
	case st.Owner != nil:
		return fmt.Sprintf("expired (%s stopped)", st.Owner)
	}
	return st.State
}

// rejoin picks up one detached call (or task) and prints what it missed,
// then its result.
func rejoin(cmd *cobra.Command, sp connect.Spec, store statestore.Store, handle string, asJSON bool) error {
	ctx, stdout, stderr := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	// The call's lease first, then its record: a racing rejoiner learns
	// who holds it before either touches the server, and one that wins the
	// lease after the winner finished finds the record gone (the winner
	// deletes it before it lets the lease go) instead of rejoining, and
	// writing back, a call that is over.
	claim, err := statestore.ClaimCall(store, handle)
	if err != nil {
		return fmt.Errorf("rejoin %s: %w", handle, err)
	}
	defer claim.Release()
	d, err := store.Get(handle)
	if errors.Is(err, statestore.ErrNoSuchCall) {
		return &callGoneError{handle: handle, store: store.String()}
	}
	if err != nil {
		return err
	}
	if d.Handle != handle { // a record planted under another's key
		return &connect.SpecError{Msg: fmt.Sprintf("the record kept as call %s says it is call %s: refused (records are read as untrusted input)",
			handle, termsafe.Cut(d.Handle, 80))}
	}
	// Where the call goes, before anything goes there; a record someone
	// else may have written gets no credential unless --url names it.
	local := d.Fallback
	d, trust, err := connect.CheckRecord(sp, d)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "rejoin: call %s on %s (%s)\n", termsafe.Cut(handle, 80), termsafe.Cut(trust.Target, 200), trustText(trust))
	if local != "" {
		fmt.Fprintf(stderr, "rejoin: its record is the %s, kept in %s on this machine\n", statestore.FallbackLabel, termsafe.Line(local))
	}
	s, err := connect.Rejoin(sp, d, store)
	if err != nil {
		return err
	}
	defer s.Close()
	if d.TaskID != "" && len(d.LastEventIDs) == 0 {
		s.RejoinTask(d)
		where := "stateless"
		if d.SessionID != "" {
			where = "session " + d.SessionID
		}
		fmt.Fprintf(stderr, "rejoining task %s (%s %s, %s)\n", termsafe.Cut(d.TaskID, 80), termsafe.Cut(d.Method, 60),
			termsafe.Cut(d.Name, 80), termsafe.Cut(where, 100))
		// A holder that loses the lease stops following at once: the task
		// goes on under its new holder, who shows its outcome.
		fctx, stop := context.WithCancel(ctx)
		defer stop()
		go func() {
			select {
			case <-claim.Lost():
				stop()
			case <-fctx.Done():
			}
		}()
		res, err := taskfollow.Follow(fctx, s, d.TaskID, func(t protocol.Task) { printTaskStatus(stderr, t) })
		if lost := claim.LostErr(); lost != nil {
			return fmt.Errorf("rejoin %s: %w", handle, lost)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return withTaskHint(fmt.Errorf("rejoin task %s: %w", d.TaskID, err), s, d.TaskID, d.Target)
		}
		// The result counts once the record is gone under this lease, so
		// only the one holder shows it.
		if err := claim.Write(func(l statestore.Lease) error { return store.DeleteFenced(handle, l) }); err != nil {
			return fmt.Errorf("rejoin %s: %w", handle, err)
		}
		printResult(stdout, asJSON, res, render.Contents, nil)
		return nil
	}
	c, err := s.Rejoin(ctx, d)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "rejoining %s %s (session %s, progress so far %g/%g)\n", termsafe.Cut(d.Method, 60), termsafe.Cut(d.Name, 80),
		termsafe.Cut(d.SessionID, 80), d.Progress.Value, d.Progress.Total)
	// Print every progress notification that arrives, the replayed ones
	// the old process missed included.
	var seq uint64
	show := func() {
		follow(s.Store(), &seq, func(e framestore.Entry) bool {
			return e.CallKey == c.Key && e.Method == "notifications/progress" && e.Note == ""
		}, func(it *framestore.Item) {
			if it.Env == nil {
				return
			}
			var p struct {
				Progress float64 `json:"progress"`
				Total    float64 `json:"total"`
				Message  string  `json:"message"`
			}
			if json.Unmarshal(it.Env.Params, &p) == nil {
				fmt.Fprintf(stderr, "progress %g/%g %s\n", p.Progress, p.Total, termsafe.Line(p.Message))
			}
		})
	}
	for done := false; !done; {
		select {
		case <-c.Done():
			done = true
		case <-s.Store().Changed():
		case <-ctx.Done():
			// Interrupted: the call goes on on the server, and its record
			// stays for the next rejoin.
			_, _ = s.Detach(c)
			return ctx.Err()
		}
		show()
	}
	s.Settle() // a step marked as the lease was lost is this holder's: shown
	show()
	if why := s.StepInDoubt(c); why != "" {
		fmt.Fprintf(stderr, "rejoin: %s\n", why)
	}
	sn := c.Snapshot()
	if err := sn.Err(); err != nil {
		return fmt.Errorf("rejoin %s: %w", handle, err)
	}
	// Its record went, fenced, before the result counted (a holder that
	// lost the call neither shows the result nor deletes the record).
	printResult(stdout, asJSON, sn.Result, render.Contents, nil)
	return nil
}

// pad fills s with blanks to w cells.
func pad(s string, w int) string {
	return s + strings.Repeat(" ", max(0, w-ansi.StringWidth(s)))
}

// callGoneError is a rejoin whose record is gone once its lease is held:
// the call finished (rejoined elsewhere) or its record was forgotten.
// Exit 1, like a server's no: nothing is left to pick up.
type callGoneError struct{ handle, store string }

func (e *callGoneError) Error() string {
	return fmt.Sprintf("call %s already finished or was forgotten: %s has no record of it (see: mcpscope rejoin)", e.handle, e.store)
}

func (e *callGoneError) Is(target error) bool { return target == errServerState }
