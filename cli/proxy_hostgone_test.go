package cli

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcpscope/testkit/testservers"
)

// hostGoneWait bounds how long a proxy whose host is gone may take to end:
// its shutdown ladder (three steps of --grace) and the drain, with room for
// a loaded machine. A hang guard: the proxy is expected well within it.
const hostGoneWait = 90 * time.Second

// startProxyProcess runs "mcpscope proxy ARGS…" as a process of its own
// (this test binary, built with -race) with pipes for its stdin and stdout,
// as a host runs it.
func startProxyProcess(t *testing.T, args ...string) (cmd *exec.Cmd, hostW io.WriteCloser, hostR *os.File, stderr func() string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(self, append([]string{"proxy"}, args...)...)
	cmd.Env = append(os.Environ(), asMain+"=1", "GORACE=atexit_sleep_ms=0")
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errPath := filepath.Join(t.TempDir(), "stderr")
	errF, err := os.Create(errPath)
	if err != nil {
		t.Fatal(err)
	}
	defer errF.Close()
	stderr = func() string { b, _ := os.ReadFile(errPath); return string(b) }
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errF
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		cmd.Process.Kill()
	})
	return cmd, inW, outR, stderr
}

// A host that goes away in the middle of a large answer (it stops reading,
// then closes both pipes, as a crashed host does) leaves a proxy that ends
// within its shutdown ladder, on its own or on SIGTERM; it used to
// deadlock: the 20 MB run was queued for the journal before it was written
// to the host and the journal's writer woken only after, so every other
// frame waited for room that nothing would make.
func TestProxyEndsWhenTheHostGoesMidAnswer(t *testing.T) {
	server := testservers.BuildStdio(t) // before noProxies moves $TMPDIR, where it is built
	for _, sigterm := range []bool{false, true} {
		name := "on its own"
		if sigterm {
			name = "on SIGTERM"
		}
		t.Run(name, func(t *testing.T) {
			noProxies(t)
			journal := filepath.Join(t.TempDir(), "j.jsonl")
			cmd, hostW, hostR, stderr := startProxyProcess(t, "--journal", journal, "--grace", "1s", "--", server)
			for _, line := range []string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{"megabytes":20}}}`,
			} {
				if _, err := io.WriteString(hostW, line+"\n"); err != nil {
					t.Fatal(err)
				}
			}
			br := bufio.NewReaderSize(hostR, 64<<10)
			if l, err := br.ReadString('\n'); err != nil || !strings.Contains(l, `"id":1`) {
				t.Fatalf("initialize: %q %v; stderr:\n%s", l, err, stderr())
			}
			// The start of the big answer, then the host is gone.
			if _, err := io.ReadFull(br, make([]byte, 1<<20)); err != nil {
				t.Fatalf("reading the answer's first MiB: %v; stderr:\n%s", err, stderr())
			}
			hostW.Close()
			hostR.Close()
			if sigterm {
				cmd.Process.Signal(syscall.SIGTERM)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(hostGoneWait):
				cmd.Process.Signal(syscall.SIGQUIT) // its goroutines, on stderr
				<-done
				t.Fatalf("the proxy did not end within %v of its host going away; stderr:\n%s", hostGoneWait, stderr())
			}
			b, err := os.ReadFile(journal)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "the host is gone") {
				t.Errorf("the journal does not say the host went away:\n%.2000s", b[max(0, len(b)-2000):])
			}
		})
	}
}
