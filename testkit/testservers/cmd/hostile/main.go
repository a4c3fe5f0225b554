// Command hostile is a stdio MCP server that misbehaves on purpose, one way
// per -mode, for the tests of what mcpscope does with servers it cannot
// trust (see testservers.BuildHostile). It speaks just enough JSON-RPC by
// hand: the point is the bytes, not an SDK's idea of them.
//
// Modes:
//
//	legacy          a plain 2025-11-25 server: initialize, tools/list, tools/call echo;
//	                answers server/discover with -32601
//	modern-only     answers server/discover (2026-07-28) and rejects initialize with -32601
//	exit-on-discover  a legacy server that exits when server/discover comes first
//	silent-discover a legacy server that never answers unknown methods (server/discover included)
//	die-at-start    writes a few stderr lines and exits 3 before reading anything
//	escapes         a legacy server whose texts carry terminal escapes, OSC 52, bidi overrides
//	wrong-id        a legacy server that answers tools/call with the id as a string
//	mute            reads everything, answers nothing
//	discover-wrong-id  a legacy server that answers server/discover with -32601 under
//	                the id as a string (as the @effect/ai MCP server does), the rest rightly
//
// Task modes (the task id needs shell quoting: taskID):
//
//	task-forever          a legacy server whose tools/call with params.task makes a task that stays
//	                      "working" for ever (pollInterval 60 s); tasks/result never answers
//	modern-task-forever   a 2026-07-28 server (tasks extension) whose tools/call makes such a task
//	modern-task-ttl       the same, with a ttlMs of 1500 from its createdAt
//	modern-task-chatty    the same, polled every 100 ms, with a new statusMessage on every
//	                      tasks/get (a server that reports no progress but never stays quiet)
//	modern-task-bare      its task is "completed" at once, and tasks/get carries the result from
//	                      the second tasks/get on (the first is bare)
//	modern-task-empty     its task is "completed" at once, and tasks/get never carries the result
//	modern-bad-resulttype answers tools/call with an unknown resultType (with escapes in it)
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// evil is text a server should never get onto a terminal raw: a screen
// clear, an OSC 52 clipboard write, an OSC 8 link, a title change, a bidi
// override and a C1 CSI.
// taskID is the id of the task modes' task: words a shell would split.
const taskID = "job 1's"

const evil = "\x1b[2J\x1b]52;c;cHduZWQ=\x07\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07\x1b]0;pwned\x07\u202Etxt.exe\u0085\u009b2J"

