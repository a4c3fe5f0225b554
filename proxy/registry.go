package proxy

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"mcpscope/internal/osproc"
	"mcpscope/internal/xdg"
	"mcpscope/journal"
	"mcpscope/transport"
)

// Where the sockets live: $XDG_RUNTIME_DIR/mcpscope/proxies when there is a
// runtime dir, else $XDG_STATE_HOME/mcpscope/proxies; when that path is too
// long for a Unix socket address (sun_path: 104 bytes with its NUL on every
// Unix), /tmp/mcpscope-UID/HASH (on Windows %TEMP%\mcpscope-proxies\HASH,
// see shortSocketRoot), where HASH names the usual directory (so
// that each runtime dir has its own, as it would have had) and whose length
// is fixed: every proxy's socket fits there, whatever the names of the
// user's directories. Each socket is NAME.PID.sock (mode 0600, its
// directory and /tmp/mcpscope-UID 0700, the user's own).

// SocketDir is where a new proxy puts its socket: the first of SocketDirs
// where the longest socket path fits; the last one always does.
func SocketDir() string {
	dirs := SocketDirs()
	for _, d := range dirs {
		if socketFits(d) {
			return d
		}
	}
	return dirs[len(dirs)-1]
}

// socketFits says whether every socket path in dir fits in a socket
// address: the longest name SafeName gives and the longest pid.
func socketFits(dir string) bool {
	return len(SocketPath(dir, strings.Repeat("x", 48), 1<<31-1)) < listenPathMax
}

// SocketDirs are the places proxies may have their sockets, the usual one
// first.
func SocketDirs() []string {
	var dirs []string
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		dirs = append(dirs, filepath.Join(d, "mcpscope", "proxies"))
	}
	dirs = append(dirs, filepath.Join(xdg.StateDir(), "proxies"))
	return append(dirs, shortSocketDir(dirs[0]))
}

// shortSocketDir is the short directory for the sockets that would be in
// usual: under shortSocketRoot, named by 8 hex digits of usual's hash.
func shortSocketDir(usual string) string {
	h := sha256.Sum256([]byte(usual))
	return filepath.Join(shortSocketRoot(), hex.EncodeToString(h[:4]))
}

// ensureDir makes dir 0700 and refuses one that another user owns or that
// others can enter (a shared /tmp); in the short directory, its parent
// /tmp/mcpscope-UID too, which anyone could have made first.
func ensureDir(dir string) error {
	if root := shortSocketRoot(); filepath.Dir(dir) == root {
		if err := ensureOneDir(root); err != nil {
			return err
		}
	}
	return ensureOneDir(dir)
}

func ensureOneDir(dir string) error {
	if err := os.MkdirAll(dir, socketDirPerm); err != nil {
		return err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return ownDir(dir, st)
}

// SafeName turns a proxy name into the part of its socket's file name:
// letters, digits, '.', '_' and '-', at most 48 bytes.
func SafeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		case r == '.' && b.Len() > 0:
			b.WriteRune(r)
		default:
			b.WriteRune('_')
		}
		if b.Len() >= 48 {
			break
		}
	}
	if b.Len() == 0 {
		return "proxy"
	}
	return b.String()
}

// SocketPath is the socket a proxy named name with process id pid uses in dir.
func SocketPath(dir, name string, pid int) string {
	return filepath.Join(dir, SafeName(name)+"."+strconv.Itoa(pid)+socketSuffix)
}

// socketPID reads the pid out of a socket's file name.
func socketPID(path string) int {
	base := strings.TrimSuffix(filepath.Base(path), socketSuffix)
	i := strings.LastIndexByte(base, '.')
	if i < 0 {
		return 0
	}
	pid, _ := strconv.Atoi(base[i+1:])
	return pid
}

// Running is one proxy found by List.
type Running struct {
	Socket string
	Hello  Hello
	Err    error // it did not answer (Hello then holds what the file name says)
}

