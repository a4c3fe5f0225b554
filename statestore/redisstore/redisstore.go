// Package redisstore keeps detached calls and their leases in Redis, so a
// call detached on one machine can be rejoined on any machine that reaches
// the same Redis (mcpscope --state redis://…). It implements the
// statestore.Store contract; the session package stays free of Redis.
//
// Keys (all under "mcpscope:"): call:HANDLE holds a record (JSON, with a TTL
// the user sets: a call nobody rejoins does not stay forever);
// mark:HANDLE the call's place as of its last progress step (statestore.Mark,
// one SET per step, expiring with the record); lease:NAME a claim (SET NX PX; renewed and released only by its holder,
// by a compare-and-set script on its token); share:NAME:TOKEN one user of
// a shared lease (an MCP session); fence:NAME the newest claim of a name
// ("N:TOKEN", N one more than the claim before): every write made under a
// claim checks it in the same script, so a holder paused or cut off past
// its TTL, once another claimed the call, writes nothing.
package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"mcpscope/statestore"
	"mcpscope/transport"
)

// DefaultStateTTL is how long a record of a call nobody rejoins stays.
const DefaultStateTTL = 24 * time.Hour

// DefaultTimeout bounds every dial, read and write: an unreachable Redis
// is an error within it, never a hang.
const DefaultTimeout = 3 * time.Second

const prefix = "mcpscope:"

// Options configure a Store.
type Options struct {
	URL      string        // redis://[user[:password]@]host:port/db, or rediss:// for TLS
	LeaseTTL time.Duration // 0: statestore.DefaultLeaseTTL
	StateTTL time.Duration // 0: DefaultStateTTL
	Timeout  time.Duration // 0: DefaultTimeout
	// Fallback keeps a record when Redis cannot be reached at Put (a
	// detach, a quit): nothing is lost, and the user is told where. It
	// must be this Redis's own folder: the store lists and reads it as
	// part of itself. FallbackRoot makes one.
	Fallback *statestore.FileStore
	// FallbackRoot, when Fallback is nil, is the folder under which this
	// Redis gets its own fallback folder (FallbackDir).
	FallbackRoot string
	// TLS names a CA file and a client certificate for rediss:// (tls.go);
	// the URL's ca=, cert= and cert_key= parameters do the same.
	TLS TLSFiles
}

// Store is the Redis backend of statestore.Store.
type Store struct {
	c        *redis.Client
	name     string // the URL, redacted
	public   string // the URL without its password, for command lines
	leaseTTL time.Duration
	stateTTL time.Duration
	timeout  time.Duration
	fallback *statestore.FileStore

	healthOnce sync.Once
	health     []string
	mu         sync.Mutex
	seen       serverFacts     // as Health first found the server
	local      map[string]bool // tokens of claims taken in the fallback (localclaim.go)
}

var (
	_ statestore.Store          = (*Store)(nil)
	_ statestore.HealthReporter = (*Store)(nil)
	_ statestore.LossExplainer  = (*Store)(nil)
)

// quiet drops go-redis's own log lines: they would write to stderr under
// the TUI, and every failure reaches the caller as an error anyway.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(quiet{}) }

// Open parses o.URL (the password from the URL or REDISCLI_AUTH) and makes
// a client; it connects on first use.
func Open(o Options) (*Store, error) {
	name := transport.RedactURL(o.URL)
	raw, files, public, err := splitTLS(o.URL, o.TLS)
	if err != nil {
		return nil, fmt.Errorf("--state %s: %v", name, err)
	}
	ro, err := redis.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("--state %s: %v (want redis://[user@]host:port/db or rediss://…)", name, redactErr(err, raw))
	}
	if err := files.apply(ro.TLSConfig); err != nil {
		return nil, fmt.Errorf("--state %s: %v", name, err)
	}
	if ro.Password == "" {
		ro.Password = os.Getenv("REDISCLI_AUTH")
	}
	s := &Store{name: name, public: withoutPassword(public), leaseTTL: o.LeaseTTL, stateTTL: o.StateTTL, timeout: o.Timeout, fallback: o.Fallback}
	if s.leaseTTL <= 0 {
		s.leaseTTL = statestore.DefaultLeaseTTL
	}
	if s.fallback == nil && o.FallbackRoot != "" {
		s.fallback = &statestore.FileStore{Dir: filepath.Join(o.FallbackRoot, fallbackName(ro)), LeaseTTL: s.leaseTTL}
	}
	if s.stateTTL <= 0 {
		s.stateTTL = DefaultStateTTL
	}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	ro.DialTimeout, ro.ReadTimeout, ro.WriteTimeout, ro.PoolTimeout = s.timeout, s.timeout, s.timeout, s.timeout
	ro.MaxRetries = 1
	ro.ContextTimeoutEnabled = true
	s.c = redis.NewClient(ro)
	return s, nil
}

