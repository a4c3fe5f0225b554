package proxy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// However long the runtime dir, the state dir and $TMPDIR, a proxy has a
// socket viewers reach (it had none once the runtime dir passed about 40
// bytes), in a directory of the user's own that no one else can enter.
func TestSocketWithALongRuntimeDir(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("r", 100))
	if err := os.MkdirAll(long, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_RUNTIME_DIR", long)
	t.Setenv("XDG_STATE_HOME", long)
	t.Setenv("TMPDIR", long)
	dir := SocketDir()
	t.Cleanup(func() { os.RemoveAll(dir) })
	if len(SocketPath(dir, strings.Repeat("n", 80), 1<<31-1)) >= listenPathMax {
		t.Fatalf("socket dir %s leaves no room for a socket", dir)
	}
	cmd, args := fakeCmd(t)
	name := strings.Repeat("a-long-server-name-", 4)
	r := startProxy(t, StdioConfig{Name: name, Command: cmd, Args: args, Env: []string{"PROXY_FAKE=1", "GORACE=atexit_sleep_ms=0"}, SocketDir: dir})
	if s := r.stderr.String(); strings.Contains(s, "no socket") {
		t.Fatalf("the proxy has no socket: %s", s)
	}
	got, err := List(context.Background(), 5*time.Second)
	if err != nil || len(got) != 1 || got[0].Err != nil || got[0].Hello.Name != name {
		t.Fatalf("list: %+v %v", got, err)
	}
	c, err := Dial(context.Background(), got[0].Socket, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	for p, want := range map[string]os.FileMode{filepath.Dir(dir): 0o700, dir: 0o700, got[0].Socket: 0o600} {
		st, err := os.Lstat(p)
		if err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %v", p, st.Mode(), err, want)
		}
	}
}
