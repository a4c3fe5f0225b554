// Package statestore keeps detached calls, their leases and progress marks outside the process.
package statestore

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"mcpscope/internal/filelock"
	"mcpscope/internal/shell"
	"mcpscope/internal/xdg"
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
	// Owner is the process the call is attached to (nil: detached, free
	// to rejoin). It holds the lease CallLease(Handle) while it runs;
	// an owner whose lease is gone was killed.
	Owner  *Owner `json:"owner,omitempty"`
	NextID int64  `json:"nextId,omitempty"` // ids below this were used in the session
	// OwnerPID and SessionPID are what records written before leases
	// said (a process on this machine); read, never written.
	OwnerPID   int `json:"ownerPid,omitempty"`
	SessionPID int `json:"sessionPid,omitempty"`
	// Tag is the record's integrity tag (recordtag.go): an HMAC with the
	// user's state key, so a record someone else wrote reads as foreign.
	Tag string `json:"tag,omitempty"`
	// Fallback is set by a store on a record it read from its local
	// fallback (the folder): Redis could not be reached when the record
	// was written, so it is on this machine only. Never stored nor
	// sealed ("-"): it says where a copy was read from, not what the call is.
	Fallback string `json:"-"`
}

// FallbackLabel is how a record read from a store's local fallback
// (Detached.Fallback) is shown in lists.
const FallbackLabel = "local copy (Redis was unreachable)"

// OwnedBy is the process d's call is attached to (nil: detached), an old
// record's PID read as a process on this host.
func (d Detached) OwnedBy() *Owner {
	if d.Owner != nil {
		return d.Owner
	}
	if d.OwnerPID > 0 {
		return &Owner{Host: Me().Host, PID: d.OwnerPID}
	}
	return nil
}

// Mark is a call's place as of one progress step on its stream: the step's
// event id and the progress with it counted. The process that follows the
// call writes it to the store with every step, before the step is shown,
// so a rejoin anywhere after a kill -9 resumes after the last step shown
// (a full record is written at most every persistEvery).
type Mark struct {
	Stream   string   `json:"stream"`
	EventID  string   `json:"eventId"`
	Progress Progress `json:"progress"`
}

// Apply puts m into d when m is newer than d's own state (more steps: a
// record written after the step already counts it).
func (d *Detached) Apply(m Mark) {
	if m.Stream == "" || m.EventID == "" || m.Progress.Updates <= d.Progress.Updates {
		return
	}
	d.Progress = m.Progress
	d.LastEventIDs = map[string]string{m.Stream: m.EventID}
}

// Store keeps detached calls outside the process.
type Store interface {
	Put(d Detached) error
	// Get and List return records with their newest Mark applied.
	Get(handle string) (Detached, error)
	List() ([]Detached, error)
	// Delete removes a record and its mark.
	Delete(handle string) error
	// Mark keeps m beside handle's record, one cheap write per progress
	// step; it writes nothing when the record is gone (the call ended).
	Mark(handle string, m Mark) error
	// Leases on calls and sessions (lease.go), and the writes fenced by
	// a claim.
	Leaser
	Fenced
	// String names the store for people (a Redis URL with its password
	// redacted, or the folder).
	String() string
}

// LossExplainer is a store that can say why it lost what was written to
// it (a restart, an eviction), for the message that reports the loss.
type LossExplainer interface{ ExplainLoss() string }

// HealthReporter is a store that can say, once, how it may lose calls kept
// in it (a Redis that evicts keys, or keeps nothing across a restart).
type HealthReporter interface{ Health() []string }

// StateArgs is what a store that is not the default adds to a command
// line so that another process reaches it (`--state URL`, with no
// password: that comes from REDISCLI_AUTH).
type StateArgs interface {
	StateArgs() []string
}

// StoredElsewhere is what Put returns when its store could not keep the
// record but another did (Redis unreachable: that Redis's local fallback
// folder, which only the same --state lists and reads): the record is
// safe, and the user is told where.
type StoredElsewhere struct {
	Where string // the store that kept it
	Cause error  // why the first could not
}

func (e *StoredElsewhere) Error() string {
	return fmt.Sprintf("kept in %s instead: %v", e.Where, e.Cause)
}

func (e *StoredElsewhere) Unwrap() error { return e.Cause }

// RejoinArgs is the start of a command line that rejoins from store:
// `mcpscope rejoin`, with its --state when it is not the default.
func RejoinArgs(store Store) []string {
	argv := []string{"mcpscope", "rejoin"}
	if a, ok := store.(StateArgs); ok {
		argv = append(argv, a.StateArgs()...)
	}
	return argv
}