// fallbackName names the fallback folder of the Redis ro reaches: a short
// hash of its address and database, the same for every URL that reaches
// that database (redis:// or rediss://, any user, any password), and a
// different one for another Redis or database, so a record kept while
// one Redis was away is listed under that Redis only. A hash rather than
// the address: fixed length and safe in a path (IPv6, odd host names).
func fallbackName(ro *redis.Options) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", strings.ToLower(ro.Addr), ro.DB)))
	return hex.EncodeToString(sum[:6])
}

// FallbackDir is the folder where the store keeps the records Redis could
// not take ("" without a fallback).
func (s *Store) FallbackDir() string {
	if s.fallback == nil {
		return ""
	}
	return s.fallback.Dir
}

// StateArgs is --state with the URL that reaches this store, its password
// left out (another process takes it from REDISCLI_AUTH).
func (s *Store) StateArgs() []string { return []string{"--state", s.public} }

// withoutPassword is raw with the password of its user info removed.
func withoutPassword(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, set := u.User.Password(); !set {
		return raw
	}
	if name := u.User.Username(); name != "" {
		u.User = url.User(name)
	} else {
		u.User = nil
	}
	return u.String()
}

// redactErr keeps a password out of a parse error that quotes the URL.
func redactErr(err error, raw string) string {
	return strings.ReplaceAll(err.Error(), raw, transport.RedactURL(raw))
}

// String names the store, password redacted.
func (s *Store) String() string { return "Redis " + s.name }

// Close lets the client's connections go.
func (s *Store) Close() error { return s.c.Close() }

// Ping checks Redis answers, within the store's timeout.
func (s *Store) Ping() error {
	ctx, cancel := s.ctx()
	defer cancel()
	return s.wrap("reach", s.c.Ping(ctx).Err())
}

func (s *Store) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 2*s.timeout)
}

