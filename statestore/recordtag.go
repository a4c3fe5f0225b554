package statestore

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"mcpscope/internal/xdg"
)

// A record in a shared state store (Redis) can be written by anyone who
// can write to that store, so rejoin reads it as untrusted input. The
// integrity tag says a record was written by an mcpscope holding the
// user's state key: an HMAC-SHA256 over the record's canonical JSON (the
// record as this build marshals it, without the tag and without what the
// store and the progress marks change after it is written). Machines that
// rejoin each other's calls with credentials share the key by copying the
// key file (or setting EnvStateKey the same everywhere).

// EnvStateKey names the environment variable that holds the state key;
// without it the key is the file StateKeyFile (made on first use).
const EnvStateKey = "MCPSCOPE_STATE_KEY"

// minStateKey is the shortest key accepted: 16 bytes of text.
const minStateKey = 16

// tagVersion starts every tag (a later scheme is told apart from it).
const tagVersion = "v1:"

// StateKeyFile is $XDG_CONFIG_HOME/mcpscope/state.key (default
// ~/.config/mcpscope/state.key).
func StateKeyFile() string {
	dir := xdg.ConfigDir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "state.key")
}

// StateKey is the user's key for record tags: EnvStateKey, else the key
// file, which is made (32 random bytes, hex, mode 0600) when create is set
// and there is none yet. Without a key and without create it returns
// errNoStateKey.
func StateKey(create bool) ([]byte, error) {
	if k := strings.TrimSpace(os.Getenv(EnvStateKey)); k != "" {
		if len(k) < minStateKey {
			return nil, fmt.Errorf("$%s is %d characters; a state key needs at least %d (make one with: head -c 32 /dev/urandom | xxd -p -c 64)", EnvStateKey, len(k), minStateKey)
		}
		return []byte(k), nil
	}
	p := StateKeyFile()
	if p == "" {
		return nil, fmt.Errorf("no home folder for the state key file; set $%s", EnvStateKey)
	}
	k, err := readStateKey(p)
	if errors.Is(err, os.ErrNotExist) && create {
		if err := makeStateKey(p); err != nil {
			return nil, err
		}
		k, err = readStateKey(p)
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNoStateKey
	}
	return k, err
}

var errNoStateKey = errors.New("no state key")

func readStateKey(p string) ([]byte, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	k := strings.TrimSpace(string(b))
	if len(k) < minStateKey {
		return nil, fmt.Errorf("state key file %s holds %d characters; a state key needs at least %d (delete the file to have a new one made)", p, len(k), minStateKey)
	}
	return []byte(k), nil
}

// makeStateKey writes a new random key to p, mode 0600. Two processes
// making it at once agree: the key is written to a temporary file and
// linked into place, which fails when p is already there.
func makeStateKey(p string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("state key: %w", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return fmt.Errorf("state key: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".state.key.*.tmp")
	if err != nil {
		return fmt.Errorf("state key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(hex.EncodeToString(raw[:]) + "\n")
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("state key %s: %w", p, werr)
	}
	if err := os.Link(tmp.Name(), p); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("state key %s: %w", p, err)
	}
	return nil
}

// canonicalRecord is d as the tag covers it: without the tag, and without
// what changes after the record is sealed (Updated, which the store sets;
// Progress and LastEventIDs, which progress marks move), times in UTC.
func canonicalRecord(d Detached) ([]byte, error) {
	d.Tag, d.Updated, d.Progress, d.LastEventIDs = "", time.Time{}, Progress{}, nil
	d.Started = d.Started.UTC()
	return json.Marshal(d)
}

func recordTag(key []byte, d Detached) (string, error) {
	b, err := canonicalRecord(d)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("mcpscope record\n"))
	m.Write(b)
	return tagVersion + base64.RawURLEncoding.EncodeToString(m.Sum(nil)), nil
}

// foreignHandles are the records this process rejoined as foreign
// (KeepForeign): written back, they stay untagged.
var foreignHandles sync.Map // handle → struct{}

// KeepForeign makes this process's writes of handle's record unsealed: a
// record that came in foreign (someone else may have written it) is not
// made trusted by being rejoined here and written back.
func KeepForeign(handle string) { foreignHandles.Store(handle, struct{}{}) }

// SealRecord tags d with the user's state key (made on first use). A
// record that cannot be sealed (no key can be had), or that came in
// foreign (KeepForeign), is left untagged: it is rejoined as a foreign one.
func SealRecord(d *Detached) {
	d.Tag = ""
	if _, foreign := foreignHandles.Load(d.Handle); foreign {
		return
	}
	key, err := StateKey(true)
	if err != nil {
		return
	}
	if tag, err := recordTag(key, *d); err == nil {
		d.Tag = tag
	}
}

// RecordSealed reports whether d carries a tag made with the user's state
// key: an mcpscope of this user wrote it. Anything else (no tag, another
// key, a record changed after it was sealed) is foreign.
func RecordSealed(d Detached) bool {
	if !strings.HasPrefix(d.Tag, tagVersion) {
		return false
	}
	key, err := StateKey(false)
	if err != nil {
		return false
	}
	want, err := recordTag(key, d)
	return err == nil && hmac.Equal([]byte(want), []byte(d.Tag))
}
