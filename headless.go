package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"mcpscope/internal/termsafe"
	"mcpscope/session"
)

// toolError is a tool result with isError: the call worked, the tool failed.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

// oneShotGrace is how long a one-shot command lets a server exit on stdin EOF
// before the shutdown ladder moves on: scripts should not pay seconds for a
// server that ignores EOF.
const oneShotGrace = 250 * time.Millisecond

func runHeadless(ctx context.Context, o *options, stdout, stderr io.Writer) error {
	need := map[string]int{"call": 1, "read": 1, "prompt": 1, "task": 2}
	o.takeTarget()
	if n := need[o.cmd]; len(o.args) < n {
		return usagef("%s needs %s", o.cmd, map[string]string{"call": "a tool name", "read": "a resource URI", "prompt": "a prompt name",
			"task": "an action (get, result, cancel or update) and a task id"}[o.cmd])
	}
	if o.cmd == "record" {
		return runRecord(ctx, o, stdout)
	}
	switch o.cmd {
	case "tools", "resources", "templates", "prompts", "ping", "tasks":
		if len(o.args) > 0 {
			return usagef("%s takes no arguments besides the target (got %q); is the URL missing http://?", o.cmd, o.args[0])
		}
	}
	s, err := connect(ctx, o, nil, oneShotGrace)
	if err != nil {
		return err
	}
	defer s.Close()
	switch o.cmd {
	case "tools":
		return listAll(ctx, s, "tools/list", "tools", o, stdout)
	case "resources":
		return listAll(ctx, s, "resources/list", "resources", o, stdout)
	case "templates":
		return listAll(ctx, s, "resources/templates/list", "resourceTemplates", o, stdout)
	case "prompts":
		return listAll(ctx, s, "prompts/list", "prompts", o, stdout)
	case "tasks":
		if s.Era() == session.EraModern {
			return listKnownTasks(s, o, stdout)
		}
		return listAll(ctx, s, "tasks/list", "tasks", o, stdout)
	case "task":
		return taskAction(ctx, s, o, stdout, stderr)
	case "ping":
		start := time.Now()
		method := "ping"
		if s.Era() == session.EraModern {
			method = "server/discover" // the stateless protocol has no ping
		}
		if _, err := wait(ctx, s.Call(method, nil)); err != nil {
			return err
		}
		if o.jsonOut {
			fmt.Fprintf(stdout, "{\"ok\":true,\"ms\":%.3f}\n", float64(time.Since(start).Microseconds())/1000)
		} else {
			fmt.Fprintf(stdout, "pong from %s in %s\n", s.Info().ServerInfo.Name, time.Since(start).Round(time.Microsecond))
		}
		return nil
	case "call":
		return callTool(ctx, s, o, stdout)
	case "read":
		res, err := wait(ctx, s.Call("resources/read", map[string]any{"uri": o.args[0]}))
		if err != nil {
			return err
		}
		return printResult(stdout, o.jsonOut, res, printContents)
	case "prompt":
		args := map[string]string{}
		for _, kv := range o.args[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return usagef("prompt arguments are key=value, got %q", kv)
			}
			args[k] = v
		}
		if o.jsonArgs != "" {
			if err := json.Unmarshal([]byte(o.jsonArgs), &args); err != nil {
				return usagef("--json must be an object of strings for a prompt: %v", err)
			}
		}
		res, err := wait(ctx, s.Call("prompts/get", map[string]any{"name": o.args[0], "arguments": args}))
		if err != nil {
			return err
		}
		return printResult(stdout, o.jsonOut, res, printPrompt)
	}
	return usagef("unknown command %q", o.cmd)
}

// wait waits for a call (following MRTR rounds to the last), turning
// Ctrl-C into a cancel of the call.
func wait(ctx context.Context, c *session.Call) (json.RawMessage, error) {
	res, err := c.WaitFinal(ctx)
	if ctx.Err() != nil {
		_ = c.Session().Cancel(c, "interrupted (Ctrl-C)")
		return nil, errInterrupted
	}
	return res, err
}

