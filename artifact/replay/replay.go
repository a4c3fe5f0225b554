// Package replay sends a recorded session's requests again, in order, to a
// live server and says, call by call, what differs from the recording:
// the result (a structural diff), an error where there was none or another
// error, a tool that now reports isError, a call much slower or faster than
// recorded. Tools that declare destructiveHint are skipped unless allowed.
package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"mcpscope/artifact/diff"
	"mcpscope/artifact/scan"
	"mcpscope/journal"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/transport"
)

// Call is one recorded request and how it ended in the recording.
type Call struct {
	Seq    uint64 // the request's journal sequence number
	Key    string // its id in the recording
	Method string
	Name   string
	Params json.RawMessage // as sent, without what mcpscope adds to _meta

	result    json.RawMessage
	rpcErr    *journal.RPCError
	state     string // the recorded state word (ok, error, cancelled, lost…)
	took      time.Duration
	retry     bool  // an MRTR round after the first: the live session makes its own
	final     *Call // for an input_required round, the round that retried it
	cancelled bool
}

// Recording is what a journal asked and was answered.
type Recording struct {
	Info  scan.Info
	Calls []*Call
	// Answers are what the recorded client answered to server requests
	// (by method) and to MRTR input requests (by key): the live session
	// answers the same.
	Answers map[string]json.RawMessage
	// Notes say what the journal could not give (a torn last line).
	Notes []string
}

// Load reads the requests of a journal and their recorded outcomes. It
// keeps every recorded result in memory (each is compared later).
func Load(path string) (*Recording, error) {
	r := &Recording{Answers: map[string]json.RawMessage{}}
	byIndex := map[int]*Call{}
	serverReqs := map[string]string{} // server request id → method
	awaiting := map[string]*Call{}    // method+name → an input_required round waiting for its retry
	_, err := scan.File(path, scan.Options{}, func(fr *scan.Frame) error {
		r.Info.Observe(fr)
		e := fr.Env
		if e == nil {
			return nil
		}
		switch {
		case fr.Dir == transport.In && e.Class() == journal.ClassRequest:
			serverReqs[e.Key()] = e.Method
		case fr.Dir == transport.Out && (e.Class() == journal.ClassResult || e.Class() == journal.ClassError):
			if m, ok := serverReqs[e.Key()]; ok && e.Result != nil {
				r.Answers[m] = e.Result
			}
		case fr.Dir == transport.Out && e.Class() == journal.ClassRequest && fr.Call != nil:
			c := &Call{Seq: fr.Seq, Key: fr.Call.Key, Method: e.Method, Name: fr.Call.Name, Params: protocol.StripMeta(e.Params)}
			var p map[string]json.RawMessage
			if json.Unmarshal(e.Params, &p) == nil {
				_, a := p["inputResponses"]
				_, b := p["requestState"]
				c.retry = a || b
				var ir map[string]json.RawMessage
				if json.Unmarshal(p["inputResponses"], &ir) == nil {
					for k, v := range ir {
						r.Answers[k] = v
					}
				}
			}
			if prev := awaiting[c.Method+" "+c.Name]; c.retry && prev != nil {
				prev.final = c
				delete(awaiting, c.Method+" "+c.Name)
			}
			byIndex[fr.CallIndex] = c
			r.Calls = append(r.Calls, c)
		case fr.Dir == transport.Out && e.Method == "notifications/cancelled" && fr.Call != nil:
			if c := byIndex[fr.CallIndex]; c != nil && c.result == nil && c.rpcErr == nil {
				c.cancelled = true
				c.took = fr.Time.Sub(fr.Call.Started)
				c.state = "cancelled"
			}
		case fr.Dir == transport.In && fr.Call != nil && !fr.Late && (e.Result != nil || e.Error != nil):
			c := byIndex[fr.CallIndex]
			if c == nil || c.cancelled {
				return nil
			}
			c.result, c.rpcErr = e.Result, e.Error
			c.took = fr.Time.Sub(fr.Call.Started)
			c.state = session.StateWord(fr.Call)
			delete(byIndex, fr.CallIndex)
			if c.state == "input" {
				awaiting[c.Method+" "+c.Name] = c
			}
		}
		return nil
	})
	if err != nil && r.Info.Frames == 0 {
		return nil, err
	}
	if err != nil {
		r.Notes = append(r.Notes, err.Error())
	}
	return r, nil
}

// Options tune a replay.
type Options struct {
	// Yes replays tools that declare destructiveHint without asking.
	Yes bool
	// Ask is asked about each destructive tool when Yes is false (nil:
	// they are skipped).
	Ask func(tool string) bool
	// Tolerance is how far a call's duration may stray from the recorded
	// one before it counts as a difference; NoTiming compares no timing.
	Tolerance time.Duration
	NoTiming  bool
	// Each hears every result as soon as it is known.
	Each func(Result)
}

