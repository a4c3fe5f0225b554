package statestore

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"mcpscope/internal/osproc"
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
	return !osproc.Alive(l.Owner.PID)
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
	// Fence is a claim's number: every claim of a name takes one larger
	// than any before it, and a write made under the claim is taken only
	// while no newer claim exists (fenced writes). Shares have none.
	Fence int64 `json:"fence,omitempty"`
}

// FenceValue is what a store keeps as the newest claim of a name: its
// number and its token, so a counter a store lost and began again never
// lets an old holder's write through.
func (l Lease) FenceValue() string { return fmt.Sprintf("%d:%s", l.Fence, l.Token) }

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

// ErrLeaseLost is returned when renewing a lease, or writing under it, that
// is not the caller's any more: another process claimed the name since.
var ErrLeaseLost = errors.New("the lease is not ours any more")

// ErrStoreLost is returned by a fenced write when the store no longer has
// what the claim wrote (its fence, or the call's record): a Redis that
// restarted without persistence, or evicted keys under maxmemory. The
// writer cannot know who holds the call now, so it stops as if it lost.
var ErrStoreLost = errors.New("the state store no longer has the claim on the call")

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

// Fenced are the writes a holder makes under its claim on a call (l, from
// Claim, on CallLease(handle)): each is checked against the newest claim
// of that name in the same atomic step as the write, and refused with
// ErrLeaseLost when another claim came since (the holder was paused or cut
// off past its TTL and someone took over), or ErrStoreLost when the store
// forgot the claim or the record. A claim whose lease merely expired,
// with no newer claim, still writes: nobody else can have acted.
type Fenced interface {
	// PutFenced writes d; unless create, only over an existing record
	// (a record deleted by the call's end is never written back).
	PutFenced(d Detached, l Lease, create bool) error
	// MarkFenced is Mark under l; a missing record is ErrStoreLost.
	MarkFenced(handle string, m Mark, l Lease) error
	// DeleteFenced removes the record and its mark under l.
	DeleteFenced(handle string, l Lease) error
}

// CallLease is the name of the lease on a detached call's record.
func CallLease(handle string) string { return "call:" + handle }

// SessionLease is the name of the lease that every process using an MCP
// session holds: target (redacted, as records keep it) and session id.
func SessionLease(target, sessionID string) string {
	h := sha256.Sum256([]byte(target + "\x00" + sessionID))
	return "session:" + hex.EncodeToString(h[:12])
}

// Held is a lease kept alive by renewal until Release. A claim (not a
// share) also fences the writes made under it (Write): once it is lost —
// another process claimed the name, the store forgot it, or it could not
// be renewed for its whole TTL — Lost is closed and every later Write
// fails, so the holder stops acting on the call at once.
type Held struct {
	name  string
	store Leaser
	mu    sync.Mutex
	lease Lease
	sure  time.Time // when the last claim or renewal that the store took was sent: ours until sure+TTL
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	lostc chan struct{} // closed once lost is set
	lost  *LeaseLostError
	// trouble is told, once per outage, that the store could not be
	// reached (the holder keeps trying until the TTL ends).
	trouble  func(error)
	troubled bool
	// onRelease is called first thing in Release (OnRelease).
	onRelease func()
}

// OnTrouble sets what hears, once per outage, that the store could not be
// reached while the lease is still this holder's.
func (h *Held) OnTrouble(f func(error)) {
	h.mu.Lock()
	h.trouble = f
	h.mu.Unlock()
}

// OnRelease sets what Release calls first, once: a holder's owner forgets
// it there (the session's ClaimCall drops a claim nobody adopted). Set it
// before the Held is shared.
func (h *Held) OnRelease(f func()) { h.onRelease = f }

// troubleAt reports a store that could not be reached (nil: reached again).
func (h *Held) troubleAt(err error) {
	h.mu.Lock()
	f, was := h.trouble, h.troubled
	h.troubled = err != nil
	h.mu.Unlock()
	if f != nil && err != nil && !was {
		f(err)
	}
}

// LeaseLostError says why a holder lost its claim, and who (as far as the
// store can say) holds it now.
type LeaseLostError struct {
	Name   string
	At     time.Time
	Holder *Lease // the claim that replaced it, when the store names one
	Cause  error  // ErrLeaseLost, ErrStoreLost, or the store's error when it could not be reached for the TTL
	TTL    time.Duration
}

func (e *LeaseLostError) Error() string {
	at := e.At.Local().Format("15:04:05")
	switch {
	case e.Holder != nil:
		return fmt.Sprintf("lease on %s lost to %s at %s; the call goes on there", e.Name, e.Holder.Owner, at)
	case errors.Is(e.Cause, ErrLeaseLost):
		return fmt.Sprintf("lease on %s lost at %s: another mcpscope claimed it (and has let it go since); the call goes on on the server", e.Name, at)
	case errors.Is(e.Cause, ErrStoreLost):
		return fmt.Sprintf("lease on %s lost at %s: %v; the call goes on on the server", e.Name, at, e.Cause)
	}
	return fmt.Sprintf("lease on %s lost at %s: it could not be renewed for its whole TTL (%s) (%v), so another mcpscope may hold the call now; the call goes on on the server",
		e.Name, at, e.TTL, e.Cause)
}

func (e *LeaseLostError) Unwrap() error { return e.Cause }

// StoreUnreachable is implemented by a store's errors that mean it could
// not be reached (a write may go through when tried again), as opposed to
// a refusal.
type StoreUnreachable interface{ StoreUnreachable() bool }

// Unreachable says err means the store could not be reached (StoreUnreachable).
func Unreachable(err error) bool {
	var u StoreUnreachable
	return errors.As(err, &u) && u.StoreUnreachable()
}