// UnreachableError is Redis not answering: the store is named (password
// redacted) and what to do next said.
type UnreachableError struct {
	Store string
	Op    string
	Err   error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("state store %s: could not %s: %v (is redis-server running and reachable? check --state or MCPSCOPE_STATE, and REDISCLI_AUTH)",
		e.Store, e.Op, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// StoreUnreachable says a write may go through when tried again.
func (e *UnreachableError) StoreUnreachable() bool { return true }

func (s *Store) wrap(op string, err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return err
	}
	return &UnreachableError{Store: s.name, Op: op, Err: err}
}

func checkName(kind, n string) error {
	if n == "" || strings.ContainsAny(n, "/\\*?[] \t\r\n") || strings.HasPrefix(n, ".") {
		return fmt.Errorf("bad %s %q", kind, n)
	}
	return nil
}

func callKey(handle string) string { return prefix + "call:" + handle }

func markKey(handle string) string { return prefix + "mark:" + handle }

// markScript sets KEYS[2] (a mark) only while KEYS[1] (its record) exists,
// expiring with it: a mark never outlives its call's record. This and
// the scripts below are made on first use: NewScript hashes its source,
// which every start of every command paid for in init.
var markScript = sync.OnceValue(func() *redis.Script {
	return redis.NewScript(`
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then return 0 end
if ttl > 0 then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ttl)
else
  redis.call('SET', KEYS[2], ARGV[1])
end
return 1`)
})

// Mark writes m beside handle's record: one round trip per progress step.
func (s *Store) Mark(handle string, m statestore.Mark) error {
	if err := checkName("call handle", handle); err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	err = markScript().Run(ctx, s.c, []string{callKey(handle), markKey(handle)}, b).Err()
	if err != nil && !errors.Is(err, redis.Nil) {
		if s.fallback != nil && s.fallback.Mark(handle, m) == nil {
			if _, ferr := s.fallback.Get(handle); ferr == nil {
				return nil // the record is in the fallback: so is its mark
			}
		}
		return s.wrap("mark the progress of call "+handle, err)
	}
	return nil
}

// applyMark puts a mark read from Redis (a string, or nil) into d.
func applyMark(d *statestore.Detached, v any) {
	var m statestore.Mark
	if str, ok := v.(string); ok && json.Unmarshal([]byte(str), &m) == nil {
		d.Apply(m)
	}
}

// Put writes d with the store's record TTL. When Redis cannot be reached
// and a fallback is set, d goes there, and the error says so.
func (s *Store) Put(d statestore.Detached) error {
	if err := checkName("call handle", d.Handle); err != nil {
		return err
	}
	d.Updated = time.Now()
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	return s.written(d, s.wrap("write the record of call "+d.Handle, s.c.Set(ctx, callKey(d.Handle), b, s.stateTTL).Err()))
}

// written is what a record write's outcome err means with a fallback: a
// write that went in lets go of an older local copy; one that could not
// reach Redis goes to the fallback (StoredElsewhere); a refusal stays.
func (s *Store) written(d statestore.Detached, err error) error {
	var ue *UnreachableError
	if !errors.As(err, &ue) {
		if err == nil && s.fallback != nil {
			_ = s.fallback.Delete(d.Handle) // an older copy kept while Redis was away
		}
		return err
	}
	if s.fallback == nil {
		return err
	}
	if ferr := s.fallback.Put(d); ferr != nil {
		return fmt.Errorf("%w; the local fallback failed too: %v", err, ferr)
	}
	return &statestore.StoredElsewhere{Where: s.fallback.String(), Cause: err}
}

// Get reads one record (or its fallback copy, Fallback set).
func (s *Store) Get(handle string) (statestore.Detached, error) {
	var d statestore.Detached
	if err := checkName("call handle", handle); err != nil {
		return d, err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	vals, err := s.c.MGet(ctx, callKey(handle), markKey(handle)).Result()
	if err == nil && vals[0] == nil {
		err = redis.Nil
	}
	if errors.Is(err, redis.Nil) {
		if s.fallback != nil {
			if d, ferr := s.fallback.Get(handle); ferr == nil {
				d.Fallback = s.fallback.Dir
				return d, nil
			}
		}
		return d, fmt.Errorf("%w %q in %s (see: mcpscope rejoin)", statestore.ErrNoSuchCall, handle, s)
	}
	if err != nil {
		if s.fallback != nil {
			if d, ferr := s.fallback.Get(handle); ferr == nil {
				d.Fallback = s.fallback.Dir // Redis unreachable: the copy kept here
				return d, nil
			}
		}
		return d, s.wrap("read call "+handle, err)
	}
	str, _ := vals[0].(string)
	if err := json.Unmarshal([]byte(str), &d); err != nil {
		return d, fmt.Errorf("the record of call %s in %s is damaged: %w", handle, s, err)
	}
	applyMark(&d, vals[1])
	return d, nil
}

// scan lists the keys matching pattern.
func (s *Store) scan(ctx context.Context, pattern string) ([]string, error) {
	var keys []string
	it := s.c.Scan(ctx, 0, pattern, 200).Iterator()
	for it.Next(ctx) {
		keys = append(keys, it.Val())
	}
	return keys, it.Err()
}

// List returns every record, oldest first (and those the fallback kept
// while Redis was away, Fallback set). Damaged records are skipped.
func (s *Store) List() ([]statestore.Detached, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	keys, err := s.scan(ctx, prefix+"call:*")
	if err != nil {
		// The copies this machine kept are still listed, with the error:
		// the caller says the list is partial.
		return s.fallbackList(nil), s.wrap("list calls", err)
	}
	var out []statestore.Detached
	seen := map[string]bool{}
	if len(keys) > 0 {
		vals, err := s.c.MGet(ctx, keys...).Result()
		if err != nil {
			return nil, s.wrap("list calls", err)
		}
		marks := make([]string, len(keys))
		for i, k := range keys {
			marks[i] = markKey(strings.TrimPrefix(k, prefix+"call:"))
		}
		mvals, err := s.c.MGet(ctx, marks...).Result()
		if err != nil {
			return nil, s.wrap("list calls", err)
		}
		for i, v := range vals {
			str, ok := v.(string)
			var d statestore.Detached
			if ok && json.Unmarshal([]byte(str), &d) == nil {
				applyMark(&d, mvals[i])
				out = append(out, d)
				seen[d.Handle] = true
			}
		}
	}
	out = append(out, s.fallbackList(seen)...)
	sortByStart(out)
	return out, nil
}

// fallbackList is the records in the fallback folder but those in seen,
// labelled as local copies.
func (s *Store) fallbackList(seen map[string]bool) []statestore.Detached {
	if s.fallback == nil {
		return nil
	}
	var out []statestore.Detached
	local, _ := s.fallback.List()
	for _, d := range local {
		if !seen[d.Handle] {
			d.Fallback = s.fallback.Dir
			out = append(out, d)
		}
	}
	sortByStart(out)
	return out
}

func sortByStart(l []statestore.Detached) {
	for i := 1; i < len(l); i++ {
		for j := i; j > 0 && l[j].Started.Before(l[j-1].Started); j-- {
			l[j], l[j-1] = l[j-1], l[j]
		}
	}
}

// Delete removes a record (and a fallback copy).
func (s *Store) Delete(handle string) error {
	if err := checkName("call handle", handle); err != nil {
		return err
	}
	if s.fallback != nil {
		_ = s.fallback.Delete(handle)
	}
	ctx, cancel := s.ctx()
	defer cancel()
	return s.wrap("delete call "+handle, s.c.Del(ctx, callKey(handle), markKey(handle)).Err())
}

func leaseKey(l statestore.Lease) string {
	if l.Shared {
		return prefix + "share:" + l.Name + ":" + l.Token
	}
	return prefix + "lease:" + l.Name
}

func fenceKey(name string) string { return prefix + "fence:" + name }

// claimScript takes KEYS[1] (a lease) when no live lease holds it, with
// the next fence number in KEYS[2]: {1, N} taken, {0, lease} held.
var claimScript = sync.OnceValue(func() *redis.Script {
	return redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then return {0, cur} end
local n = 0
local f = redis.call('GET', KEYS[2])
if f then n = tonumber(string.match(f, '^(%d+):')) or 0 end
n = n + 1
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SET', KEYS[2], n .. ':' .. ARGV[3], 'PX', ARGV[4])
return {1, n}`)
})

// fenceTTL is how long a fence lives without a renewal: as long as a
// record, and never shorter than a lease.
func (s *Store) fenceTTL() time.Duration {
	if s.stateTTL > s.leaseTTL {
		return s.stateTTL
	}
	return s.leaseTTL
}

// Claim takes name alone, with the next fence number. The loser is told
// who holds it.
func (s *Store) Claim(name string) (statestore.Lease, error) {
	l := statestore.NewLease(name, s.leaseTTL, false)
	if err := checkName("lease", name); err != nil {
		return l, err
	}
	b, _ := json.Marshal(l)
	ctx, cancel := s.ctx()
	defer cancel()
	if held := s.heldLocally(name); held != nil {
		return l, &statestore.HeldError{Holder: *held}
	}
	res, err := claimScript().Run(ctx, s.c, []string{leaseKey(l), fenceKey(name)}, b, s.leaseTTL.Milliseconds(), l.Token,
		s.fenceTTL().Milliseconds()).Slice()
	if err != nil {
		return s.claimLocal(name, s.wrap("claim "+name, err))
	}
	if len(res) != 2 {
		return l, fmt.Errorf("claim %s in %s: unexpected answer %v", name, s, res)
	}
	if ok, _ := res[0].(int64); ok == 1 {
		l.Fence, _ = res[1].(int64)
		return l, nil
	}
	var held statestore.Lease
	if str, _ := res[1].(string); json.Unmarshal([]byte(str), &held) != nil {
		held = statestore.Lease{Name: name}
	}
	return l, &statestore.HeldError{Holder: held}
}

// fenceCheck is the start of every fenced script: KEYS[n] holds the
// claim's fence value ARGV[1], else -2 (the store lost it) or 0 (another
// claimed since).
func fenceCheck(n int) string {
	return fmt.Sprintf(`
local f = redis.call('GET', KEYS[%d])
if not f then return -2 end
if f ~= ARGV[1] then return 0 end
`, n)
}

// fencedResult turns a fenced script's answer into the contract's error.
func (s *Store) fencedResult(op string, n int, err error) error {
	switch {
	case err != nil:
		return s.wrap(op, err)
	case n == 0:
		return statestore.ErrLeaseLost
	case n == -2:
		return statestore.ErrStoreLost
	case n == -3:
		return statestore.ErrNoSuchCall
	}
	return nil
}

// putFencedScript writes KEYS[2] (a record) under the fence KEYS[1];
// unless ARGV[4] is 1, only over an existing record (-3).
var putFencedScript = sync.OnceValue(func() *redis.Script {
	return redis.NewScript(fenceCheck(1) + `
if ARGV[4] ~= '1' and redis.call('EXISTS', KEYS[2]) == 0 then return -3 end
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
return 1`)
})

// PutFenced writes d while l is the newest claim on its call. When Redis
// cannot be reached and a fallback is set, d goes there, as with Put.
func (s *Store) PutFenced(d statestore.Detached, l statestore.Lease, create bool) error {
	if err := checkName("call handle", d.Handle); err != nil {
		return err
	}
	if s.isLocal(l) {
		return s.fallback.PutFenced(d, l, create)
	}
	d.Updated = time.Now()
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	flag := "0"
	if create || s.inFallback(d.Handle) {
		// A record kept in the fallback exists for the contract: the
		// claim's first write (a rejoin's) moves it into Redis, and the
		// success lets go of the local copy (written).
		flag = "1"
	}
	ctx, cancel := s.ctx()
	defer cancel()
	n, err := putFencedScript().Run(ctx, s.c, []string{fenceKey(l.Name), callKey(d.Handle)}, l.FenceValue(), b,
		s.stateTTL.Milliseconds(), flag).Int()
	err = s.fencedResult("write the record of call "+d.Handle, n, err)
	if errors.Is(err, statestore.ErrNoSuchCall) {
		return fmt.Errorf("%w %q in %s: it left the store (the call ended, or the record was forgotten)", statestore.ErrNoSuchCall, d.Handle, s)
	}
	return s.written(d, err)
}

// inFallback reports whether handle's record is in the fallback folder.
func (s *Store) inFallback(handle string) bool {
	if s.fallback == nil {
		return false
	}
	_, err := s.fallback.Get(handle)
	return err == nil
}

// markFencedScript is markScript under the fence KEYS[3]; a missing
// record is -2 (the store lost it: the holder's record cannot end by
// itself).
var markFencedScript = sync.OnceValue(func() *redis.Script {
	return redis.NewScript(fenceCheck(3) + `
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then return -2 end
if ttl > 0 then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ttl)
else
  redis.call('SET', KEYS[2], ARGV[2])
end
return 1`)
})

// MarkFenced is Mark while l is the newest claim on the call: one round
// trip per progress step, as Mark.
func (s *Store) MarkFenced(handle string, m statestore.Mark, l statestore.Lease) error {
	if err := checkName("call handle", handle); err != nil {
		return err
	}
	if s.isLocal(l) {
		return s.fallback.MarkFenced(handle, m, l)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	n, err := markFencedScript().Run(ctx, s.c, []string{callKey(handle), markKey(handle), fenceKey(l.Name)}, l.FenceValue(), b).Int()
	return s.fencedResult("mark the progress of call "+handle, n, err)
}

// deleteFencedScript deletes a record and its mark under the fence KEYS[3].
var deleteFencedScript = sync.OnceValue(func() *redis.Script {
	return redis.NewScript(fenceCheck(3) + `
redis.call('DEL', KEYS[1], KEYS[2])
return 1`)
})

// DeleteFenced removes a record (and a fallback copy) while l is the
// newest claim on the call.
func (s *Store) DeleteFenced(handle string, l statestore.Lease) error {
	if err := checkName("call handle", handle); err != nil {
		return err
	}
	if s.isLocal(l) {
		return s.fallback.DeleteFenced(handle, l)
	}
	ctx, cancel := s.ctx()
	defer cancel()
	n, err := deleteFencedScript().Run(ctx, s.c, []string{callKey(handle), markKey(handle), fenceKey(l.Name)}, l.FenceValue()).Int()
	if err = s.fencedResult("delete call "+handle, n, err); err == nil && s.fallback != nil {
		_ = s.fallback.Delete(handle)
	}
	return err
}

// Share adds this process to name's holders.
func (s *Store) Share(name string) (statestore.Lease, error) {
	l := statestore.NewLease(name, s.leaseTTL, true)
	if err := checkName("lease", name); err != nil {
		return l, err
	}
	b, _ := json.Marshal(l)
	ctx, cancel := s.ctx()
	defer cancel()
	return l, s.wrap("share "+name, s.c.Set(ctx, leaseKey(l), b, s.leaseTTL).Err())
}

// renewScript extends a share only while KEYS[1] holds the caller's token.
var renewScript = sync.OnceValue(func() *redis.Script {
	return redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local ok, l = pcall(cjson.decode, v)
if not ok or l['token'] ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`)
})

