package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Loss is never silent: a Redis that may evict keys or keep nothing across
// a restart is named the first time a call is stored in it (Health), and a
// lease or record it lost since is explained where the loss shows
// (ExplainLoss): a restart (its run id changed) or evictions.

// Health says how this Redis may lose the calls kept in it, once per
// store (later calls repeat the first answer): an eviction policy other
// than noeviction under a memory limit, and persistence that does not keep
// every write across a restart. It also notes the server's run id and
// eviction count for ExplainLoss.
func (s *Store) Health() []string {
	s.healthOnce.Do(func() { s.health = s.checkHealth() })
	return s.health
}

// serverFacts is what INFO says of the server's identity, evictions and
// persistence.
type serverFacts struct {
	runID   string
	evicted int64
	aof     bool
}

func (s *Store) facts(ctx context.Context) (serverFacts, error) {
	var f serverFacts
	info, err := s.c.Info(ctx, "server", "stats", "persistence").Result()
	if err != nil {
		return f, err
	}
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch k {
		case "run_id":
			f.runID = v
		case "evicted_keys":
			f.evicted, _ = strconv.ParseInt(v, 10, 64)
		case "aof_enabled":
			f.aof = v == "1"
		}
	}
	return f, nil
}

func (s *Store) checkHealth() []string {
	ctx, cancel := s.ctx()
	defer cancel()
	f, err := s.facts(ctx)
	if err != nil {
		return []string{fmt.Sprintf("could not ask %s how it keeps data (INFO: %v): if it evicts keys or restarts without persistence, calls kept there vanish", s, err)}
	}
	s.mu.Lock()
	s.seen = f
	s.mu.Unlock()
	var out []string
	cfg, err := s.c.ConfigGet(ctx, "maxmemory*").Result()
	if err != nil {
		out = append(out, fmt.Sprintf("could not read the eviction policy of %s (CONFIG GET: %v): if it evicts keys under memory pressure, a running call's record, mark or lease can vanish; it should have maxmemory-policy noeviction", s, err))
	} else if p, mm := cfg["maxmemory-policy"], cfg["maxmemory"]; p != "" && p != "noeviction" && mm != "" && mm != "0" {
		out = append(out, fmt.Sprintf("%s may evict keys (maxmemory %s, maxmemory-policy %s): a running call's record, mark or lease can vanish under memory pressure; set maxmemory-policy noeviction", s, mm, p))
	}
	if !f.aof {
		save, err := s.c.ConfigGet(ctx, "save").Result()
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("%s keeps no append-only file, and its snapshot schedule could not be read (%v): a restart may lose the calls kept there; set appendonly yes", s, err))
		case strings.TrimSpace(save["save"]) == "":
			out = append(out, fmt.Sprintf("%s keeps nothing across a restart (no appendonly, no save schedule): a restart loses every call kept there; set appendonly yes", s))
		default:
			out = append(out, fmt.Sprintf("%s keeps only snapshots (save %s, no appendonly): a restart loses the calls written since the last one; set appendonly yes", s, save["save"]))
		}
	}
	return out
}

// ExplainLoss says why a lease or record written to this Redis is gone, as
// far as the server can tell: it restarted since this process first asked
// (its run id changed), or it evicted keys since. "" when neither shows.
func (s *Store) ExplainLoss() string {
	s.Health() // the facts to compare with
	ctx, cancel := s.ctx()
	defer cancel()
	now, err := s.facts(ctx)
	if err != nil {
		return ""
	}
	s.mu.Lock()
	was := s.seen
	s.mu.Unlock()
	switch {
	case was.runID != "" && now.runID != was.runID:
		how := "with no append-only file"
		if now.aof {
			how = "and did not keep it"
		}
		return fmt.Sprintf("%s restarted since (its run id changed) %s", s, how)
	case now.evicted > was.evicted:
		return fmt.Sprintf("%s evicted %d key(s) since (maxmemory-policy): set it to noeviction", s, now.evicted-was.evicted)
	}
	return ""
}
