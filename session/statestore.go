package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Detached is the persisted state of a call that outlives its process, enough
// for another mcpscope to rejoin it. Secrets are stored by reference
// (SecretRefs: header → "env:NAME"), never by value.
type Detached struct {
	Handle          string            `json:"handle"` // file-safe id of this record
	Target          string            `json:"target"` // endpoint URL (or command, for tasks over stdio)
	Transport       string            `json:"transport"`
	Headers         map[string]string `json:"headers,omitempty"`
	SecretRefs      map[string]string `json:"secretRefs,omitempty"`
	SessionID       string            `json:"sessionId,omitempty"`
	ProtocolVersion string            `json:"protocolVersion,omitempty"`
	Era             string            `json:"era,omitempty"`
	RequestID       json.RawMessage   `json:"requestId"`
	Method          string            `json:"method"`
	Name            string            `json:"name,omitempty"`
	Params          json.RawMessage   `json:"params,omitempty"`
	ProgressToken   json.RawMessage   `json:"progressToken,omitempty"`
	LastEventIDs    map[string]string `json:"lastEventIds,omitempty"` // stream key → last SSE id seen
	TaskID          string            `json:"taskId,omitempty"`
	Progress        Progress          `json:"progress"`
	Started         time.Time         `json:"started"`
	Updated         time.Time         `json:"updated"`
	Journal         string            `json:"journal,omitempty"`
	OwnerPID        int               `json:"ownerPid,omitempty"`
	SessionPID      int               `json:"sessionPid,omitempty"` // the process whose MCP session this is (it may DELETE it)
	NextID          int64             `json:"nextId,omitempty"`     // ids below this were used in the session
}

// Alive reports whether the process that owns the record still runs (then
// the call is attached there, not waiting for a rejoin).
func (d Detached) Alive() bool {
	return d.OwnerPID > 0 && d.OwnerPID != os.Getpid() && processAlive(d.OwnerPID)
}

// StateStore keeps detached calls outside the process.
type StateStore interface {
	Put(d Detached) error
	Get(handle string) (Detached, error)
	List() ([]Detached, error)
	Delete(handle string) error
	// Claim marks a record as being rejoined by this process; it fails while
	// another live process holds it. Release undoes it.
	Claim(handle string) (release func(), err error)
}

// ErrNoSuchCall is returned for an unknown handle.
var ErrNoSuchCall = errors.New("no such detached call")

// FileStore is the embedded StateStore: one JSON file per call, written to a
// temporary file and renamed (atomic on POSIX), mode 0600, in a 0700 folder.
// Readers never see a half-written record, so two processes can share it.
type FileStore struct{ Dir string }

// DefaultStateStore lives under the XDG state dir.
func DefaultStateStore() *FileStore { return &FileStore{Dir: filepath.Join(StateDir(), "calls")} }

func (fs *FileStore) path(handle string) (string, error) {
	if handle == "" || strings.ContainsAny(handle, `/\`) || strings.HasPrefix(handle, ".") {
		return "", fmt.Errorf("bad call handle %q", handle)
	}
	return filepath.Join(fs.Dir, handle+".json"), nil
}

// Put writes d atomically.
func (fs *FileStore) Put(d Detached) error {
	p, err := fs.path(d.Handle)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(fs.Dir, 0o700); err != nil {
		return fmt.Errorf("state store %s: %w", fs.Dir, err)
	}
	d.Updated = time.Now()
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(fs.Dir, "."+d.Handle+".*.tmp")
	if err != nil {
		return fmt.Errorf("state store %s: %w", fs.Dir, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("state store write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// Get reads one record.
func (fs *FileStore) Get(handle string) (Detached, error) {
	var d Detached
	p, err := fs.path(handle)
	if err != nil {
		return d, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return d, fmt.Errorf("%w %q (see: mcpscope rejoin)", ErrNoSuchCall, handle)
	}
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("state file %s is damaged: %w", p, err)
	}
	return d, nil
}

// List returns every record, oldest first. Damaged files are skipped.
func (fs *FileStore) List() ([]Detached, error) {
	ents, err := os.ReadDir(fs.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Detached
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		if d, err := fs.Get(strings.TrimSuffix(name, ".json")); err == nil {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out, nil
}

// Delete removes a record (and its claim).
func (fs *FileStore) Delete(handle string) error {
	p, err := fs.path(handle)
	if err != nil {
		return err
	}
	os.Remove(p + ".lock")
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Claim takes <handle>.json.lock with O_EXCL. A lock whose process is gone
// (a crashed or killed mcpscope) is stale and taken over.
func (fs *FileStore) Claim(handle string) (func(), error) {
	p, err := fs.path(handle)
	if err != nil {
		return nil, err
	}
	lock := p + ".lock"
	for attempt := 0; attempt < 2; attempt++ {
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
			return func() { os.Remove(lock) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		b, _ := os.ReadFile(lock)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if pid > 0 && pid != os.Getpid() && processAlive(pid) {
			return nil, fmt.Errorf("call %s is being rejoined by another mcpscope (pid %d)", handle, pid)
		}
		os.Remove(lock) // stale: its owner is gone
	}
	return nil, fmt.Errorf("could not claim call %s", handle)
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
