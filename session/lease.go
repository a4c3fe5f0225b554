package session

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Claims on a call or a session are leases, never PIDs: a holder renews its
// lease while it runs (every third of the TTL), so a holder killed with
// kill -9 loses it within the TTL, on any machine, and anyone may take over.

// DefaultLeaseTTL is how long a lease lives without renewal.
const DefaultLeaseTTL = 10 * time.Second

// Owner names a process on a machine.
type Owner struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
}

func (o Owner) String() string { return fmt.Sprintf("pid %d on %s", o.PID, o.Host) }

// EnvHost names this machine in leases instead of its hostname (containers
// that all call themselves "localhost").
const EnvHost = "MCPSCOPE_HOST"

// Me is this process.
func Me() Owner {
	h := os.Getenv(EnvHost)
	if h == "" {
		h, _ = os.Hostname()
	}
	if h == "" {
		h = "localhost"
	}
	return Owner{Host: h, PID: os.Getpid()}
}

// deadHere reports whether l's holder is a process of this machine that
// no longer runs: its lease need not be waited out. (A reused pid only
// makes it look alive: then the TTL decides, as for another machine.)
func deadHere(l Lease) bool {
	me := Me()
	if l.Owner.Host != me.Host || l.Owner.PID <= 0 || l.Owner.PID == me.PID {
		return false
	}
	err := syscall.Kill(l.Owner.PID, 0)
	return err != nil && !errors.Is(err, syscall.EPERM)
}

// Lease is one holder's claim on a name, until Expires unless renewed. Only
// the holder (who knows Token) renews or releases it.
type Lease struct {
	Name    string        `json:"name"`
	Owner   Owner         `json:"owner"`
	Token   string        `json:"token"`
	Expires time.Time     `json:"expires"`
	TTL     time.Duration `json:"ttl"`
	Shared  bool          `json:"shared,omitempty"` // one of many holders (a session's users)
}

// Live reports whether the lease has not expired at now.
func (l Lease) Live(now time.Time) bool { return now.Before(l.Expires) }

// NewLease is a lease for this process on name, ttl from now.
func NewLease(name string, ttl time.Duration, shared bool) Lease {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return Lease{Name: name, Owner: Me(), Token: hex.EncodeToString(b[:]), Expires: time.Now().Add(ttl), TTL: ttl, Shared: shared}
}

// HeldError says a name is claimed by another live holder.
type HeldError struct{ Holder Lease }

func (e *HeldError) Error() string {
	return fmt.Sprintf("%s is held by the mcpscope with %s until %s (its lease; it renews it while it runs)",
		e.Holder.Name, e.Holder.Owner, e.Holder.Expires.Local().Format("15:04:05"))
}

// ErrLeaseLost is returned when renewing or releasing a lease that is not
// the caller's any more (it expired and another took it).
var ErrLeaseLost = errors.New("the lease is not ours any more")

// Leaser hands out leases. Names are file-safe ("call:HANDLE",
// "session:HASH").
type Leaser interface {
	// Claim takes name alone for the store's lease TTL; it fails with a
	// *HeldError while another holder's lease on it is live.
	Claim(name string) (Lease, error)
	// Share adds a holder to name (a session: every process that uses it
	// holds one); it never conflicts.
	Share(name string) (Lease, error)
	// Renew extends l by its TTL; ErrLeaseLost when l is not held any more.
	Renew(l *Lease) error
	// Release ends l, if it is still the caller's.
	Release(l Lease) error
	// Holders lists the live leases on name (the claim and the shares).
	Holders(name string) ([]Lease, error)
}

// CallLease is the name of the lease on a detached call's record.
func CallLease(handle string) string { return "call:" + handle }

// SessionLease is the name of the lease that every process using an MCP
// session holds: target (redacted, as records keep it) and session id.
func SessionLease(target, sessionID string) string {
	h := sha256.Sum256([]byte(target + "\x00" + sessionID))
	return "session:" + hex.EncodeToString(h[:12])
}

// Held is a lease kept alive by renewal until Release.
type Held struct {
	name  string
	store Leaser
	mu    sync.Mutex
	lease Lease
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	lost  bool
}