// List finds the running proxies: every socket in SocketDirs that answers
// with a hello. A socket whose process is gone is removed (stale); one whose
// process lives but does not answer within timeout is listed with Err.
func List(ctx context.Context, timeout time.Duration) ([]Running, error) {
	var paths []string
	seen := map[string]bool{}
	for _, d := range SocketDirs() {
		ms, _ := filepath.Glob(filepath.Join(d, "*"+socketSuffix))
		for _, m := range ms {
			if !seen[m] {
				seen[m] = true
				paths = append(paths, m)
			}
		}
	}
	out := make([]Running, len(paths))
	keep := make([]bool, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Dial(ctx, p, timeout)
			if err == nil {
				c.Close()
				out[i], keep[i] = Running{Socket: p, Hello: c.Hello}, true
				return
			}
			pid := socketPID(p)
			if pid > 0 && !osproc.Alive(pid) {
				os.Remove(p) // stale: its proxy died without cleaning up
				return
			}
			base := strings.TrimSuffix(filepath.Base(p), socketSuffix)
			name := strings.TrimSuffix(base, "."+strconv.Itoa(pid))
			out[i], keep[i] = Running{Socket: p, Hello: Hello{Name: name, PID: pid}, Err: err}, true
		}()
	}
	wg.Wait()
	var res []Running
	for i := range out {
		if keep[i] {
			res = append(res, out[i])
		}
	}
	sort.Slice(res, func(i, j int) bool {
		if res[i].Hello.Name != res[j].Hello.Name {
			return res[i].Hello.Name < res[j].Hello.Name
		}
		return res[i].Hello.PID < res[j].Hello.PID
	})
	return res, nil
}

// Find returns the running proxies called name (all of them for "").
func Find(ctx context.Context, name string, timeout time.Duration) ([]Running, error) {
	all, err := List(ctx, timeout)
	if err != nil || name == "" {
		return all, err
	}
	var out []Running
	for _, r := range all {
		if r.Hello.Name == name || SafeName(name) == SafeName(r.Hello.Name) {
			out = append(out, r)
		}
	}
	return out, nil
}

// Conn is a viewer's connection to a proxy.
type Conn struct {
	Hello Hello
	c     net.Conn
	br    *bufio.Reader
	wmu   sync.Mutex
}

// Dial connects to the socket at path and reads the hello, within timeout.
func Dial(ctx context.Context, path string, timeout time.Duration) (*Conn, error) {
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	c.SetReadDeadline(time.Now().Add(timeout))
	br := bufio.NewReaderSize(c, 64<<10)
	line, err := readLine(br, maxCommand)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("no hello from %s: %w", path, err)
	}
	var h Hello
	if err := json.Unmarshal(line, &h); err != nil || h.Type != "hello" {
		c.Close()
		if err == nil {
			var m Message
			if json.Unmarshal(line, &m) == nil && m.Error != "" {
				err = errors.New(m.Error)
			} else {
				err = fmt.Errorf("first line is %q, not a hello", m.Type)
			}
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.SetReadDeadline(time.Time{})
	h.Target = transport.RedactTarget(h.Target) // a proxy of an older build may say it as typed
	return &Conn{Hello: h, c: c, br: br}, nil
}

// Send writes one command.
func (c *Conn) Send(m Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.c.SetWriteDeadline(time.Now().Add(viewerWrite))
	_, err = c.c.Write(append(b, '\n'))
	return err
}

// Line is one line from the proxy: a journal record (Record set) or a
// control message (Msg set). Raw is the line as it came, without newline.
type Line struct {
	Raw    []byte
	Record *journal.Record
	Msg    *Message
}

// Next reads the next line; deadline zero waits as long as it takes.
func (c *Conn) Next(deadline time.Time) (Line, error) {
	c.c.SetReadDeadline(deadline)
	b, err := readLine(c.br, 2*journalMax)
	if err != nil && len(b) == 0 {
		return Line{}, err
	}
	l := Line{Raw: append([]byte(nil), b...)}
	if strings.HasPrefix(string(b[:min(len(b), 8)]), `{"seq":`) {
		var r journal.Record
		if jerr := json.Unmarshal(b, &r); jerr != nil {
			return l, jerr
		}
		l.Record = &r
		return l, nil
	}
	var m Message
	if jerr := json.Unmarshal(b, &m); jerr != nil {
		return l, jerr
	}
	l.Msg = &m
	return l, nil
}

// Close ends the connection.
func (c *Conn) Close() error { return c.c.Close() }