// RejoinCommandIn is the command line that rejoins handle from store: with
// its --state when it is not the default, so the line works pasted into
// another terminal or machine.
func RejoinCommandIn(store Store, handle string) string {
	return shell.Join(append(RejoinArgs(store), handle))
}

// ErrNoSuchCall is returned for an unknown handle.
var ErrNoSuchCall = errors.New("no such detached call")

// FileStore is the embedded Store: one JSON file per call, written to a
// temporary file and renamed (atomic on POSIX), mode 0600, in a 0700 folder.
// Readers never see a half-written record, so two processes can share it.
type FileStore struct {
	Dir      string
	LeaseTTL time.Duration // 0: DefaultLeaseTTL
}

// Default is the file store the commands use without --state: a folder
// under the XDG state dir.
func Default() *FileStore {
	return &FileStore{Dir: filepath.Join(xdg.StateDir(), "calls")}
}

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
	applyMarks(&d, markPath(p))
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

// Delete removes a record.
func (fs *FileStore) Delete(handle string) error {
	p, err := fs.path(handle)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Remove(markPath(p)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// String names the store's folder.
func (fs *FileStore) String() string { return "file store " + fs.Dir }

func (fs *FileStore) ttl() time.Duration {
	if fs.LeaseTTL > 0 {
		return fs.LeaseTTL
	}
	return DefaultLeaseTTL
}

// Leases live beside the records, in <Dir>.leases (the records' folder
// holds records only), one file per holder (<name>.lease for the claim,
// <name>.<token>.share for each sharer), each holding the Lease as JSON.
// Every read-check-write runs under an flock on its .lock, so two
// processes racing for a claim have exactly one winner; a lease file
// whose expiry passed counts as gone.
func (fs *FileStore) leaseDir() string { return filepath.Clean(fs.Dir) + ".leases" }

func leaseFileName(name string) (string, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("bad lease name %q", name)
	}
	return name, nil
}

// locked runs f under the store-wide lease lock.
func (fs *FileStore) locked(f func() error) error {
	if err := os.MkdirAll(fs.leaseDir(), 0o700); err != nil {
		return fmt.Errorf("state store %s: %w", fs.Dir, err)
	}
	lf, err := os.OpenFile(filepath.Join(fs.leaseDir(), ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("state store %s: %w", fs.Dir, err)
	}
	defer lf.Close()
	if err := filelock.Lock(lf); err != nil {
		return fmt.Errorf("state store %s: %w", fs.Dir, err)
	}
	defer filelock.Unlock(lf)
	return f()
}

func (fs *FileStore) readLease(path string) (Lease, bool) {
	var l Lease
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &l) != nil {
		return l, false
	}
	return l, true
}

func (fs *FileStore) writeLease(path string, l Lease) error {
	b, _ := json.Marshal(l)
	return fs.writeFile(path, b)
}

// writeFile replaces path with b (under the lock: one writer at a time).
func (fs *FileStore) writeFile(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("state store %s: %w", fs.Dir, err)
	}
	return os.Rename(tmp, path)
}

func (fs *FileStore) leasePath(l Lease) (string, error) {
	n, err := leaseFileName(l.Name)
	if err != nil {
		return "", err
	}
	if l.Shared {
		return filepath.Join(fs.leaseDir(), n+"."+l.Token+".share"), nil
	}
	return filepath.Join(fs.leaseDir(), n+".lease"), nil
}

// fencePath is where the newest claim of name is kept (Lease.FenceValue).
func (fs *FileStore) fencePath(name string) (string, error) {
	n, err := leaseFileName(name)
	if err != nil {
		return "", err
	}
	return filepath.Join(fs.leaseDir(), n+".fence"), nil
}

// Claim takes name alone unless another holder's lease is live; the claim
// takes the next fence number.
func (fs *FileStore) Claim(name string) (Lease, error) {
	l := NewLease(name, fs.ttl(), false)
	p, err := fs.leasePath(l)
	if err != nil {
		return l, err
	}
	fp, err := fs.fencePath(name)
	if err != nil {
		return l, err
	}
	err = fs.locked(func() error {
		if cur, ok := fs.readLease(p); ok && cur.Live(time.Now()) {
			return &HeldError{Holder: cur}
		}
		var n int64
		if b, err := os.ReadFile(fp); err == nil {
			_, _ = fmt.Sscanf(string(b), "%d:", &n)
		}
		l.Fence = n + 1
		if err := fs.writeFile(fp, []byte(l.FenceValue())); err != nil {
			return err
		}
		return fs.writeLease(p, l)
	})
	return l, err
}

