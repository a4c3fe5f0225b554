package e2e

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"mcpscope/testkit/peers"
	"mcpscope/testkit/testservers"
	"mcpscope/testkit/waitfor"
)

// TestE2ETmux runs the real binary against the embedded demo server in a
// 120×40 tmux pane and drives it like a person: start a slow call from the
// catalog, watch its progress, cancel it, replay it, answer an elicitation
// form, copy a result. Every step waits for text on the captured screen.
// startTUI runs the binary on the embedded demo server in a w×h tmux pane
// and waits for its start-up calls; the pane goes with the test.
func startTUI(t *testing.T, w, h int) *tmux {
	t.Helper()
	tm := startDemo(t, w, h, false)
	tm.run("set-option", "-g", "set-clipboard", "on")
	tm.waitFor("mcpscope-demo", "prompts/list")
	return tm
}

// startDemo starts the binary on the embedded demo server (journaling or
// not) in a w×h pane, with its state and config in a directory of its own.
func startDemo(t *testing.T, w, h int, journal bool) *tmux {
	t.Helper()
	dir := t.TempDir()
	var args []string
	if !journal {
		args = append(args, "--no-journal")
	}
	return pane(t, dir, []string{"XDG_STATE_HOME=" + dir + "/state", "XDG_CONFIG_HOME=" + dir + "/config"}, w, h, args...)
}

// pane starts a w×h tmux pane running the binary with args in dir, with
// env's XDG_ variables; when the binary exits the pane stays and shows
// "EXITED code". Each pane has a tmux server of its own, its socket in a
// directory of its own (-count reruns and two panes in one test never
// meet), killed and removed with the test.
func pane(t *testing.T, dir string, env []string, w, h int, args ...string) *tmux {
	t.Helper()
	if testing.Short() {
		t.Skip("e2e: skipped in -short mode")
	}
	bin := peers.Tool(t, "tmux") // a skip, or under MCPSCOPE_REQUIRE_PEERS=1 a failure, when missing
	var vars []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "XDG_") {
			vars = append(vars, shellQuote(kv))
		}
	}
	quoted := []string{shellQuote(binary(t))}
	for _, a := range args {
		quoted = append(quoted, shellQuote(a))
	}
	tm := &tmux{t: t, bin: bin, sock: tmuxSocket(t)}
	tm.run("-f", "/dev/null", "new-session", "-d", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), "-s", "e2e",
		fmt.Sprintf("cd %s && env TERM=xterm-256color NO_COLOR= %s %s 2>%s/stderr.log; echo EXITED $?; sleep 60",
			shellQuote(dir), strings.Join(vars, " "), strings.Join(quoted, " "), shellQuote(dir)))
	// The server's process, held (a pidfd on Linux) while it surely runs, so
	// that the kill below can never reach another process that got its pid.
	var server *os.Process
	if pid, err := strconv.Atoi(strings.TrimSpace(tm.run("display-message", "-p", "#{pid}"))); err == nil {
		server, _ = os.FindProcess(pid)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last screen:\n%s", tm.capture())
			if b, err := os.ReadFile(filepath.Join(dir, "stderr.log")); err == nil {
				t.Logf("stderr:\n%s", b)
			}
		}
		if err := exec.Command(tm.bin, "-S", tm.sock, "kill-server").Run(); err != nil && server != nil {
			server.Kill() // it did not answer: it goes anyway (already gone: os.ErrProcessDone)
		}
		if server != nil {
			server.Release()
		}
	})
	return tm
}