func main() {
	mode := flag.String("mode", "legacy", "how to misbehave (see the package doc)")
	count := flag.String("count", "", "append a line to this file at every start (tests count starts)")
	fixed := flag.String("fixed-if", "", "behave as modern-only when this file exists (a server fixed since the last run)")
	quit := flag.Bool("exit-after-init", false, "exit once notifications/initialized arrives (a session that ends by itself)")
	flag.Parse()
	if *count != "" {
		if f, err := os.OpenFile(*count, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			fmt.Fprintln(f, os.Getpid())
			f.Close()
		}
	}
	if *fixed != "" {
		if _, err := os.Stat(*fixed); err == nil {
			*mode = "modern-only"
		}
	}
	if *mode == "die-at-start" {
		fmt.Fprintln(os.Stderr, "hostile: loading configuration")
		fmt.Fprintln(os.Stderr, "hostile: error: API_KEY is not set; export it and try again")
		fmt.Fprintln(os.Stderr, "hostile: \x1b[31mfatal\x1b[0m: cannot start")
		os.Exit(3)
	}
	out := bufio.NewWriter(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	initialized := false
	modern := strings.HasPrefix(*mode, "modern-")
	gets := 0 // tasks/get answered so far
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			if *quit && req.Method == "notifications/initialized" {
				fmt.Fprintln(os.Stderr, "hostile: "+evil) // stderr too, raw
				os.Exit(0)
			}
			continue // notifications need no answer
		}
		reply := func(v string) {
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,%s}`+"\n", req.ID, v)
			out.Flush()
		}
		fail := func(code int, msg string) {
			m, _ := json.Marshal(msg)
			reply(fmt.Sprintf(`"error":{"code":%d,"message":%s}`, code, m))
		}
		switch {
		case *mode == "mute":
		case req.Method == "server/discover" && modern:
			reply(`"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"hostile-modern","version":"1"}}}`)
		case req.Method == "server/discover" && !initialized && *mode == "exit-on-discover":
			fmt.Fprintln(os.Stderr, "hostile: unknown method before initialize; exiting")
			os.Exit(1)
		case req.Method == "server/discover" && *mode == "silent-discover":
		case req.Method == "server/discover" && *mode == "discover-wrong-id":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":"%s","error":{"code":-32601,"message":"Method not found"}}`+"\n", strings.Trim(string(req.ID), `"`))
			out.Flush()
		case req.Method == "initialize" && modern:
			fail(-32601, "Method not found: initialize")
		case req.Method == "initialize":
			initialized = true
			instructions := `""`
			if *mode == "escapes" {
				b, _ := json.Marshal("use me " + evil)
				instructions = string(b)
			}
			caps := `{"tools":{}}`
			if *mode == "task-forever" {
				caps = `{"tools":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}}`
			}
			reply(`"result":{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"serverInfo":{"name":"hostile-` + *mode + `","version":"1"},"instructions":` + instructions + `}`)
		case req.Method == "tools/list":
			desc := "echoes its text"
			if *mode == "escapes" {
				desc = "innocent " + evil
			}
			d, _ := json.Marshal(desc)
			reply(`"result":{"tools":[{"name":"echo","description":` + string(d) + `,"inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}`)
		case strings.HasPrefix(*mode, "modern-task-") && req.Method == "tools/call":
			reply(`"result":{"resultType":"task",` + modernTask(*mode, "working", 0) + `}`)
		case strings.HasPrefix(*mode, "modern-task-") && req.Method == "tasks/get":
			gets++
			status := "working"
			if *mode == "modern-task-bare" || *mode == "modern-task-empty" {
				status = "completed"
			}
			reply(`"result":{"resultType":"complete",` + modernTask(*mode, status, gets) + `}`)
		case *mode == "modern-bad-resulttype" && req.Method == "tools/call":
			reply(`"result":{"resultType":"bogus\u001b[2J","content":[{"type":"text","text":"what is this"}]}`)
		case *mode == "task-forever" && req.Method == "tools/call":
			reply(`"result":{"task":` + legacyTask() + `}`)
		case *mode == "task-forever" && req.Method == "tasks/get":
			reply(`"result":` + legacyTask())
		case *mode == "task-forever" && req.Method == "tasks/result":
			// never answered: the task never ends
		case req.Method == "tools/call" && *mode == "escapes":
			m, _ := json.Marshal("tool failed " + evil)
			reply(`"error":{"code":-32000,"message":` + string(m) + `,"data":` + string(m) + `}`)
		case req.Method == "tools/call" && *mode == "wrong-id":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":"%s","result":{"content":[{"type":"text","text":"answered with a string id"}]}}`+"\n", strings.Trim(string(req.ID), `"`))
			out.Flush()
		case req.Method == "tools/call":
			var p struct {
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
			}
			_ = json.Unmarshal(req.Params, &p)
			t, _ := json.Marshal(p.Arguments.Text)
			reply(`"result":{"content":[{"type":"text","text":` + string(t) + `}]}`)
		case req.Method == "ping":
			reply(`"result":{}`)
		default:
			fail(-32601, "Method not found: "+req.Method)
		}
	}
}

// started is when this server started: its tasks' createdAt.
var started = time.Now().UTC().Format(time.RFC3339Nano)

// legacyTask is the 2025-11-25 task of task-forever: working for ever.
func legacyTask() string {
	id, _ := json.Marshal(taskID)
	return `{"taskId":` + string(id) + `,"status":"working","statusMessage":"thinking","createdAt":"` + started + `","ttl":null,"pollInterval":60000}`
}

// modernTask is the task of the modern-task-* modes, the extension's
// fields flat; the result only where the mode gives one.
func modernTask(mode, status string, gets int) string {
	id, _ := json.Marshal(taskID)
	ttl := "600000"
	if mode == "modern-task-ttl" {
		ttl = "1500"
	}
	poll := "60000"
	if mode == "modern-task-chatty" {
		poll = "100"
	}
	t := `"taskId":` + string(id) + `,"status":"` + status + `","createdAt":"` + started + `","ttlMs":` + ttl + `,"pollIntervalMs":` + poll
	if mode == "modern-task-chatty" {
		t += fmt.Sprintf(`,"statusMessage":"still thinking (%d)"`, gets)
	}
	if status == "completed" && mode == "modern-task-bare" && gets > 1 {
		t += `,"result":{"content":[{"type":"text","text":"fetched again"}],"isError":false}`
	}
	return t
}
