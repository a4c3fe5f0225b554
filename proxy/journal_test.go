package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/transport"
)

// Whatever the server writes reaches the host byte for byte, and the
// journal has each of its lines but the blank ones, in order, as a
// message when it is JSON, else as garbage: whether the proxy has calls
// to route answers for (then it reads the lines one by one) or not (then
// it hands them to the journal in bulk).
func TestStdioJournalsServerLinesAsSent(t *testing.T) {
	var out bytes.Buffer
	out.WriteString("\n\r\n") // blank lines first
	for i := range 3000 {
		fmt.Fprintf(&out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"n":%d}}`+"\n", i)
		switch i % 97 {
		case 3:
			out.WriteString("\n") // a blank line between
		case 5:
			out.WriteString("\r\n")
		case 7:
			out.WriteString("not json at all\r\n")
		case 11:
			out.WriteString(`{"s":"é ✓ \u2028 \"q\""}` + "\n")
		case 13:
			out.WriteString("   \n")
		case 17:
			out.WriteString("\r\r\n")
		case 19:
			out.WriteString("{\"ctl\":\"\x01\"}\n")
		}
	}
	out.WriteString(`{"last":"no newline"}`)
	sent := out.Bytes()
	var want []string // the journal's lines
	for _, l := range strings.SplitAfter(string(sent), "\n") {
		if l := string(trimEOL([]byte(l))); l != "" {
			want = append(want, l)
		}
	}
	file := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(file, sent, 0o600); err != nil {
		t.Fatal(err)
	}

	for _, routed := range []bool{false, true} {
		t.Run(fmt.Sprintf("routed=%v", routed), func(t *testing.T) {
			r := startProxy(t, StdioConfig{Command: "sh", Args: []string{"-c", `read l; cat "$0"`, file}})
			got := make(chan []byte, 1)
			go func() { b, _ := io.ReadAll(r.hostR); got <- b }()
			if routed {
				r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`) // in flight all along: every line is routed
			} else {
				r.send("go")
			}
			var b []byte
			select {
			case b = <-got:
			case <-time.After(waitLong):
				t.Fatal("no end of output")
			}
			if !bytes.Equal(b, sent) {
				t.Fatalf("host got %d bytes, server sent %d; first difference at %d", len(b), len(sent), firstDiff(b, sent))
			}
			r.hostW.Close()
			r.wait()
			var lines []string
			for i, rec := range r.records() {
				if rec.Seq != uint64(i+1) {
					t.Fatalf("record %d has seq %d", i+1, rec.Seq)
				}
				if rec.Dir != "in" || rec.Kind != "message" && rec.Kind != "garbage" {
					continue
				}
				l := *rec.Raw
				if wantKind := map[bool]string{true: "message", false: "garbage"}[json.Valid([]byte(l))]; rec.Kind != wantKind || rec.Meta.Via != transport.ViaHost {
					t.Fatalf("seq %d %q: kind %s via %s", rec.Seq, l, rec.Kind, rec.Meta.Via)
				}
				lines = append(lines, l)
			}
			if len(lines) != len(want) {
				t.Fatalf("journal has %d server lines, want %d", len(lines), len(want))
			}
			for i := range want {
				if lines[i] != want[i] {
					t.Fatalf("journal line %d is %q, want %q", i, lines[i], want[i])
				}
			}
		})
	}
}