// fenced checks, under the lock, that l is the newest claim of its name.
func (fs *FileStore) fenced(l Lease) error {
	fp, err := fs.fencePath(l.Name)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(fp)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return ErrStoreLost
	case err != nil:
		return fmt.Errorf("state store %s: %w", fs.Dir, err)
	case string(b) != l.FenceValue():
		return ErrLeaseLost
	}
	return nil
}

// PutFenced writes d while l is the newest claim on its call.
func (fs *FileStore) PutFenced(d Detached, l Lease, create bool) error {
	p, err := fs.path(d.Handle)
	if err != nil {
		return err
	}
	return fs.locked(func() error {
		if err := fs.fenced(l); err != nil {
			return err
		}
		if _, err := os.Stat(p); !create && errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w %q: it left the store (the call ended, or the record was forgotten)", ErrNoSuchCall, d.Handle)
		}
		return fs.Put(d)
	})
}

// MarkFenced is Mark while l is the newest claim on the call.
func (fs *FileStore) MarkFenced(handle string, m Mark, l Lease) error {
	p, err := fs.path(handle)
	if err != nil {
		return err
	}
	return fs.locked(func() error {
		if err := fs.fenced(l); err != nil {
			return err
		}
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			return ErrStoreLost // the holder's record is gone
		}
		return fs.Mark(handle, m)
	})
}

// DeleteFenced removes the record while l is the newest claim on the call.
func (fs *FileStore) DeleteFenced(handle string, l Lease) error {
	return fs.locked(func() error {
		if err := fs.fenced(l); err != nil {
			return err
		}
		return fs.Delete(handle)
	})
}

// Share adds this process to name's holders.
func (fs *FileStore) Share(name string) (Lease, error) {
	l := NewLease(name, fs.ttl(), true)
	p, err := fs.leasePath(l)
	if err != nil {
		return l, err
	}
	return l, fs.locked(func() error { return fs.writeLease(p, l) })
}

// Renew extends l if it is still the caller's: a share while its file
// holds l's token; a claim while it is the newest claim of its name (a
// lease that expired with no claim since is taken back).
func (fs *FileStore) Renew(l *Lease) error {
	p, err := fs.leasePath(*l)
	if err != nil {
		return err
	}
	return fs.locked(func() error {
		if l.Shared {
			if cur, ok := fs.readLease(p); !ok || cur.Token != l.Token {
				return ErrLeaseLost
			}
		} else if err := fs.fenced(*l); err != nil {
			return err
		}
		n := *l
		n.Expires = time.Now().Add(n.TTL)
		if err := fs.writeLease(p, n); err != nil {
			return err
		}
		*l = n
		return nil
	})
}

// hasRecord reports whether handle has a record.
func (fs *FileStore) hasRecord(handle string) bool {
	p, err := fs.path(handle)
	if err != nil {
		return false
	}
	_, err = os.Stat(p)
	return err == nil
}

// Release removes l if it is still the caller's (a claim's fence with it,
// once its call has no record).
func (fs *FileStore) Release(l Lease) error {
	p, err := fs.leasePath(l)
	if err != nil {
		return err
	}
	return fs.locked(func() error {
		if !l.Shared && fs.fenced(l) == nil && !fs.hasRecord(strings.TrimPrefix(l.Name, "call:")) {
			// While the call has a record, fence numbers only grow.
			if fp, err := fs.fencePath(l.Name); err == nil {
				_ = os.Remove(fp)
			}
		}
		if cur, ok := fs.readLease(p); ok && cur.Token == l.Token {
			return os.Remove(p)
		}
		return nil
	})
}

// Holders lists the live leases on name; expired ones are swept.
func (fs *FileStore) Holders(name string) ([]Lease, error) {
	n, err := leaseFileName(name)
	if err != nil {
		return nil, err
	}
	var out []Lease
	err = fs.locked(func() error {
		paths, _ := filepath.Glob(filepath.Join(fs.leaseDir(), globEscape(n)+".*"))
		now := time.Now()
		for _, p := range paths {
			if !strings.HasSuffix(p, ".lease") && !strings.HasSuffix(p, ".share") {
				continue
			}
			l, ok := fs.readLease(p)
			if !ok || l.Name != name {
				continue
			}
			if !l.Live(now) {
				os.Remove(p) // its holder is gone
				continue
			}
			out = append(out, l)
		}
		return nil
	})
	return out, err
}

func globEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
}