// renewClaimScript extends a claim (KEYS[2]) while its fence (KEYS[1]) is
// the caller's: a lease that expired with no claim since is taken back.
var renewClaimScript = sync.OnceValue(func() *redis.Script {
	return redis.NewScript(fenceCheck(1) + `
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`)
})

// releaseScript deletes a lease only while KEYS[1] holds the caller's
// token, and a claim's fence (KEYS[2]) while it is the caller's and its
// call has no record (KEYS[3]) left: while one is, fence numbers only grow.
var releaseScript = sync.OnceValue(func() *redis.Script {
	return redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v then
  local ok, l = pcall(cjson.decode, v)
  if ok and l['token'] == ARGV[1] then redis.call('DEL', KEYS[1]) end
end
if KEYS[2] and redis.call('GET', KEYS[2]) == ARGV[2] and redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('DEL', KEYS[2])
end
return 1`)
})

// Renew extends l by its TTL if it is still the caller's.
func (s *Store) Renew(l *statestore.Lease) error {
	if s.isLocal(*l) {
		return s.fallback.Renew(l)
	}
	n := *l
	n.Expires = time.Now().Add(n.TTL)
	b, _ := json.Marshal(n)
	ctx, cancel := s.ctx()
	defer cancel()
	if !n.Shared {
		r, err := renewClaimScript().Run(ctx, s.c, []string{fenceKey(n.Name), leaseKey(n)}, n.FenceValue(), b, n.TTL.Milliseconds(),
			s.fenceTTL().Milliseconds()).Int()
		if err := s.fencedResult("renew "+n.Name, r, err); err != nil {
			return err
		}
		*l = n
		return nil
	}
	ok, err := renewScript().Run(ctx, s.c, []string{leaseKey(n)}, n.Token, b, n.TTL.Milliseconds()).Int()
	if err != nil {
		return s.wrap("renew "+n.Name, err)
	}
	if ok != 1 {
		return statestore.ErrLeaseLost
	}
	*l = n
	return nil
}

// Release ends l if it is still the caller's.
func (s *Store) Release(l statestore.Lease) error {
	if s.isLocal(l) {
		s.mu.Lock()
		delete(s.local, l.Token)
		s.mu.Unlock()
		return s.fallback.Release(l)
	}
	ctx, cancel := s.ctx()
	defer cancel()
	keys := []string{leaseKey(l)}
	if !l.Shared {
		keys = append(keys, fenceKey(l.Name), callKey(strings.TrimPrefix(l.Name, "call:")))
	}
	return s.wrap("release "+l.Name, releaseScript().Run(ctx, s.c, keys, l.Token, l.FenceValue()).Err())
}

// Holders lists the live leases on name: its claim and its shares.
func (s *Store) Holders(name string) ([]statestore.Lease, error) {
	if err := checkName("lease", name); err != nil {
		return nil, err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	keys, err := s.scan(ctx, prefix+"share:"+name+":*")
	if err != nil {
		if s.localCall(name) != "" {
			return s.fallback.Holders(name) // Redis away: claims are taken there
		}
		return nil, s.wrap("list the holders of "+name, err)
	}
	keys = append(keys, prefix+"lease:"+name)
	vals, err := s.c.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, s.wrap("list the holders of "+name, err)
	}
	var out []statestore.Lease
	for _, v := range vals {
		str, ok := v.(string)
		var l statestore.Lease
		if ok && json.Unmarshal([]byte(str), &l) == nil && l.Name == name {
			out = append(out, l)
		}
	}
	if s.localCall(name) != "" {
		local, _ := s.fallback.Holders(name) // claimed here while Redis was away
		out = append(out, local...)
	}
	return out, nil
}