// Hold claims (or, shared, joins) name in store and renews it every third
// of its TTL until Release.
func Hold(store Leaser, name string, shared bool) (*Held, error) {
	var (
		l   Lease
		err error
	)
	if shared {
		l, err = store.Share(name)
	} else {
		l, err = store.Claim(name)
		var he *HeldError
		if errors.As(err, &he) && deadHere(he.Holder) {
			// Its holder was killed on this machine: release its lease
			// (only that one: the release compares the token) and claim.
			_ = store.Release(he.Holder)
			l, err = store.Claim(name)
		}
	}
	if err != nil {
		return nil, err
	}
	h := &Held{name: name, store: store, lease: l, stop: make(chan struct{}), done: make(chan struct{})}
	go h.renew()
	return h, nil
}

func (h *Held) renew() {
	defer close(h.done)
	every := h.lease.TTL / 3
	if every <= 0 {
		every = DefaultLeaseTTL / 3
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		h.mu.Lock()
		l := h.lease
		h.mu.Unlock()
		// A store that cannot be reached now may be back before the
		// lease runs out: keep trying; a lease another took is gone.
		if err := h.store.Renew(&l); errors.Is(err, ErrLeaseLost) {
			h.mu.Lock()
			h.lost = true
			h.mu.Unlock()
			return
		} else if err == nil {
			h.mu.Lock()
			h.lease = l
			h.mu.Unlock()
		}
	}
}

// Lease is the lease as last renewed.
func (h *Held) Lease() Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lease
}

// Release stops renewing and gives the lease back. Safe on nil and twice.
func (h *Held) Release() {
	if h == nil {
		return
	}
	h.once.Do(func() {
		preClaims.CompareAndDelete(strings.TrimPrefix(h.name, "call:"), h)
		close(h.stop)
		<-h.done
		h.mu.Lock()
		l, lost := h.lease, h.lost
		h.mu.Unlock()
		if !lost {
			_ = h.store.Release(l)
		}
	})
}

// LeaseState says how a record's call is held: "held" (a live lease, by
// whom and until when), "expired" (its owner stopped renewing without
// detaching it: killed, or its machine is gone) or "free" (detached).
type LeaseState struct {
	State  string `json:"state"`
	Holder *Lease `json:"holder,omitempty"` // held: the live lease
	Owner  *Owner `json:"owner,omitempty"`  // expired: the owner that stopped renewing
}

// CallState looks up who holds d's call.
func CallState(store StateStore, d Detached) LeaseState {
	if hs, err := store.Holders(CallLease(d.Handle)); err == nil {
		for _, l := range hs {
			if !l.Shared && !deadHere(l) {
				l := l
				return LeaseState{State: "held", Holder: &l}
			}
		}
	}
	if o := d.owner(); o != nil {
		return LeaseState{State: "expired", Owner: o}
	}
	return LeaseState{State: "free"}
}

// SessionUsers lists the live leases of other processes on the MCP session
// (target, sessionID): while there is one, nobody may end that session.
func SessionUsers(store Leaser, target, sessionID string, mine ...Lease) ([]Lease, error) {
	hs, err := store.Holders(SessionLease(target, sessionID))
	if err != nil {
		return nil, err
	}
	var out []Lease
next:
	for _, l := range hs {
		for _, m := range mine {
			if m.Token == l.Token {
				continue next
			}
		}
		if !deadHere(l) {
			out = append(out, l)
		}
	}
	return out, nil
}

// CanRejoin is the one rule for rejoining d (a record of store) in this session (the TUI's r,
// mcpscope rejoin): not while another holder's lease on the call is live
// (the reason names it), not a call this process still runs, and only in a
// connected session of the same server and era whose ids do not collide.
// A call of another MCP session on the same server (one a killed mcpscope
// left) is rejoined in its own session, beside this one.
func (s *Session) CanRejoin(store StateStore, d Detached) (bool, string) {
	if store != nil {
		if st := CallState(store, d); st.State == "held" {
			if st.Holder.Owner == Me() {
				return false, "still attached in this process"
			}
			return false, fmt.Sprintf("held by the mcpscope with %s until %s (its lease)", st.Holder.Owner,
				st.Holder.Expires.Local().Format("15:04:05"))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.t == nil || s.offline || s.info.Closed {
		return false, "this session is not connected"
	}
	if s.opts.Rejoin.Target == "" || d.Target != s.opts.Rejoin.Target {
		return false, "made against another server than this session's"
	}
	if d.Era != "" && s.info.Era != "" && d.Era != s.info.Era {
		return false, "made in the " + d.Era + " era; this session is " + s.info.Era
	}
	for _, c := range s.order {
		if !c.state.Ended() && idKey(c.ID) == idKey(d.RequestID) {
			return false, "its request id is in use by running call " + c.Key
		}
	}
	return true, ""
}
