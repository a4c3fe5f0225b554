package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mcpscope/connect"
	"mcpscope/internal/userfile"
)

// Completing call's TOOL asks the target the line names (--server NAME or
// --url URL, before the tool) for its tools: within toolLookupLimit, with
// no journal and no OAuth login, the answer (or the failure) kept for
// toolCacheTTL in a small file under the user's cache directory, so a
// second TAB, or a dead server, costs nothing.
const (
	toolLookupLimit = 5 * time.Second
	toolCacheTTL    = 30 * time.Second
)

// toolCache is one target's cached tool names.
type toolCache struct {
	At    time.Time   `json:"at"`
	Tools [][2]string `json:"tools"` // name, description's first line
	Err   string      `json:"err,omitempty"`
}

// completeToolNames completes call's first argument with the tools of the
// target f names; nothing without one (a call without a target goes to the
// demo, but a target typed after the tool is not seen yet).
func completeToolNames(f *connFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 || f.server.server == "" && f.server.url == "" {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		sp, err := f.specOf(cmd, "", nil)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, t := range cachedTools(cmd.Context(), sp).Tools {
			if strings.HasPrefix(t[0], toComplete) {
				out = append(out, completion(t[0], t[1]))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// cachedTools is the target's tools: from the cache while it is fresh,
// else asked for and cached.
func cachedTools(ctx context.Context, sp connect.Spec) toolCache {
	path := toolCachePath(sp)
	var c toolCache
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &c) == nil && time.Since(c.At) < toolCacheTTL && time.Since(c.At) >= 0 {
		return c
	}
	c = lookUpTools(ctx, sp)
	writeToolCache(path, c)
	return c
}

// lookUpTools connects to the target and lists its tools, all within
// toolLookupLimit.
func lookUpTools(ctx context.Context, sp connect.Spec) toolCache {
	c := toolCache{At: time.Now()}
	ctx, cancel := context.WithTimeout(ctx, toolLookupLimit)
	defer cancel()
	sp.Journal, sp.NoJournal = "", true
	sp.Timeout, sp.MaxTimeout = toolLookupLimit, toolLookupLimit
	sp.Auth.Disabled = true // a 401 is no list, not a login on TAB
	sp.Notes, sp.Grace, sp.Answers, sp.NoListen = io.Discard, oneShotGrace, nil, true
	s, err := connect.Connect(ctx, sp)
	if err != nil {
		c.Err = err.Error()
		return c
	}
	defer s.Close()
	all, err := s.ListAll(ctx, "tools/list", "tools")
	if err != nil {
		c.Err = err.Error()
		return c
	}
	for _, raw := range all {
		name, desc := listLine(raw, false)
		if name != "" {
			c.Tools = append(c.Tools, [2]string{name, desc})
		}
	}
	return c
}

// toolCachePath names a target's cache file after a hash of what picks
// the server (no secret is written in its name or in it).
func toolCachePath(sp connect.Spec) string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	key, _ := json.Marshal([]any{sp.URL, sp.Command, sp.Shell, sp.Dir, sp.Env, sp.Transport, sp.Era, sp.Headers, sp.Bearer})
	h := sha256.Sum256(key)
	return filepath.Join(d, "mcpscope", "completion", hex.EncodeToString(h[:16])+".json")
}

// writeToolCache keeps c for the next TAB; a cache that cannot be written
// only costs a slower completion, so errors are dropped.
func writeToolCache(path string, c toolCache) {
	if b, err := json.Marshal(c); err == nil {
		userfile.WriteCache(path, b)
	}
}