// tmuxSocket is the path of a new tmux server's socket in a directory of
// the test's own, removed with it: not in tmux's shared per-user folder,
// where every server of every run left a dead socket behind. A socket's
// path has at most 103 bytes (sun_path is 104 on macOS, 108 on Linux): when
// t.TempDir() is deeper than that allows, a short directory under $TMPDIR.
func tmuxSocket(t *testing.T) string {
	t.Helper()
	const name = "tmux"
	if dir := t.TempDir(); len(dir)+1+len(name) <= 103 {
		return filepath.Join(dir, name)
	}
	dir, err := os.MkdirTemp("", "mst")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, name)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func TestE2ETmux(t *testing.T) {
	tm := startTUI(t, 120, 40)

	// Start a slow call from the catalog's form.
	tm.openTool("Slow task with progress", "slow")
	tm.keys("C-u")
	tm.text("30")
	tm.keys("Tab", "C-u")
	tm.text("30")
	tm.keys("Enter")
	tm.waitFor("tools/call slow", "(waiting for the response)") // the call's detail, on its response
	tm.keys("Escape")
	tm.waitFor("Notifications")

	// Watch progress: bar, count, rate and ETA, in the row and the strip.
	tm.waitRe(`slow\s+streaming.*[2-9]/30`, `Running 1`, `eta \d`)

	// Cancel it.
	tm.keys("c")
	tm.waitRe(`cancelled call \d+ \(tools/call\)`, `slow\s+(cancelled|late)`)

	// Replay it: a new id, same params, progress again.
	tm.keys("r")
	tm.waitRe(`replayed call (\d+) as (\d+)`)
	tm.waitRe(`slow\s+streaming.*[1-9]/30`)
	tm.keys("c")
	tm.waitRe(`cancelled call`)

	// Answer an elicitation form.
	tm.openTool("Ask the user (elicitation)", "ask")
	tm.keys("Enter")
	tm.waitFor("The server asks (elicitation) (MRTR round 1 of call", "Your name*")
	tm.fillField("Your name", "Ada")
	tm.fillField("Your age", "36")
	tm.keys("Enter")
	tm.waitFor("elicitation accepted")
	tm.waitFor("the user accepted and answered") // the detail follows the call to its answer
	tm.keys("Escape")
	tm.waitFor("Notifications")

	// The retry round carries the answer, linked to the first; copy its result.
	tm.waitRe(`ask\s+input[^\n]*round 2 is #\d+[^\n]*\n[^\n]*↳ round 2 of #\d+\s+ok`)
	tm.keys("G", "y")
	tm.waitRe(`copied result of call \d+`)
	if buf, err := exec.Command(tm.bin, "-S", tm.sock, "show-buffer").Output(); err == nil && len(buf) > 0 {
		if !strings.Contains(string(buf), "the user accepted") {
			t.Errorf("clipboard (tmux buffer via OSC 52) holds %q", buf)
		}
	} else {
		t.Log("tmux did not take the OSC 52 copy; checked the on-screen confirmation only")
	}
	tm.keys("Enter")
	tm.waitFor("request │ response")
	tm.keys("Tab")
	tm.waitFor(`the user accepted and answered`, `Ada`)
	tm.keys("Escape")
	tm.waitFor("Notifications")

	// The era decision is in the status bar; the tasks and detached-calls
	// views open and close; reconnect-now says nothing is pending (stdio).
	tm.waitRe(`\((modern|legacy): `)
	tm.keys("t")
	tm.waitFor("Tasks 0", "no tasks yet")
	tm.keys("Escape")
	tm.waitFor("Notifications")
	tm.keys("D")
	tm.waitFor("Detached calls 0", "no calls are left running")
	tm.keys("Escape")
	tm.waitFor("Notifications")
	// Listen streams open in the modern era and are explained in the legacy one.
	tm.keys("l")
	if strings.Contains(tm.waitRe(`Listen streams 0 open|era is legacy: the server sends notifications unasked`), "Listen streams") {
		tm.keys("Escape")
		tm.waitFor("Notifications")
	}
	tm.keys("C-r")
	tm.waitFor("no stream is waiting to reconnect")
	tm.keys("q")
}

type tmux struct {
	t    *testing.T
	bin  string // the tmux program
	sock string // the path of its server's socket (tmux -S)
}