// Hold claims (or, shared, joins) name in store and renews it every third
// of its TTL until Release.
func Hold(store Leaser, name string, shared bool) (*Held, error) {
	var (
		l   Lease
		err error
	)
	sent := time.Now()
	if shared {
		l, err = store.Share(name)
	} else {
		l, err = store.Claim(name)
		var he *HeldError
		if errors.As(err, &he) && deadHere(he.Holder) {
			// Its holder was killed on this machine: release its lease
			// (only that one: the release compares the token) and claim.
			_ = store.Release(he.Holder)
			sent = time.Now()
			l, err = store.Claim(name)
		}
	}
	if err != nil {
		return nil, err
	}
	h := &Held{name: name, store: store, lease: l, sure: sent, stop: make(chan struct{}), done: make(chan struct{}), lostc: make(chan struct{})}
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
		// The TTL's end is a tick of its own: a renewal that hangs on a
		// store cut off must not keep the holder acting past it.
		end := time.NewTimer(h.until())
		select {
		case <-h.stop:
			end.Stop()
			return
		case <-t.C:
		case <-end.C:
		}
		end.Stop()
		h.mu.Lock()
		l := h.lease
		h.mu.Unlock()
		sent := time.Now()
		err := h.store.Renew(&l)
		switch {
		case err == nil:
			h.mu.Lock()
			h.lease, h.sure = l, sent
			h.mu.Unlock()
			h.troubleAt(nil)
		case errors.Is(err, ErrLeaseLost), errors.Is(err, ErrStoreLost):
			h.lose(err)
			return
		case !h.valid():
			// Not reached for the whole TTL: another may hold it now.
			h.lose(err)
			return
		default:
			h.troubleAt(err)
		}
		// Else the store may be back before the TTL ends: keep trying.
	}
}

// until is how long the lease is surely this holder's from now.
func (h *Held) until() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := h.lease.TTL
	if d <= 0 {
		d = DefaultLeaseTTL
	}
	// Both clocks: the monotonic one stops while the machine sleeps.
	left := d - time.Since(h.sure)
	if w := d - time.Now().Round(0).Sub(h.sure.Round(0)); w < left {
		left = w
	}
	if left < 0 {
		return 0
	}
	return left
}

func (h *Held) valid() bool { return h.until() > 0 }

// lose records why the lease is lost (the first reason stays) and names
// the claim that replaced it, if the store can say.
func (h *Held) lose(cause error) {
	if h.shared() {
		h.mu.Lock()
		if h.lost == nil {
			h.lost = &LeaseLostError{Name: h.name, At: time.Now(), Cause: cause, TTL: h.lease.TTL}
			close(h.lostc)
		}
		h.mu.Unlock()
		return
	}
	e := &LeaseLostError{Name: h.name, At: time.Now(), Cause: cause, TTL: h.lease.TTL}
	if errors.Is(cause, ErrLeaseLost) {
		if hs, err := h.store.Holders(h.name); err == nil {
			for _, l := range hs {
				if !l.Shared && l.Token != h.lease.Token {
					l := l
					e.Holder = &l
				}
			}
		}
	}
	h.mu.Lock()
	if h.lost == nil {
		h.lost = e
		close(h.lostc)
	}
	h.mu.Unlock()
}

func (h *Held) shared() bool { return h.lease.Shared }

// Lease is the lease as last renewed.
func (h *Held) Lease() Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lease
}

// Released is closed once Release has stopped the renewal.
func (h *Held) Released() <-chan struct{} { return h.done }

// Lost is closed once the lease is lost (never for a nil Held).
func (h *Held) Lost() <-chan struct{} {
	if h == nil {
		return nil
	}
	return h.lostc
}

// LostErr is why the lease was lost; nil while it is held.
func (h *Held) LostErr() error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lost == nil {
		return nil
	}
	return h.lost
}

// Write runs a fenced write (one of Fenced's, given the claim) for the
// holder. While the store cannot be reached and the lease is still surely
// this holder's, it tries again (a step is shown only once its mark is
// in); a refusal, or the TTL's end without the store, loses the lease and
// returns the *LeaseLostError. Other errors are returned as they are.
func (h *Held) Write(write func(Lease) error) error {
	if err := h.LostErr(); err != nil {
		return err
	}
	wait := 20 * time.Millisecond
	for {
		err := write(h.Lease())
		switch {
		case err == nil:
			h.troubleAt(nil)
			return nil
		case errors.Is(err, ErrLeaseLost), errors.Is(err, ErrStoreLost):
			h.lose(err)
			return h.LostErr()
		case !Unreachable(err):
			return err
		}
		left := h.until()
		if left <= 0 {
			h.lose(err)
			return h.LostErr()
		}
		h.troubleAt(err)
		if wait > left {
			wait = left
		}
		select {
		case <-time.After(wait):
		case <-h.lostc:
			return h.LostErr()
		}
		if wait < 500*time.Millisecond {
			wait *= 2
		}
	}
}

// Release stops renewing and gives the lease back (its fence with it: a
// later claim starts a new one). Safe on nil and twice.
func (h *Held) Release() {
	if h == nil {
		return
	}
	h.once.Do(func() {
		if h.onRelease != nil {
			h.onRelease()
		}
		close(h.stop)
		<-h.done
		h.mu.Lock()
		l, lost := h.lease, h.lost != nil
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
func CallState(store Store, d Detached) LeaseState {
	if hs, err := store.Holders(CallLease(d.Handle)); err == nil {
		for _, l := range hs {
			if !l.Shared && !deadHere(l) {
				l := l
				return LeaseState{State: "held", Holder: &l}
			}
		}
	}
	if o := d.OwnedBy(); o != nil {
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