// listAll follows nextCursor until the list ends and prints all items.
func listAll(ctx context.Context, s *session.Session, method, field string, o *options, stdout io.Writer) error {
	var all []json.RawMessage
	cursor := ""
	for page := 0; ; page++ {
		var params any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		res, err := wait(ctx, s.Call(method, params))
		if err != nil {
			return err
		}
		var r map[string]json.RawMessage
		if err := json.Unmarshal(res, &r); err != nil {
			return fmt.Errorf("%s: the result is not an object: %w", method, err)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(r[field], &items); err != nil && r[field] != nil {
			return fmt.Errorf("%s: %q is not a list: %w", method, field, err)
		}
		all = append(all, items...)
		cursor = ""
		if nc, ok := r["nextCursor"]; ok {
			_ = json.Unmarshal(nc, &cursor)
		}
		if cursor == "" {
			break
		}
		if page > 1000 {
			return fmt.Errorf("%s: the server kept sending nextCursor after 1000 pages; stopping", method)
		}
	}
	if o.jsonOut {
		b, _ := json.Marshal(map[string]any{field: all})
		fmt.Fprintf(stdout, "%s\n", b)
		return nil
	}
	if len(all) == 0 {
		fmt.Fprintf(stdout, "(no %s)\n", field)
		return nil
	}
	for _, it := range all {
		var v struct {
			Name        string `json:"name"`
			URI         string `json:"uri"`
			URITemplate string `json:"uriTemplate"`
			Description string `json:"description"`
			MimeType    string `json:"mimeType"`
		}
		_ = json.Unmarshal(it, &v)
		head := v.Name
		if v.URI != "" {
			head = v.URI
		} else if v.URITemplate != "" {
			head = v.URITemplate
		}
		desc := strings.TrimSpace(strings.SplitN(v.Description, "\n", 2)[0])
		if len(desc) > 100 {
			desc = desc[:97] + "..."
		}
		fmt.Fprintf(stdout, "%-32s %s\n", termsafe.Line(head), termsafe.Line(desc))
	}
	return nil
}

func callTool(ctx context.Context, s *session.Session, o *options, stdout io.Writer) error {
	name := o.args[0]
	args := map[string]any{}
	if o.jsonArgs != "" {
		if err := json.Unmarshal([]byte(o.jsonArgs), &args); err != nil {
			return usagef("--json must be a JSON object of tool arguments: %v", err)
		}
	}
	if kvs := o.args[1:]; len(kvs) > 0 {
		schema, err := toolSchema(ctx, s, name)
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return usagef("tool arguments are key=value, got %q", kv)
			}
			val, err := coerce(schema[k], v)
			if err != nil {
				return usagef("argument %s: %v", k, err)
			}
			args[k] = val
		}
	}
	var c *session.Call
	if o.asTask {
		c = s.CallAsTask("tools/call", map[string]any{"name": name, "arguments": args}, o.ttl)
	} else {
		c = s.Call("tools/call", map[string]any{"name": name, "arguments": args})
	}
	res, err := wait(ctx, c)
	if err != nil {
		return err
	}
	if id := c.Snapshot().TaskID; id != "" {
		fmt.Fprintf(os.Stderr, "task %s created\n", termsafe.Line(id))
		res, err = s.FollowTask(ctx, id, func(t session.Task) { printTaskStatus(os.Stderr, t) })
		if ctx.Err() != nil {
			return errInterrupted
		}
		if err != nil {
			return fmt.Errorf("%w%s", err, openTaskHint(s, id, o.url))
		}
	}
	if perr := printResult(stdout, o.jsonOut, res, printContents); perr != nil {
		return perr
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(res, &r) == nil && r.IsError {
		return &toolError{fmt.Sprintf("tool %s reported an error (isError: true)", name)}
	}
	return nil
}