func (tm *tmux) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command(tm.bin, append([]string{"-S", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (tm *tmux) capture() string {
	out, _ := exec.Command(tm.bin, "-S", tm.sock, "capture-pane", "-p", "-t", "e2e").Output()
	return string(out)
}

func (tm *tmux) keys(k ...string) { tm.run(append([]string{"send-keys", "-t", "e2e"}, k...)...) }
func (tm *tmux) text(s string)    { tm.run("send-keys", "-t", "e2e", "-l", s) }

// waitUntil polls the screen (tmux has no event for "the screen changed")
// until ok holds; the deadline is only a hang guard.
func (tm *tmux) waitUntil(what string, ok func(string) bool) string {
	tm.t.Helper()
	var s string
	waitfor.Until(tm.t, what, hangGuard, func() bool { s = tm.capture(); return ok(s) })
	return s
}

func (tm *tmux) waitFor(subs ...string) string {
	tm.t.Helper()
	return tm.waitUntil(fmt.Sprintf("%q", subs), func(s string) bool {
		for _, x := range subs {
			if !strings.Contains(s, x) {
				return false
			}
		}
		return true
	})
}

func (tm *tmux) waitRe(res ...string) string {
	tm.t.Helper()
	return tm.waitUntil(fmt.Sprintf("%q", res), func(s string) bool {
		for _, x := range res {
			if !regexp.MustCompile(x).MatchString(s) {
				return false
			}
		}
		return true
	})
}

// selectedLine is the row marked ▸.
func selectedLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "▸") {
			return l
		}
	}
	return ""
}

// fieldHolds reports whether a form's row shows label (marked * when
// required) followed by exactly value. A looser "the row contains value" passes on a default such as
// "10" before "1" is typed, and the Tabs that follow then overshoot.
func fieldHolds(row, label, value string) bool {
	rest, ok := strings.CutPrefix(words(strings.TrimPrefix(strings.TrimSpace(row), "▸")), words(label))
	rest, _ = strings.CutPrefix(rest, "*") // a required field
	rest, sp := strings.CutPrefix(rest, " ")
	ok = ok && sp
	v := words(value)
	return ok && (rest == v || strings.HasPrefix(rest, v+" "))
}

// openTool opens the form of the catalog's tool titled title (named name).
func (tm *tmux) openTool(title, name string) {
	tm.t.Helper()
	tm.keys("C")
	tm.waitFor("Catalog", title)
	tm.selectRow(title)
	tm.keys("Enter")
	tm.waitFor("Call tool " + name)
}

// selectRow moves the catalog's selection to the first row holding text.
func (tm *tmux) selectRow(text string) { tm.t.Helper(); tm.selectIn("Catalog", text) }

// selectReq moves the requests pane's selection to the first row holding
// text.
func (tm *tmux) selectReq(text string) { tm.t.Helper(); tm.selectIn("Requests", text) }

// selectIn moves the selection of the list under the line holding title
// to its top, then down until the selected row holds text (spaces between
// its words not counted). After each key
// it waits for the selected row to be another row (by its first words, not
// its whole line: a call's status and duration change by themselves, and
// so does the pane drawn beside the list, which made a key's answer seem to
// come before the key and the keys run ahead of the checks, past the row).
// A caller that switched lists waits for the new list first: its first
// row may already be selected.
func (tm *tmux) selectIn(title, text string) {
	tm.t.Helper()
	tm.keys("g")
	s := tm.waitUntil("the first row under "+title+" to be selected", func(s string) bool {
		ls := strings.Split(s, "\n")
		for i, l := range ls {
			if strings.Contains(l, title) && i+1 < len(ls) {
				return strings.HasPrefix(ls[i+1], "▸")
			}
		}
		return false
	})
	for range 40 {
		at, cur := selectedAt(s)
		if strings.Contains(words(cur), words(text)) {
			return
		}
		tm.keys("j")
		s = tm.waitUntil("the selection to move down from "+strconv.Quote(rowKey(cur)), func(s string) bool {
			i, sel := selectedAt(s)
			return i >= at && rowKey(sel) != rowKey(cur)
		})
	}
	tm.t.Fatalf("no row %q under %s", text, title)
}

// words is l with its runs of spaces made one: columns widen with what
// they hold (a string id widens the id column).
func words(l string) string { return strings.Join(strings.Fields(l), " ") }

