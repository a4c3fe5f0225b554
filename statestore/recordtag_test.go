package statestore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func tagRecord() Detached {
	return Detached{Handle: "h-tag", Target: "http://127.0.0.1:1/mcp", Transport: "http", SessionID: "s1",
		SecretRefs: map[string]string{"Authorization": "env:MCPSCOPE_BEARER"}, RequestID: json.RawMessage(`3`),
		Method: "tools/call", Name: "slow", Params: json.RawMessage(`{"name": "slow", "arguments": {"n": 1}}`),
		Started: time.Now(), Owner: &Owner{Host: "a", PID: 7}}
}

// A sealed record stays sealed through the file store and its progress
// marks (what the store and the marks change is not covered); any change
// to what decides where a rejoin goes and what it sends, or another key,
// makes it foreign. The key file is made once, 0600, even by racing
// processes.
func TestRecordTag(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv(EnvStateKey, "")
	d := tagRecord()
	if RecordSealed(d) {
		t.Fatal("an untagged record reads as sealed")
	}
	if RecordSealed(d); fileExists(StateKeyFile()) {
		t.Fatal("verifying made a key: only sealing makes one")
	}
	var wg sync.WaitGroup
	tags := make([]string, 8)
	for i := range tags {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := d
			SealRecord(&c)
			tags[i] = c.Tag
		}()
	}
	wg.Wait()
	for _, tag := range tags {
		if tag == "" || tag != tags[0] {
			t.Fatalf("racing first uses made different keys: %q", tags)
		}
	}
	if st, err := os.Stat(filepath.Join(cfg, "mcpscope", "state.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	SealRecord(&d)
	fs := &FileStore{Dir: t.TempDir()}
	if err := fs.Put(d); err != nil {
		t.Fatal(err)
	}
	if err := fs.Mark(d.Handle, Mark{Stream: "post:3", EventID: "e9", Progress: Progress{Updates: 9, Value: 9}}); err != nil {
		t.Fatal(err)
	}
	got, err := fs.Get(d.Handle)
	if err != nil {
		t.Fatal(err)
	}
	if got.Progress.Updates != 9 || !RecordSealed(got) {
		t.Fatalf("a sealed record read back (with a mark applied) is not sealed: %+v", got)
	}
	for name, change := range map[string]func(*Detached){
		"target":     func(d *Detached) { d.Target = "http://evil.example/mcp" },
		"secretRefs": func(d *Detached) { d.SecretRefs = map[string]string{"X-Leak": "env:HOME"} },
		"headers":    func(d *Detached) { d.Headers = map[string]string{"X-A": "b"} },
		"params":     func(d *Detached) { d.Params = json.RawMessage(`{"name":"other"}`) },
		"journal":    func(d *Detached) { d.Journal = "/etc/passwd" },
		"tag":        func(d *Detached) { d.Tag = tagVersion + "forged" },
	} {
		c := got
		change(&c)
		if RecordSealed(c) {
			t.Errorf("a record with its %s changed still reads as sealed", name)
		}
	}
	t.Setenv(EnvStateKey, "another machine's key, not shared")
	if RecordSealed(got) {
		t.Fatal("a record sealed with another key reads as sealed")
	}
	t.Setenv(EnvStateKey, "short")
	if RecordSealed(got) {
		t.Fatal("a too short key verifies")
	}
	if _, err := StateKey(false); err == nil {
		t.Fatal("a too short key is accepted")
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
