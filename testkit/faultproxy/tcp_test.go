package faultproxy

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// While cut, nothing passes; after Heal, what was sent arrives.
func TestTCPCutHoldsTrafficUntilHealed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // an echo server
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					l, err := r.ReadString('\n')
					if err != nil {
						return
					}
					c.Write([]byte(l))
				}
			}()
		}
	}()
	p := StartTCP(t, ln.Addr().String())
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	c.Write([]byte("one\n"))
	if l, err := r.ReadString('\n'); err != nil || l != "one\n" {
		t.Fatalf("through the link: %q %v", l, err)
	}
	p.Cut()
	c.Write([]byte("two\n"))
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond)) // what must not come
	if l, err := r.ReadString('\n'); err == nil {
		t.Fatalf("got %q through a cut link", l)
	}
	c.SetReadDeadline(time.Time{})
	p.Heal()
	if l, err := r.ReadString('\n'); err != nil || l != "two\n" {
		t.Fatalf("after the heal: %q %v", l, err)
	}
	if p.Cuts() != 1 {
		t.Fatalf("cuts %d", p.Cuts())
	}
}