// selectedAt is the selected line of s and its index (-1: none).
func selectedAt(s string) (int, string) {
	for i, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "▸") {
			return i, l
		}
	}
	return -1, ""
}

// rowKey names a list row by its first three words (a catalog row's name
// and title, a call's time, id and method): what stays while its status,
// duration and progress change.
func rowKey(l string) string {
	f := strings.Fields(strings.TrimPrefix(strings.TrimLeft(l, " "), "▸"))
	return strings.Join(f[:min(3, len(f))], " ")
}

// fillField moves the form's focus to the labelled field and types.
func (tm *tmux) fillField(label, value string) {
	tm.t.Helper()
	for i := 0; i < 10; i++ {
		if strings.Contains(selectedLine(tm.capture()), label) {
			tm.keys("C-u")
			tm.text(value)
			tm.waitUntil(label+" = "+value, func(s string) bool { return fieldHolds(selectedLine(s), label, value) })
			return
		}
		prev := selectedLine(tm.capture())
		tm.keys("Tab")
		tm.waitUntil("focus to move", func(s string) bool { return selectedLine(s) != prev })
	}
	tm.t.Fatalf("no field %q", label)
}

// Text is edited in place: a word inserted in the middle of a form field's
// value, and in the middle of a replayed request's params, reaches the
// server as edited.
func TestE2EEditInPlace(t *testing.T) {
	tm := startTUI(t, 120, 40)
	tm.openTool("Echo", "echo")
	tm.fillField("message", "hello world")
	tm.keys("Left", "Left", "Left", "Left", "Left")
	tm.text("big ")
	tm.waitUntil("the edit in the middle", func(s string) bool { return strings.Contains(selectedLine(s), "hello big world") })
	tm.keys("Enter")
	tm.waitFor("tools/call echo · ok", "hello big world") // lands on the response
	tm.keys("Escape")
	tm.waitFor("Notifications") // (a key right after Escape would read as alt+key)

	// Edit and replay: the params as one line, the cursor moved into the
	// middle of the message, words typed there.
	tm.keys("e")
	tm.waitFor(`"message": "hello big world"`)
	tm.waitFor("Edit params, then replay tools/call")
	tm.keys("C-u")
	tm.text(`{"name": "echo", "arguments": {"message": "hello world"}}`)
	tm.keys("Home")
	for i := 0; i < len(`{"name": "echo", "arguments": {"message": "hello `); i++ {
		tm.keys("Right")
	}
	tm.text("brave new ")
	tm.waitFor(`"message": "hello brave new world"`)
	tm.keys("C-s")
	tm.waitRe(`replayed call \d+ as \d+`)
	tm.keys("G", "Enter")
	tm.waitFor("request │ response")
	tm.keys("Tab")
	tm.waitFor("hello brave new world")
}

// TestE2EQuitWhileConnecting: q quits while the inspector is still
// connecting to a server that accepts the connection and never answers,
// as it does once the inspector draws (ctrl+c interrupts, as always): exit
// 0, saying nothing was connected, long before the handshake's timeout.
func TestE2EQuitWhileConnecting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accepts, reads, never answers
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(io.Discard, c)
		}
	}()
	dir := t.TempDir()
	tm := pane(t, dir, []string{"XDG_STATE_HOME=" + dir + "/state", "XDG_CONFIG_HOME=" + dir + "/config"}, 100, 20,
		"--timeout", "10m", "http://"+ln.Addr().String()+"/mcp")
	stderrHas := func(s string) func(string) bool {
		return func(string) bool {
			b, _ := os.ReadFile(filepath.Join(dir, "stderr.log"))
			return strings.Contains(string(b), s)
		}
	}
	tm.waitUntil("connecting…", stderrHas("mcpscope: connecting…"))
	tm.text("q")
	tm.waitFor("EXITED 0")
	tm.waitUntil("the quit said", stderrHas("quit while connecting to http://"+ln.Addr().String()+"/mcp: nothing was connected"))
}

