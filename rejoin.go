package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"mcpscope/internal/termsafe"
	"mcpscope/session"
	"mcpscope/transport"
)

// rejoinInfo says how to reach an HTTP target again, with secrets named by
// where they came from rather than stored.
func rejoinInfo(o *options) session.RejoinInfo {
	ri := session.RejoinInfo{Target: o.url, Headers: map[string]string{}, SecretRefs: map[string]string{}}
	for _, h := range o.headers {
		name, val, _ := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if transport.IsSecretName(name) {
			ri.SecretRefs[name] = "flag:-H " + name
			continue
		}
		ri.Headers[name] = strings.TrimSpace(val)
	}
	switch {
	case o.bearer != "" && o.bearerFromEnv:
		ri.SecretRefs["Authorization"] = "env:MCPSCOPE_BEARER"
	case o.bearer != "":
		ri.SecretRefs["Authorization"] = "flag:--bearer"
	}
	return ri
}

// runRejoin lists detached calls, or rejoins one: `mcpscope rejoin [HANDLE]`.
func runRejoin(ctx context.Context, o *options, stdout, stderr io.Writer) error {
	store := session.DefaultStateStore()
	if len(o.args) == 0 {
		list, err := store.List()
		if err != nil {
			return err
		}
		if o.jsonOut {
			return writeJSON(stdout, list)
		}
		if len(list) == 0 {
			fmt.Fprintln(stdout, "(no detached calls)")
			return nil
		}
		for _, d := range list {
			state := "rejoinable"
			if d.Alive() {
				state = fmt.Sprintf("attached to pid %d", d.OwnerPID)
			}
			prog := ""
			if d.Progress.Updates > 0 {
				prog = fmt.Sprintf(" %g/%g", d.Progress.Value, d.Progress.Total)
			}
			fmt.Fprintf(stdout, "%-36s %-12s %s %s%s  session %s  %s  started %s\n", d.Handle, state,
				termsafe.Line(d.Method), termsafe.Line(d.Name), prog, termsafe.Line(d.SessionID), termsafe.Line(d.Target),
				d.Started.Local().Format(time.DateTime))
		}
		return nil
	}
	handle := o.args[0]
	if o.forget {
		return store.Delete(handle)
	}
	d, err := store.Get(handle)
	if err != nil {
		return err
	}
	release, err := store.Claim(handle)
	if err != nil {
		return err
	}
	defer release()
	hdr := map[string]string{}
	for k, v := range d.Headers {
		hdr[k] = v
	}
	bearer := ""
	for name, ref := range d.SecretRefs {
		switch {
		case strings.HasPrefix(ref, "env:"):
			v := os.Getenv(strings.TrimPrefix(ref, "env:"))
			if v == "" {
				return usagef("the call was made with %s from $%s; set it again to rejoin", name, strings.TrimPrefix(ref, "env:"))
			}
			if strings.EqualFold(name, "Authorization") {
				bearer = v
			} else {
				hdr[name] = v
			}
		case ref == "flag:--bearer":
			if o.bearer == "" {
				return usagef("the call was made with --bearer; pass it again to rejoin")
			}
			bearer = o.bearer
		default: // flag:-H Name
			found := false
			for _, h := range o.headers {
				if n, v, _ := strings.Cut(h, ":"); strings.EqualFold(strings.TrimSpace(n), name) {
					hdr[name], found = strings.TrimSpace(v), true
				}
			}
			if !found {
				return usagef("the call was made with -H %q: pass it again to rejoin", name+": …")
			}
		}
	}
	ro := *o // OAuth as for a new session, unless a bearer or Authorization header came back
	ro.url, ro.bearer, ro.headers = d.Target, bearer, nil
	for k, v := range hdr {
		ro.headers = append(ro.headers, k+": "+v)
	}
	flow, client := oauthFor(&ro, nil)
	t := transport.NewHTTP(transport.HTTPOptions{URL: d.Target, Headers: hdr, Bearer: bearer, Client: client})
	noteTo(flow, t)
	var j *session.Journal
	if !o.noJournal {
		path := o.journal
		if path == "" {
			path = session.NewJournalPath(session.DefaultJournalDir(), time.Now())
		}
		if j, err = session.CreateJournal(path, t.Describe()+" (rejoin "+handle+")"); err != nil {
			return err
		}
	}
	resp, err := newAnswersResponder(o) // a rejoined task may ask for input
	if err != nil {
		return err
	}
	s := session.New(t, session.Options{Responder: resp, Journal: j, Timeout: o.timeout, MaxTimeout: o.maxTimeout, StateStore: store,
		Rejoin: session.RejoinInfo{Target: d.Target, Headers: d.Headers, SecretRefs: d.SecretRefs}})
	if err := s.Start(); err != nil {
		return err
	}
	defer s.Close()
	if d.TaskID != "" && len(d.LastEventIDs) == 0 {
		s.RejoinTask(d)
		where := "stateless"
		if d.SessionID != "" {
			where = "session " + d.SessionID
		}
		fmt.Fprintf(stderr, "rejoining task %s (%s %s, %s)\n", termsafe.Line(d.TaskID), termsafe.Line(d.Method),
			termsafe.Line(d.Name), termsafe.Line(where))
		res, err := s.FollowTask(ctx, d.TaskID, func(t session.Task) { printTaskStatus(stderr, t) })
		if ctx.Err() != nil {
			return errInterrupted
		}
		if err != nil {
			return fmt.Errorf("rejoin task %s: %w%s", d.TaskID, err, openTaskHint(s, d.TaskID, d.Target))
		}
		return printResult(stdout, o.jsonOut, res, printContents)
	}
	c, err := s.Rejoin(ctx, d)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "rejoining %s %s (session %s, progress so far %g/%g)\n", termsafe.Line(d.Method), termsafe.Line(d.Name),
		termsafe.Line(d.SessionID), d.Progress.Value, d.Progress.Total)
	// Print every progress notification that arrives, the replayed ones
	// the old process missed included.
	var seq uint64
	show := func() {
		for _, it := range s.Store().Since(seq, 0) {
			seq = it.Seq
			if it.CallKey != c.Key || it.Env == nil || it.Env.Method != "notifications/progress" || it.Note != "" {
				continue
			}
			var p struct {
				Progress float64 `json:"progress"`
				Total    float64 `json:"total"`
				Message  string  `json:"message"`
			}
			if json.Unmarshal(it.Env.Params, &p) == nil {
				fmt.Fprintf(stderr, "progress %g/%g %s\n", p.Progress, p.Total, termsafe.Line(p.Message))
			}
		}
	}
	for done := false; !done; {
		select {
		case <-c.Done():
			done = true
		case <-s.Store().Changed():
		case <-ctx.Done():
			return errInterrupted
		}
		show()
	}
	show()
	sn := c.Snapshot()
	if err := sn.Err(); err != nil {
		return fmt.Errorf("rejoin %s: %w", handle, err)
	}
	_ = store.Delete(handle)
	return printResult(stdout, o.jsonOut, sn.Result, printContents)
}
