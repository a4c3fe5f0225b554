package session

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"mcpscope/transport"
)

// MaxListPages bounds how many pages of one list are fetched: a server that
// keeps sending NextCursor does not keep mcpscope busy forever.
const MaxListPages = 1000

// Listing gathers every page of a list method (tools/list, resources/list,
// …), following NextCursor. Each page is an ordinary call, visible like any
// other. It never runs by itself: Step advances it without waiting (for
// the UI, which polls), Wait drives it to the end.
type Listing struct {
	Method, Field string

	s     *Session
	mu    sync.Mutex
	cur   *Call // the page in flight; nil once over
	items []json.RawMessage
	pages int
	err   error
}

// List asks for the first page of method and returns at once; the items
// are what each page holds under field ("tools", "resourceTemplates", …).
func (s *Session) List(method, field string) *Listing {
	if s.offline {
		// What the session saw is the catalog (a journal read back, a
		// host's session watched); a session that cannot send asks nothing.
		if l, ok := s.recordedListing(method, field); ok || s.sendsNothing() {
			if !ok {
				why := "nothing is sent from a journal read back"
				if s.t != nil {
					why = "the proxy puts no request of mcpscope's into the host's session"
				}
				l = &Listing{Method: method, Field: field, s: s, err: fmt.Errorf("no %s answer in the frames seen (%s)", method, why)}
			}
			return l
		}
	}
	l := &Listing{Method: method, Field: field, s: s}
	l.cur = s.Call(method, nil)
	return l
}

// Step takes in the page in flight once it has ended and asks for the next
// one. It reports whether the listing is over; it never waits.
func (l *Listing) Step() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur == nil {
		return true
	}
	select {
	case <-l.cur.Done():
	default:
		return false
	}
	sn := l.cur.Snapshot()
	l.cur = nil
	if err := sn.Err(); err != nil {
		l.err = err
		return true
	}
	var page map[string]json.RawMessage
	if err := json.Unmarshal(sn.Result, &page); err != nil {
		l.err = fmt.Errorf("%s: the result is not an object: %w", l.Method, err)
		return true
	}
	var items []json.RawMessage
	if raw, ok := page[l.Field]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &items); err != nil {
			l.err = fmt.Errorf("%s: %q is not a list: %w", l.Method, l.Field, err)
			return true
		}
	}
	l.items = append(l.items, items...)
	l.pages++
	cursor := ""
	_ = json.Unmarshal(page["nextCursor"], &cursor)
	switch {
	case cursor == "":
		return true
	case l.pages >= MaxListPages:
		l.err = fmt.Errorf("%s: the server kept sending nextCursor after %d pages; stopped there", l.Method, l.pages)
		return true
	}
	l.cur = l.s.Call(l.Method, map[string]any{"cursor": cursor})
	return false
}

// Result is every item gathered, and why the listing stopped early (nil
// when it reached the last page).
func (l *Listing) Result() ([]json.RawMessage, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.items, l.err
}

// Wait drives the listing to its last page. When ctx ends first, the page
// in flight is cancelled and ctx's error returned.
func (l *Listing) Wait(ctx context.Context) ([]json.RawMessage, error) {
	for !l.Step() {
		l.mu.Lock()
		c := l.cur
		l.mu.Unlock()
		select {
		case <-c.Done():
		case <-ctx.Done():
			_ = l.s.Cancel(c, "interrupted")
			return nil, ctx.Err()
		}
	}
	return l.Result()
}

// ListAll is List and Wait in one.
func (s *Session) ListAll(ctx context.Context, method, field string) ([]json.RawMessage, error) {
	return s.List(method, field).Wait(ctx)
}

// Await waits for the call's final MRTR round (WaitFinal). When ctx ends
// first, the round in flight is cancelled, so the server is told and an
// interrupted command leaves nothing running, and ctx's error is returned.
func (c *Call) Await(ctx context.Context) (json.RawMessage, error) {
	res, err := c.WaitFinal(ctx)
	if ctx.Err() == nil {
		return res, err
	}
	last := c
	for n := last.Next(); n != nil; n = n.Next() {
		last = n
	}
	_ = c.s.Cancel(last, "interrupted")
	return nil, ctx.Err()
}

// sendsNothing reports a session that cannot put a request on the wire: a
// journal read back, or a Feed that takes no requests of the session's
// (an HTTP proxy's).
func (s *Session) sendsNothing() bool {
	if s.t == nil {
		return true
	}
	c, ok := s.t.(transport.Injector)
	return s.follows && ok && !c.CanInject()
}
