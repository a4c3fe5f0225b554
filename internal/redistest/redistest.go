// Package redistest runs a real redis-server for tests: on a free loopback
// port, with appendonly in a temporary folder, stopped at the test's end.
// No mocks of Redis: when redis-server is missing the test is skipped, or
// fails under MCPSCOPE_REQUIRE_PEERS=1 (CI).
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"mcpscope/internal/loopback"
)

// Server is one redis-server process.
type Server struct {
	Addr string // 127.0.0.1:PORT
	Dir  string // its data folder (appendonly files)
	cmd  *exec.Cmd
	exit chan struct{}
}

// URL is the server's redis:// URL, database db.
func (s *Server) URL(db int) string { return fmt.Sprintf("redis://%s/%d", s.Addr, db) }

// Start runs redis-server for t.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		msg := "redis-server is not installed (apt-get install redis-server)"
		if os.Getenv("MCPSCOPE_REQUIRE_PEERS") == "1" {
			t.Fatalf("%s (MCPSCOPE_REQUIRE_PEERS=1, so this is a failure)", msg)
		}
		t.Skip(msg)
	}
	addr, err := loopback.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: addr, Dir: t.TempDir()}
	s.start(t, bin)
	t.Cleanup(func() { s.Kill() })
	return s
}

func (s *Server) start(t testing.TB, bin string) {
	t.Helper()
	_, port, _ := net.SplitHostPort(s.Addr)
	s.cmd = exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--dir", s.Dir, "--appendonly", "yes",
		"--save", "", "--daemonize", "no", "--protected-mode", "yes")
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	s.exit = make(chan struct{})
	ready := make(chan struct{})
	go func() {
		// It says so when it accepts connections; the rest is drained.
		sc := bufio.NewScanner(out)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), "Ready to accept connections") {
				once = true
				close(ready)
			}
		}
		if !once {
			close(ready)
		}
	}()
	go func() { s.cmd.Wait(); close(s.exit) }()
	select {
	case <-ready:
	case <-time.After(60 * time.Second): // a hang guard, not an expected time
		t.Fatal("redis-server did not start within 60s")
	}
	select {
	case <-s.exit:
		t.Fatalf("redis-server on %s exited at start", s.Addr)
	default:
	}
}

// Restart stops the server with SHUTDOWN (it writes its appendonly file)
// and starts it again on the same port and folder.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Shutdown(t)
	bin, _ := exec.LookPath("redis-server")
	s.start(t, bin)
}

// Shutdown sends SHUTDOWN and waits for the process to end.
func (s *Server) Shutdown(t testing.TB) {
	t.Helper()
	if err := s.command("SHUTDOWN"); err != nil {
		t.Logf("SHUTDOWN: %v", err)
	}
	select {
	case <-s.exit:
	case <-time.After(60 * time.Second):
		t.Fatal("redis-server did not stop within 60s of SHUTDOWN")
	}
}

// Kill ends the process (cleanup).
func (s *Server) Kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		<-s.exit
	}
}

// command sends one inline command and reads the first reply line.
func (s *Server) command(cmd string) error {
	c, err := net.DialTimeout("tcp", s.Addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := fmt.Fprintf(c, "%s\r\n", cmd); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil && cmd == "SHUTDOWN" {
		return nil // it closes the connection as it goes
	}
	if strings.HasPrefix(line, "-") {
		return fmt.Errorf("%s", strings.TrimSpace(line))
	}
	return err
}
