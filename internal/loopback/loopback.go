// Package loopback starts children on loopback ports of their own: it picks
// a port nothing listens on, for a child to be told, and waits until that
// child (not whoever else took the port in between) listens on it.
//
// A child told a port cannot be handed a listener, so the pick and the
// child's bind are apart; another process may bind the port first. Then
// the child fails to bind and exits, and Wait says so; on Linux Wait also
// checks the listener it reached is the child's, so it never takes a
// stranger's for the child's in that moment.
package loopback

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// FreeAddr is a 127.0.0.1 address nothing listens on now. A port the kernel
// just gave out and took back is seldom handed out again at once.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("no free loopback port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// FreePort is FreeAddr's port.
func FreePort() (int, error) {
	addr, err := FreeAddr()
	if err != nil {
		return 0, err
	}
	_, port, _ := net.SplitHostPort(addr)
	return strconv.Atoi(port)
}

// poll is how often Wait tries addr: nothing tells a parent that its child
// has started to listen.
const poll = 20 * time.Millisecond

// ErrExited is what Wait returns when the child ended before it listened.
var ErrExited = errors.New("exited before it listened")

// Wait returns once process pid listens on addr (a host:port on loopback,
// localhost too) and takes a connection there. It returns ErrExited as soon as exited is
// closed (the caller closes it when the child has ended), and ctx's error
// when ctx ends first.
func Wait(ctx context.Context, addr string, pid int, exited <-chan struct{}) error {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		d := net.Dialer{Timeout: time.Second}
		if c, err := d.DialContext(ctx, "tcp", addr); err == nil {
			c.Close()
			if owns(pid, c.RemoteAddr().String()) { // localhost resolved
				return nil
			}
		}
		select {
		case <-exited:
			return ErrExited
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// owns reports whether process pid holds a socket listening on addr, or on
// the same port at any address (which takes addr's connections too). Where
// there is no /proc/net to tell, it reports true: addr took a connection.
func owns(pid int, addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return true
	}
	p, err := strconv.Atoi(port)
	ip := net.ParseIP(host)
	if err != nil || ip == nil {
		return true
	}
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		return true
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false // it has ended
	}
	mine := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if inode, ok := strings.CutPrefix(l, "socket:["); err == nil && ok {
			mine[strings.TrimSuffix(inode, "]")] = true
		}
	}
	want := listenAddrs(ip, p)
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if listensIn(table, want, mine) {
			return true
		}
	}
	return false
}

// listenAddrs are /proc/net/tcp{,6}'s spellings of the local addresses
// whose listener takes connections to ip:port: ip itself, the IPv4 and
// IPv6 wildcards, and ip mapped into IPv6.
func listenAddrs(ip net.IP, port int) map[string]bool {
	p := fmt.Sprintf(":%04X", port)
	out := map[string]bool{
		"00000000" + p:                         true,
		"00000000000000000000000000000000" + p: true,
	}
	if v4 := ip.To4(); v4 != nil {
		out[procWord(v4)+p] = true
		out["0000000000000000FFFF0000"+procWord(v4)+p] = true
		return out
	}
	var b strings.Builder
	for i := 0; i < 16; i += 4 {
		b.WriteString(procWord(ip[i : i+4]))
	}
	out[b.String()+p] = true
	return out
}

// procWord is how /proc/net/tcp{,6} spell four bytes of an address: one
// 32-bit word in host (little-endian) order, in hex.
func procWord(b []byte) string {
	return fmt.Sprintf("%02X%02X%02X%02X", b[3], b[2], b[1], b[0])
}

// listensIn reports whether table lists a listening socket at one of want
// whose inode is one of mine.
func listensIn(table string, want, mine map[string]bool) bool {
	f, err := os.Open(table)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...
		fs := strings.Fields(sc.Text())
		if len(fs) > 9 && fs[3] == "0A" && want[fs[1]] && mine[fs[9]] {
			return true
		}
	}
	return false
}
