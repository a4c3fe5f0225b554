package hosts

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"mcpscope/internal/xdg"
)

// Which entries run through mcpscope proxy, as listings show them: the
// entries whose args are proxy --name NAME -- …, when their command is an
// mcpscope binary or mcpscope recorded the wrap (see Wrap).

// Wrapping says an entry runs mcpscope proxy in front of the server.
type Wrapping struct {
	Inner  []string  `json:"inner"`            // the server's own command and arguments
	Backup string    `json:"backup,omitempty"` // the file as it was before wrap (from the record)
	At     time.Time `json:"at,omitzero"`
}

// WrapRecord is what mcpscope keeps about one wrap.
type WrapRecord struct {
	Host   string    `json:"host"`
	Name   string    `json:"name"`
	File   string    `json:"file"`
	Path   []string  `json:"path"` // the keys from the file's root to the entry
	Backup string    `json:"backup"`
	At     time.Time `json:"at"`
}

// RecordsFile is where wraps are recorded.
func RecordsFile() string { return filepath.Join(xdg.StateDir(), "wrapped.json") }

// proxied is the server's own command line when args are mcpscope proxy's.
func proxied(command string, args []string) ([]string, bool) {
	if command == "" || len(args) < 5 || args[0] != "proxy" || args[1] != "--name" || args[3] != "--" {
		return nil, false
	}
	return slices.Clone(args[4:]), true
}

// markWrapped sets Wrapped on entries that run mcpscope proxy: recorded
// wraps, and entries whose command is an mcpscope binary.
func (c *Catalog) markWrapped() {
	recs, err := loadRecords()
	if err != nil {
		c.Problems = append(c.Problems, Problem{Host: Mcpscope, File: RecordsFile(), Err: err})
	}
	used := make([]bool, len(recs))
	for i := range c.Servers {
		s := &c.Servers[i]
		inner, ok := proxied(s.Command, s.Args)
		if !ok || s.Kind != "stdio" {
			continue
		}
		j := slices.IndexFunc(recs, func(r WrapRecord) bool { return r.File == s.File && slices.Equal(r.Path, s.path) })
		if j < 0 && !strings.HasPrefix(filepath.Base(s.Command), "mcpscope") {
			continue
		}
		s.Wrapped = &Wrapping{Inner: inner}
		if j >= 0 {
			used[j] = true
			s.Wrapped.Backup, s.Wrapped.At = recs[j].Backup, recs[j].At
		}
	}
	read := map[string]bool{}
	for _, p := range c.Places {
		read[p.File] = p.Found
	}
	for j, r := range recs {
		if !used[j] && read[r.File] {
			c.StaleWraps = append(c.StaleWraps, r)
		}
	}
}

func loadRecords() ([]WrapRecord, error) {
	b, err := os.ReadFile(RecordsFile())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the wrap records: %w", err)
	}
	var rs []WrapRecord
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("cannot parse the wrap records (%v): remove the file to start afresh; unwrap still finds the backups next to the files", err)
	}
	return rs, nil
}