// Result is how one recorded call went live.
type Result struct {
	Seq    uint64 `json:"seq"`
	Method string `json:"method"`
	Name   string `json:"name,omitempty"`
	// Status is same, differs or skipped.
	Status string `json:"status"`
	// Why a call was skipped.
	Reason string `json:"reason,omitempty"`
	// Differences, when it differs.
	Differences []Difference `json:"differences,omitempty"`
	Recorded    Duration     `json:"recorded"`
	Live        Duration     `json:"live"`
	// RecordedState and LiveState are the state words (ok, error, …).
	RecordedState string `json:"recordedState,omitempty"`
	LiveState     string `json:"liveState,omitempty"`
}

// Difference is one way a call differs.
type Difference struct {
	// What is result, error, isError, state or timing.
	What   string       `json:"what"`
	Detail string       `json:"detail,omitempty"`
	Fields []diff.Field `json:"fields,omitempty"`
}

// Duration is a time.Duration that reads as "12ms" in JSON.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).Round(time.Microsecond).String())
}

// Summary counts the results.
type Summary struct {
	Results []Result `json:"results"`
	Same    int      `json:"same"`
	Differ  int      `json:"differ"`
	Skipped int      `json:"skipped"`
}

// Methods never re-sent, and why.
var skipMethods = map[string]string{
	"initialize":           "the handshake: the live session made its own",
	"server/discover":      "the handshake: the live session made its own",
	"subscriptions/listen": "a long-lived stream, not a call with an answer",
	"tasks/get":            "refers to a task of the recorded session",
	"tasks/result":         "refers to a task of the recorded session",
	"tasks/cancel":         "refers to a task of the recorded session",
	"tasks/update":         "refers to a task of the recorded session",
	"tasks/list":           "lists the tasks of the recorded session",
}

// Run re-sends rec's requests to s, one after another, in recorded order.
func Run(ctx context.Context, s *session.Session, rec *Recording, o Options) (*Summary, error) {
	sum := &Summary{Results: []Result{}}
	destructive, err := destructiveTools(ctx, s)
	if err != nil {
		return sum, err
	}
	add := func(r Result) {
		switch r.Status {
		case "same":
			sum.Same++
		case "differs":
			sum.Differ++
		default:
			sum.Skipped++
		}
		sum.Results = append(sum.Results, r)
		if o.Each != nil {
			o.Each(r)
		}
	}
	for _, c := range rec.Calls {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		r := Result{Seq: c.Seq, Method: c.Method, Name: c.Name, Recorded: Duration(c.took), RecordedState: c.state}
		if why := skipReason(c, destructive, o); why != "" {
			r.Status, r.Reason = "skipped", why
			add(r)
			continue
		}
		add(replayOne(ctx, s, c, r, o))
	}
	return sum, nil
}

func skipReason(c *Call, destructive map[string]bool, o Options) string {
	if why, ok := skipMethods[c.Method]; ok {
		return why
	}
	if c.retry {
		return "a later round of an input_required call: the live session answers its own rounds"
	}
	if c.state == "" || c.state == "pending" || c.state == "streaming" || c.state == "lost" || c.state == "detached" {
		return "the recording holds no answer to compare with"
	}
	if c.Method == "tools/call" && destructive[c.Name] && !o.Yes {
		if o.Ask != nil && o.Ask(c.Name) {
			return ""
		}
		return "the tool declares destructiveHint: --yes replays it"
	}
	return ""
}

// destructiveTools are the live server's tools that declare
// destructiveHint (and not readOnlyHint).
func destructiveTools(ctx context.Context, s *session.Session) (map[string]bool, error) {
	out := map[string]bool{}
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(s.Info().Capabilities, &caps)
	if _, ok := caps["tools"]; !ok {
		return out, nil
	}
	tools, err := s.ListAll(ctx, "tools/list", "tools")
	if err != nil {
		return nil, fmt.Errorf("listing the live server's tools (to know which are destructive): %w", err)
	}
	for _, raw := range tools {
		var t struct {
			Name        string `json:"name"`
			Annotations struct {
				ReadOnly    bool `json:"readOnlyHint"`
				Destructive bool `json:"destructiveHint"`
			} `json:"annotations"`
		}
		if json.Unmarshal(raw, &t) == nil && t.Annotations.Destructive && !t.Annotations.ReadOnly {
			out[t.Name] = true
		}
	}
	return out, nil
}

