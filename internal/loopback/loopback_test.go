package loopback

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// listenEnv makes the test binary a child that listens on the address it
// names (":PORT" is every address, IPv6 included) until it is killed.
const listenEnv = "LOOPBACK_TEST_LISTEN"

func TestMain(m *testing.M) {
	if addr := os.Getenv(listenEnv); addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			os.Exit(7)
		}
		for {
			c, err := ln.Accept()
			if err != nil {
				os.Exit(8)
			}
			c.Close()
		}
	}
	os.Exit(m.Run())
}

// child starts this binary listening on listen; the returned channel is
// closed when it has ended.
func child(t *testing.T, listen string) (*exec.Cmd, chan struct{}) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), listenEnv+"="+listen)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	return cmd, exited
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	t.Cleanup(cancel)
	return c
}

func TestWaitForTheChildListening(t *testing.T) {
	for _, tc := range []struct{ name, listen string }{
		{"on the address", "ADDR"},
		{"on every address", ":PORT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, err := FreeAddr()
			if err != nil {
				t.Fatal(err)
			}
			_, port, _ := net.SplitHostPort(addr)
			listen := addr
			if tc.listen == ":PORT" {
				listen = ":" + port
			}
			cmd, exited := child(t, listen)
			if err := Wait(ctx(t), addr, cmd.Process.Pid, exited); err != nil {
				t.Fatalf("Wait: %v", err)
			}
			if runtime.GOOS == "linux" && owns(os.Getpid(), addr) {
				t.Fatal("owns: this process is said to hold the child's listener")
			}
		})
	}
}

// A stranger listening on the port is not taken for the child: the child
// cannot bind, exits, and Wait says so.
func TestWaitNotFooledByAStranger(t *testing.T) {
	stranger, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	go func() {
		for {
			c, err := stranger.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	addr := stranger.Addr().String()
	cmd, exited := child(t, addr)
	if err := Wait(ctx(t), addr, cmd.Process.Pid, exited); !errors.Is(err, ErrExited) {
		t.Fatalf("Wait: %v, want ErrExited", err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 7 {
		t.Fatalf("the child exited %d, want 7 (could not bind)", code)
	}
	if runtime.GOOS == "linux" && owns(cmd.Process.Pid, addr) {
		t.Fatal("owns: the ended child is said to hold the stranger's listener")
	}
	if runtime.GOOS == "linux" && !owns(os.Getpid(), addr) {
		t.Fatal("owns: this process does not hold its own listener")
	}
}

func TestWaitEndsWithItsContext(t *testing.T) {
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Wait(c, addr, os.Getpid(), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait: %v, want context.Canceled", err)
	}
}
