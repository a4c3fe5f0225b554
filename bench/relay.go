package bench

import (
	"errors"
	"io"
	"net"
	"os/exec"
	"time"
)

// The relays are the proxy rows' yardsticks: they pass bytes between a
// client and its server through their own memory, as any proxy that
// sees the traffic must, and do nothing else (no HTTP, no JSON, no
// journal). What a request or a flood costs through one, measured in the
// same rounds as the proxy, is the price of the extra hop itself on the
// machine the bench runs on, which the proxy cannot go below.

// relayBuf is the most a relay moves at once: the proxy's read size.
const relayBuf = 64 << 10

// RelayTCP accepts on ln until it is closed and joins each connection to
// a connection of its own to upstream (host:port).
func RelayTCP(ln net.Listener, upstream string) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go relayConn(c, upstream)
	}
}

func relayConn(c net.Conn, upstream string) {
	defer c.Close()
	u, err := net.DialTimeout("tcp", upstream, 10*time.Second)
	if err != nil {
		return
	}
	defer u.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		copyThrough(u, c)
		if t, ok := u.(*net.TCPConn); ok {
			t.CloseWrite() // the client is done sending: so is the relay
		}
	}()
	copyThrough(c, u)
	c.Close() // the upstream is done: unblock the other direction's read
	<-done
}

// RelayStdio spawns argv and copies in to its stdin (closed at in's end)
// and its stdout to out; its stderr goes to errw. It returns when the
// child's stdout ends, with the child's exit error.
func RelayStdio(argv []string, in io.Reader, out, errw io.Writer) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = errw
	w, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() {
		copyThrough(w, in)
		w.Close()
	}()
	copyThrough(out, r)
	return cmd.Wait()
}

// copyThrough copies src to dst through a buffer of its own until either
// fails or src ends: never io.Copy, whose splice would keep the bytes out
// of the relay's memory, where a proxy needs them.
func copyThrough(dst io.Writer, src io.Reader) {
	buf := make([]byte, relayBuf)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