// replayOne sends c again and compares.
func replayOne(ctx context.Context, s *session.Session, c *Call, r Result, o Options) Result {
	var params any
	if len(c.Params) > 0 {
		params = c.Params
	}
	call := s.Call(c.Method, params)
	var (
		res json.RawMessage
		err error
	)
	if c.cancelled {
		// The recording cancelled it: so does the replay, as late.
		t := time.NewTimer(c.took)
		select {
		case <-call.Done():
		case <-t.C:
			_ = s.Cancel(call, "cancelled, as in the recording")
		case <-ctx.Done():
		}
		t.Stop()
	}
	res, err = call.Await(ctx)
	sn := call.Snapshot()
	last := call
	for n := call.Next(); n != nil; n = n.Next() {
		last = n
	}
	lsn := last.Snapshot()
	r.Live = Duration(lsn.Duration(sn.Started))
	if !lsn.Ended.IsZero() {
		r.Live = Duration(lsn.Ended.Sub(sn.Started))
	}
	r.LiveState = session.StateWord(&lsn)
	want := c
	for want.final != nil { // an MRTR chain: its last round ended it
		want = want.final
		r.Recorded += Duration(want.took)
		r.RecordedState = want.state
	}
	r.Differences = compare(want, res, err, &lsn)
	if !o.NoTiming && r.LiveState == r.RecordedState { // timing says nothing across different outcomes
		if d := time.Duration(r.Live) - time.Duration(r.Recorded); d > o.Tolerance || -d > o.Tolerance {
			r.Differences = append(r.Differences, Difference{What: "timing",
				Detail: fmt.Sprintf("took %s, recorded %s (tolerance %s)", round(time.Duration(r.Live)), round(time.Duration(r.Recorded)), o.Tolerance)})
		}
	}
	r.Status = "same"
	if len(r.Differences) > 0 {
		r.Status = "differs"
	}
	return r
}

func round(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(10 * time.Millisecond)
	case d > time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d
}

// compare says how a live outcome differs from the recorded one.
func compare(want *Call, res json.RawMessage, err error, live *session.CallSnapshot) []Difference {
	var out []Difference
	var rpc *journal.RPCError
	liveState := session.StateWord(live)
	switch {
	case want.cancelled:
		if liveState != "cancelled" && liveState != "late" {
			out = append(out, Difference{What: "state", Detail: fmt.Sprintf("recorded cancelled, live %s", liveState)})
		}
	case want.rpcErr != nil && errors.As(err, &rpc):
		if rpc.Code != want.rpcErr.Code || rpc.Message != want.rpcErr.Message {
			out = append(out, Difference{What: "error",
				Detail: fmt.Sprintf("recorded error %d %q, live error %d %q", want.rpcErr.Code, want.rpcErr.Message, rpc.Code, rpc.Message)})
		}
	case want.rpcErr != nil:
		detail := fmt.Sprintf("recorded error %d %q, live %s", want.rpcErr.Code, want.rpcErr.Message, liveState)
		if err != nil {
			detail += ": " + err.Error()
		}
		out = append(out, Difference{What: "error", Detail: detail})
	case err != nil:
		recorded := "a result"
		if want.state == "error" {
			recorded = "a tool error (isError)"
		}
		out = append(out, Difference{What: "error", Detail: fmt.Sprintf("recorded %s, live: %v", recorded, err)})
	default:
		if recorded := want.state == "error"; live.IsError != recorded && want.Method == "tools/call" {
			out = append(out, Difference{What: "isError", Detail: fmt.Sprintf("recorded isError %v, live %v", recorded, live.IsError)})
		}
		if fs := diff.JSON(comparable(want.result), comparable(res)); len(fs) > 0 {
			out = append(out, Difference{What: "result", Fields: fs})
		}
	}
	return out
}

// comparable is a result without the protocol's own bookkeeping: its
// _meta, a resultType of complete, and the 2026-07-28 caching hints.
func comparable(res json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(res, &m) != nil || m == nil {
		return res
	}
	delete(m, "_meta")
	delete(m, "ttlMs")
	delete(m, "cacheScope")
	if string(bytes.TrimSpace(m["resultType"])) == `"complete"` {
		delete(m, "resultType")
	}
	b, _ := json.Marshal(m)
	return b
}

// URL is where an HTTP recording was made, to replay it there; "" for a
// stdio recording (a command is never run because a file names it) and
// for a URL that lost a credential to redaction.
func (r *Recording) URL() string {
	if r.Info.Transport == "stdio" || strings.Contains(r.Info.URL, "[redacted]") {
		return ""
	}
	return r.Info.URL
}