// toolSchema fetches the property types of a tool's inputSchema so key=value
// arguments get the JSON types the tool expects.
func toolSchema(ctx context.Context, s *session.Session, name string) (map[string]string, error) {
	types := map[string]string{}
	cursor := ""
	for {
		var params any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		res, err := wait(ctx, s.Call("tools/list", params))
		if err != nil {
			return nil, fmt.Errorf("tools/list (to read %s's argument types): %w", name, err)
		}
		var r struct {
			Tools []struct {
				Name        string `json:"name"`
				InputSchema struct {
					Properties map[string]struct {
						Type json.RawMessage `json:"type"`
					} `json:"properties"`
				} `json:"inputSchema"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &r); err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		for _, t := range r.Tools {
			if t.Name != name {
				continue
			}
			for k, p := range t.InputSchema.Properties {
				var one string
				if json.Unmarshal(p.Type, &one) != nil {
					var many []string
					_ = json.Unmarshal(p.Type, &many)
					for _, m := range many {
						if m != "null" {
							one = m
							break
						}
					}
				}
				types[k] = one
			}
			return types, nil
		}
		if r.NextCursor == "" {
			return nil, usagef("the server has no tool named %q (see: mcpscope tools)", name)
		}
		cursor = r.NextCursor
	}
}

// coerce turns a command-line value into the JSON type the schema names.
func coerce(typ, v string) (any, error) {
	switch typ {
	case "string":
		return v, nil
	case "integer":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", v)
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", v)
		}
		return f, nil
	case "boolean":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", v)
		}
		return b, nil
	case "object", "array":
		var x any
		if err := json.Unmarshal([]byte(v), &x); err != nil {
			return nil, fmt.Errorf("%q is not JSON: %v", v, err)
		}
		return x, nil
	}
	var x any
	if json.Unmarshal([]byte(v), &x) == nil {
		return x, nil
	}
	return v, nil
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func printResult(w io.Writer, jsonOut bool, res json.RawMessage, human func(io.Writer, json.RawMessage) bool) error {
	if jsonOut || !human(w, res) {
		var b bytes.Buffer
		if json.Indent(&b, res, "", "  ") != nil {
			b.Reset()
			b.Write(res)
		}
		if !jsonOut {
			fmt.Fprintln(w, termsafe.Text(b.String()))
		} else {
			fmt.Fprintln(w, b.String())
		}
	}
	return nil
}

// printContents prints a tool result or resource contents for people;
// false means "no readable shape, print JSON".
func printContents(w io.Writer, res json.RawMessage) bool {
	var r struct {
		Content           []contentItem   `json:"content"`
		Contents          []contentItem   `json:"contents"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if json.Unmarshal(res, &r) != nil || (r.Content == nil && r.Contents == nil) {
		return false
	}
	for _, c := range append(r.Content, r.Contents...) {
		fmt.Fprintln(w, c.human())
	}
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		fmt.Fprintf(w, "structuredContent: %s\n", termsafe.Line(string(r.StructuredContent)))
	}
	return true
}

type contentItem struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	URI      string `json:"uri"`
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
	Blob     string `json:"blob"`
	Name     string `json:"name"`
	Resource *struct {
		URI  string `json:"uri"`
		Text string `json:"text"`
	} `json:"resource"`
}

func (c contentItem) human() string {
	switch {
	case c.Text != "":
		return termsafe.Text(c.Text)
	case c.Resource != nil:
		return termsafe.Text(fmt.Sprintf("[resource %s]\n%s", c.Resource.URI, c.Resource.Text))
	case c.Data != "" || c.Blob != "":
		n := len(c.Data) + len(c.Blob)
		return termsafe.Line(fmt.Sprintf("[%s %s, %d base64 bytes]", c.Type, c.MimeType, n))
	case c.Type == "resource_link":
		return termsafe.Line(fmt.Sprintf("[link %s %s]", c.Name, c.URI))
	}
	return termsafe.Line(fmt.Sprintf("[%s]", c.Type))
}

func printPrompt(w io.Writer, res json.RawMessage) bool {
	var r struct {
		Description string `json:"description"`
		Messages    []struct {
			Role    string      `json:"role"`
			Content contentItem `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(res, &r) != nil || r.Messages == nil {
		return false
	}
	if r.Description != "" {
		fmt.Fprintln(w, termsafe.Line(r.Description))
	}
	for _, m := range r.Messages {
		fmt.Fprintf(w, "%s: %s\n", termsafe.Line(m.Role), m.Content.human())
	}
	return true
}

// runRecord prints every frame as a JSONL journal record while the session
// runs, until the server ends or Ctrl-C.
func runRecord(ctx context.Context, o *options, stdout io.Writer) error {
	s, err := connect(ctx, o, nil, 2*time.Second)
	if err != nil {
		return err
	}
	var last uint64
	var buf []byte
	flush := func() {
		for _, it := range s.Store().Since(last, 0) {
			buf = session.AppendRecord(buf[:0], it.Seq, it.Frame)
			stdout.Write(buf)
			last = it.Seq
		}
	}
	done := s.Transport().Done()
	for {
		flush()
		select {
		case <-s.Store().Changed():
		case <-done:
			flush()
			s.Close()
			flush()
			if in := s.Info(); in.CloseReason != "" {
				return fmt.Errorf("%s", in.CloseReason)
			}
			return nil
		case <-ctx.Done():
			s.Close()
			flush()
			return nil
		}
	}
}

// runJournal reads a journal back into a store and summarises it.
func runJournal(o *options, stdout io.Writer) error {
	if len(o.args) != 1 {
		return usagef("journal needs one file path")
	}
	s, h, err := session.Load(o.args[0])
	if err != nil && s == nil {
		return err
	}
	in := s.Info()
	fmt.Fprintf(stdout, "journal %s\ntarget  %s\nstarted %s\nframes  %d\n", o.args[0], termsafe.Line(h.Target),
		h.Started.Format(time.RFC3339), s.Store().Len())
	kinds := map[string]int{}
	for _, it := range s.Store().Since(0, 0) {
		kinds[it.Frame.Dir.String()+" "+it.Frame.Kind.String()]++
	}
	keys := make([]string, 0, len(kinds))
	for k := range kinds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(stdout, "  %-16s %d\n", k, kinds[k])
	}
	fmt.Fprintf(stdout, "server  %s %s (protocol %s)\ncalls   %d\n", termsafe.Line(in.ServerInfo.Name),
		termsafe.Line(in.ServerInfo.Version), in.ProtocolVersion, in.Calls)
	for _, c := range s.Calls() {
		sn := c.Snapshot()
		fmt.Fprintf(stdout, "  #%-5s %-28s %-10s %s\n", sn.Key, termsafe.Line(sn.Method+" "+sn.Name), sn.State,
			sn.Duration(sn.Started).Round(time.Millisecond))
	}
	return err
}
