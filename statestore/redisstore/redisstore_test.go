package redisstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"mcpscope/statestore"
	"mcpscope/statestore/redisstore"
	"mcpscope/statestore/storetest"
	"mcpscope/testkit/redistest"
)

// One redis-server for the contract; each case gets its own database.
func TestRedisStoreContract(t *testing.T) {
	srv := redistest.Start(t)
	db := 0
	storetest.Run(t, storetest.Backend{
		Name: "redis",
		New: func(t *testing.T, ttl time.Duration) statestore.Store {
			db++
			s, err := redisstore.Open(redisstore.Options{URL: srv.URL(db % 16), LeaseTTL: ttl})
			if err != nil {
				t.Fatal(err)
			}
			flush(t, srv.URL(db%16))
			t.Cleanup(func() { s.Close() })
			return s
		},
		Leftovers: func(t *testing.T, s statestore.Store) []string {
			return keys(t, srv.URL(db%16))
		},
	})
}

func client(t *testing.T, url string) *redis.Client {
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

func flush(t *testing.T, url string) {
	if err := client(t, url).FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}

func keys(t *testing.T, url string) []string {
	k, err := client(t, url).Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A record outlives a Redis restart (appendonly), and a record nobody
// rejoins expires with the TTL the user set.
func TestRedisRestartKeepsRecordAndStateTTL(t *testing.T) {
	srv := redistest.Start(t)
	s, err := redisstore.Open(redisstore.Options{URL: srv.URL(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Put(statestore.Detached{Handle: "h1", Method: "tools/call", Target: "http://x/mcp"}); err != nil {
		t.Fatal(err)
	}
	srv.Restart(t)
	d, err := s.Get("h1")
	if err != nil || d.Target != "http://x/mcp" {
		t.Fatalf("after a restart: %+v %v", d, err)
	}
	ttl, err := client(t, srv.URL(0)).PTTL(context.Background(), "mcpscope:call:h1").Result()
	if err != nil || ttl <= time.Hour || ttl > redisstore.DefaultStateTTL {
		t.Fatalf("record TTL %v (%v), want about a day", ttl, err)
	}
	short, _ := redisstore.Open(redisstore.Options{URL: srv.URL(0), StateTTL: time.Minute})
	defer short.Close()
	if err := short.Put(statestore.Detached{Handle: "h2"}); err != nil {
		t.Fatal(err)
	}
	if ttl, _ := client(t, srv.URL(0)).PTTL(context.Background(), "mcpscope:call:h2").Result(); ttl > time.Minute || ttl <= 0 {
		t.Fatalf("--state-ttl 1m gave %v", ttl)
	}
}

// Redis unreachable: a Put goes to the local fallback and says where; a
// list or a claim fails at once with the store named and its password
// redacted (but for a record in the fallback, claimed there).
func TestRedisUnreachable(t *testing.T) {
	srv := redistest.Start(t)
	url := "redis://me:hunter2@" + srv.Addr + "/0"
	srv.Shutdown(t)
	local := &statestore.FileStore{Dir: filepath.Join(t.TempDir(), "calls")}
	s, err := redisstore.Open(redisstore.Options{URL: url, Fallback: local, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Put(statestore.Detached{Handle: "h1", Method: "tools/call"})
	var se *statestore.StoredElsewhere
	if !errors.As(err, &se) || !strings.Contains(se.Where, local.Dir) {
		t.Fatalf("put while Redis is down: %v", err)
	}
	if d, err := local.Get("h1"); err != nil || d.Method != "tools/call" {
		t.Fatalf("fallback copy: %+v %v", d, err)
	}
	start := time.Now()
	_, err = s.List()
	var ue *redisstore.UnreachableError
	if !errors.As(err, &ue) || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), srv.Addr) {
		t.Fatalf("list while Redis is down: %v", err)
	}
	if _, err := s.Claim("call:h9"); !errors.As(err, &ue) {
		t.Fatalf("claim while Redis is down: %v", err)
	}
	// h1's record is only in the fallback: claimed there (localclaim.go).
	if l, err := s.Claim("call:h1"); err != nil {
		t.Fatalf("claim of the local copy while Redis is down: %v", err)
	} else if err := s.Release(l); err != nil {
		t.Fatal(err)
	}
	t.Logf("unreachable errors after %v", time.Since(start))
	if strings.Contains(s.String(), "hunter2") {
		t.Fatalf("store name shows the password: %s", s)
	}
}

// A rejoin line printed for a Redis store names the store, so it works
// pasted into another terminal, and never carries the password (the other
// process takes it from REDISCLI_AUTH).
func TestRejoinLineNamesTheStoreWithoutItsPassword(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"redis://127.0.0.1:6390/2", "mcpscope rejoin --state redis://127.0.0.1:6390/2 H-1"},
		{"redis://:s3cret@127.0.0.1:6390/0", "mcpscope rejoin --state redis://127.0.0.1:6390/0 H-1"},
		{"rediss://ops:s3cret@cache.example:6380/1", "mcpscope rejoin --state rediss://ops@cache.example:6380/1 H-1"},
	} {
		s, err := redisstore.Open(redisstore.Options{URL: tc.url})
		if err != nil {
			t.Fatal(err)
		}
		got := statestore.RejoinCommandIn(s, "H-1")
		s.Close()
		if got != tc.want || strings.Contains(got, "s3cret") {
			t.Errorf("%s: rejoin line %q, want %q", tc.url, got, tc.want)
		}
	}
	if got := statestore.RejoinCommandIn(statestore.Default(), "H-1"); got != "mcpscope rejoin H-1" {
		t.Errorf("file store: rejoin line %q, want no --state", got)
	}
}
