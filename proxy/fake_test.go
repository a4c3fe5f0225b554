package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a small stdio MCP-ish server (PROXY_FAKE=1):
// every request is answered with {"echo": <its params>}, except
//
//	slow {ms}        answers after ms, even when cancelled (a late answer)
//	slow {after}     answers right after it sees a notification of method
//	                 after: a late answer that comes on an event, not a clock
//	progress {n}     sends n notifications/progress for its token first
//	flood {n}        answers, then writes n notifications as fast as it can
//	exit {code}      writes a last notification and exits with code
//
// Notifications it gets are reported back as notifications/seen. With
// PROXY_FAKE_STUBBORN=1 it ignores stdin EOF and SIGTERM.
func TestMain(m *testing.M) {
	if os.Getenv("PROXY_FAKE") == "1" {
		fakeServer()
		return
	}
	if argv := os.Getenv("PROXY_RUN"); argv != "" {
		os.Exit(runSelfProxy(argv))
	}
	os.Exit(m.Run())
}

func fakeServer() {
	stubborn := os.Getenv("PROXY_FAKE_STUBBORN") == "1"
	if stubborn {
		signal.Ignore(syscall.SIGTERM)
	} else {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
		go func() {
			s := <-sigs
			fmt.Fprintf(os.Stderr, "fake: got %v\n", s)
			os.Exit(7)
		}()
	}
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	var mu sync.Mutex
	send := func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		out.Write(append(b, '\n'))
		out.Flush()
		mu.Unlock()
	}
	fmt.Fprintln(os.Stderr, "fake: ready")
	awaiting := map[string][]func(){} // slow {after}: answers by notification method
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.Method == "" {
			continue
		}
		if m.ID == nil {
			send(map[string]any{"jsonrpc": "2.0", "method": "notifications/seen", "params": map[string]any{"method": m.Method, "params": m.Params}})
			for _, answer := range awaiting[m.Method] {
				answer()
			}
			delete(awaiting, m.Method)
			continue
		}
		var p struct {
			MS    int             `json:"ms"`
			After string          `json:"after"`
			N     int             `json:"n"`
			Code  int             `json:"code"`
			Meta  json.RawMessage `json:"_meta"`
		}
		json.Unmarshal(m.Params, &p)
		answer := func() {
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"echo": m.Params}})
		}
		switch m.Method {
		case "slow", "initialize":
			if p.After != "" {
				awaiting[p.After] = append(awaiting[p.After], answer)
				continue
			}
			go func() { time.Sleep(time.Duration(p.MS) * time.Millisecond); answer() }()
		case "progress":
			var meta struct {
				Token json.RawMessage `json:"progressToken"`
			}
			json.Unmarshal(p.Meta, &meta)
			for i := 1; i <= p.N; i++ {
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": meta.Token, "progress": i, "total": p.N}})
			}
			answer()
		case "flood":
			answer()
			go func() {
				mu.Lock()
				defer mu.Unlock()
				for i := 1; i <= p.N; i++ {
					out.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"flood `)
					out.WriteString(strconv.Itoa(i))
					out.WriteString("\"}}\n")
				}
				out.Flush()
			}()
		case "exit":
			send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"data": "bye"}})
			os.Exit(p.Code)
		default:
			answer()
		}
	}
	fmt.Fprintln(os.Stderr, "fake: stdin closed")
	if stubborn {
		select {}
	}
	os.Exit(0)
}

// runSelfProxy is "mcpscope proxy -- argv…" inside the test binary, for
// clients that spawn their server.
func runSelfProxy(argvJSON string) int {
	var argv []string
	json.Unmarshal([]byte(argvJSON), &argv)
	dir := os.Getenv("PROXY_RUN_DIR")
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	res, err := RunStdio(context.Background(), StdioConfig{Name: "self", Command: argv[0], Args: argv[1:],
		Journal: filepath.Join(dir, "journal.jsonl"), SocketDir: dir, In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Signals: sigs})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 127
	}
	return res.ExitCode
}