// TestE2EQuitPrintsEveryRejoinLine: a call detached with d, and one still
// running that can be rejoined, are both left on the server when q quits
// (no question: nothing is lost), and a `mcpscope rejoin …` line is
// printed for each, the d one included.
func TestE2EQuitPrintsEveryRejoinLine(t *testing.T) {
	dir := t.TempDir()
	tm, state := inspectorStreamingSlow(t, dir, "120", "120")
	tm.keys("d")
	tm.waitRe(`slow\s+detached`)
	startSlow(tm, "120")
	tm.waitRe(`slow\s+detached`, `slow\s+streaming`)
	tm.keys("q")
	tm.waitFor("EXITED 0")
	b, _ := os.ReadFile(filepath.Join(dir, "stderr.log"))
	l, err := callStore(state).List()
	if err != nil || len(l) != 2 {
		t.Fatalf("records after q: %+v %v\n%s", l, err, b)
	}
	if !strings.Contains(string(b), "left 2 call(s) running on the server; rejoin with:") || strings.Contains(string(b), "ended with the inspector") {
		t.Fatalf("stderr:\n%s", b)
	}
	for _, d := range l {
		if !strings.Contains(string(b), "  mcpscope rejoin "+d.Handle+"\n") {
			t.Fatalf("no rejoin line for %s:\n%s", d.Handle, b)
		}
	}
}

// TestE2EQuitAsksBeforeLosingACall: against a server that keeps no event
// store a running call cannot be detached: q asks, naming it; n stays; q
// twice quits, and the call is named on exit as ended with the inspector.
func TestE2EQuitAsksBeforeLosingACall(t *testing.T) {
	dir := t.TempDir()
	url := testservers.StartHTTP(t, testservers.HTTPOpts{})
	tm := pane(t, dir, []string{"XDG_STATE_HOME=" + dir + "/state", "XDG_CONFIG_HOME=" + dir + "/config"}, 140, 40,
		"--era", "legacy", "--no-journal", url)
	startSlow(tm, "120")
	tm.keys("q")
	tm.waitRe(`Quit\? 1 running call would be lost`, `✗ #\d+ tools/call slow`, `q or y: quit anyway · esc or n: stay`)
	tm.keys("n")
	tm.waitUntil("the panel to go", func(s string) bool { return !strings.Contains(s, "would be lost") && strings.Contains(s, "streaming") })
	tm.keys("q")
	tm.waitFor("would be lost")
	tm.keys("q")
	tm.waitFor("EXITED 0")
	b, _ := os.ReadFile(filepath.Join(dir, "stderr.log"))
	if !regexp.MustCompile(`1 running call\(s\) ended with the inspector, not rejoinable: #\d+ tools/call slow`).Match(b) {
		t.Fatalf("stderr:\n%s", b)
	}
}

// startSlow starts the slow tool from the catalog for seconds, and waits
// for it to stream.
func startSlow(tm *tmux, seconds string) {
	tm.t.Helper()
	tm.openTool("slow", "slow")
	tm.fillField("seconds", seconds)
	tm.keys("Enter")
	tm.waitFor("(waiting for the response)")
	tm.keys("Escape")
	tm.waitRe(`slow\s+streaming`)
}

// The form's field check is exact: a default that contains the typed value
// ("10" for "1") does not count, and a required field's * is allowed.
func TestFieldHolds(t *testing.T) {
	for _, c := range []struct {
		row, label, value string
		want              bool
	}{
		{"▸ seconds  10", "seconds", "1", false},
		{"▸ seconds  1", "seconds", "1", true},
		{"▸ message* **loud** hello", "message", "**loud** hello", true},
		{"▸ Your name*       Ada", "Your name", "Ada", true},
		{"▸ Your name*       Adam", "Your name", "Ada", false},
		{"▸ secondsx 1", "seconds", "1", false},
		{"▸ steps    2", "seconds", "2", false},
	} {
		if got := fieldHolds(c.row, c.label, c.value); got != c.want {
			t.Errorf("fieldHolds(%q, %q, %q) = %v, want %v", c.row, c.label, c.value, got, c.want)
		}
	}
}
