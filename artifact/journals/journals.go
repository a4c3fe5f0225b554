// Package journals lists the journals mcpscope saved and what each holds:
// when, what target, which era, how many calls, how many failed, how big.
// A summary costs a read of the whole file, so summaries are kept in a
// small cache keyed by path, size and modification time: a second listing
// reads only the journals that changed.
package journals

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"mcpscope/artifact/scan"
	"mcpscope/internal/userfile"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
)

// Summary is what one journal holds.
type Summary struct {
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"modified"`
	Started time.Time `json:"started,omitzero"`
	Target  string    `json:"target"` // redacted (journal reads redact it)
	Era     string    `json:"era,omitempty"`
	Server  string    `json:"server,omitempty"`
	Frames  int       `json:"frames"`
	Calls   int       `json:"calls"`
	Errors  int       `json:"errors"` // calls that ended in an error, a tool error, or lost
	// IndexSize is the bytes of the journal's index file (beside it as
	// <journal>.idx, or in the cache directory): part of what the journal
	// costs on disk.
	IndexSize int64 `json:"index_size,omitempty"`
	// Problem says why the file could not be summarised, or which lines
	// could not be read; the other fields hold what was read.
	Problem string `json:"problem,omitempty"`
}

// List summarises the *.jsonl files in dir, newest first. cache is the file
// summaries are kept in ("" = none). workers bounds the files read at once.
func List(dir, cache string, workers int) ([]Summary, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, err
		}
	}
	old := readCache(cache)
	out := make([]Summary, len(paths))
	var (
		wg   sync.WaitGroup
		work = make(chan int)
	)
	for range max(workers, 1) {
		wg.Go(func() {
			for i := range work {
				out[i] = summary(paths[i], old)
			}
		})
	}
	for i := range paths {
		work <- i
	}
	close(work)
	wg.Wait()
	sort.SliceStable(out, func(i, j int) bool { return newer(out[i], out[j]) })
	writeCache(cache, out)
	return out, nil
}

func newer(a, b Summary) bool {
	ta, tb := a.Started, b.Started
	if ta.IsZero() {
		ta = a.ModTime
	}
	if tb.IsZero() {
		tb = b.ModTime
	}
	return ta.After(tb)
}

// summary is path's summary, from the cache when the file is unchanged.
func summary(path string, cached map[string]Summary) Summary {
	fi, err := os.Stat(path)
	if err != nil {
		return Summary{Path: path, Problem: err.Error()}
	}
	if c, ok := cached[path]; ok && c.Size == fi.Size() && c.ModTime.Equal(fi.ModTime()) {
		c.Target = transport.RedactTarget(c.Target) // an older build cached it as journaled, secrets and all
		c.IndexSize = journal.IndexSize(path)       // written and removed apart from the journal
		return c
	}
	s := Summarize(path, fi)
	s.IndexSize = journal.IndexSize(path)
	return s
}

// Summarize reads the journal at path once (fi is its stat).
func Summarize(path string, fi os.FileInfo) Summary {
	s := Summary{Path: path, Size: fi.Size(), ModTime: fi.ModTime()}
	var in scan.Info
	h, err := scan.File(path, scan.Options{CallEnded: func(_ int, c *session.CallSnapshot) {
		switch session.StateWord(c) {
		case "error", "lost":
			s.Errors++
		}
	}}, func(fr *scan.Frame) error {
		in.Observe(fr)
		return nil
	})
	s.Started, s.Target = h.Started, h.Target
	s.Era, s.Frames, s.Calls = in.Era, in.Frames, in.Calls
	if in.ServerInfo.Name != "" {
		s.Server = strings.TrimSpace(in.ServerInfo.Name + " " + in.ServerInfo.Version)
	}
	var damage *journal.Damage
	switch {
	case errors.As(err, &damage):
		s.Problem = damage.Error()
	case err != nil:
		s.Problem = err.Error()
	}
	return s
}

// cacheFile is the on-disk form of the cache.
type cacheFile struct {
	Format    string    `json:"format"`
	Summaries []Summary `json:"summaries"`
}

const cacheFormat = "mcpscope-journals/1"

func readCache(path string) map[string]Summary {
	m := map[string]Summary{}
	if path == "" {
		return m
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return m
	}
	var c cacheFile
	if json.Unmarshal(b, &c) != nil || c.Format != cacheFormat {
		return m // another version's cache: read the journals again
	}
	for _, s := range c.Summaries {
		m[s.Path] = s
	}
	return m
}

// writeCache keeps the summaries for next time; a cache that cannot be
// written only costs a slower listing, so errors are dropped.
func writeCache(path string, all []Summary) {
	if b, err := json.Marshal(cacheFile{Format: cacheFormat, Summaries: all}); err == nil {
		userfile.WriteCache(path, b)
	}
}

// DefaultCache is where List keeps summaries: $XDG_CACHE_HOME/mcpscope.
func DefaultCache() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "mcpscope", "journals.json")
}
