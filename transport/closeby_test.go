package transport

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// CloseBy waits on the server no later than its deadline: with no time
// left the DELETE is not sent (the journal says why), with some left it
// is bounded by it, against a server that never answers a DELETE.
func TestHTTPCloseByBoundsTheDelete(t *testing.T) {
	var deletes atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			deletes.Add(1)
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })

	h := NewHTTP(HTTPOptions{URL: srv.URL})
	rec := newFrameRec()
	if err := h.Start(rec.sink); err != nil {
		t.Fatal(err)
	}
	h.SetSessionID("s-1")
	h.CloseBy(time.Now())
	if n := deletes.Load(); n != 0 {
		t.Errorf("a DELETE went out with no time left (%d)", n)
	}
	if rec.find(func(f Frame) bool { return strings.Contains(f.Meta.Detail, "no time left to DELETE session s-1") }) < 0 {
		t.Errorf("the journal does not say why the session was not deleted:\n%s", rec.dump())
	}

	h = NewHTTP(HTTPOptions{URL: srv.URL})
	rec = newFrameRec()
	if err := h.Start(rec.sink); err != nil {
		t.Fatal(err)
	}
	h.SetSessionID("s-2")
	const left = 300 * time.Millisecond
	began := time.Now()
	h.CloseBy(began.Add(left))
	// A hang guard, far below httpDeleteGrace (5s), which bounded it before.
	if took := time.Since(began); took > left+2*time.Second {
		t.Errorf("CloseBy with %s left took %s", left, took)
	}
	if rec.find(func(f Frame) bool {
		return f.Meta.HTTPMethod == http.MethodDelete && strings.Contains(f.Meta.Detail, "DELETE")
	}) < 0 {
		t.Errorf("the DELETE's outcome is not recorded:\n%s", rec.dump())
	}
}
