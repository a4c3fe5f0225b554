package proxy

import (
	"testing"

	"mcpscope/transport"
)

// route sends each server line where it belongs, whether it reads the
// whole line or stops at its method (no viewer awaits progress).
func TestRouteDecisions(t *testing.T) {
	newProxy := func() *stdioProxy {
		p := &stdioProxy{prefix: "mcpscope-00-", sprefix: "smcpscope-00-",
			inflight:  map[string]*hostCall{"n5": {id: []byte("5")}, "n6": {id: []byte("6")}},
			cancelled: map[string]bool{"n7": true}, injected: map[string]*injectCall{}, tokens: map[string]*injectCall{}}
		ic := &injectCall{wireID: `"mcpscope-00-1"`, key: "smcpscope-00-1"}
		p.injected[ic.key] = ic
		p.rewatch()
		return p
	}
	withToken := func(p *stdioProxy) {
		ic := p.injected["smcpscope-00-1"]
		ic.token = "smcpscope-00-p1"
		p.tokens[ic.token] = ic
		p.rewatch()
	}
	for _, tc := range []struct {
		name   string
		tokens bool
		line   string
		via    string
		after  bool
		gone   string // the key no longer in flight after it
		stays  string // the key still in flight after it
	}{
		{"a notification", false, `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"x"}}`, transport.ViaHost, false, "", "n5"},
		{"the host's answer", false, `{"jsonrpc":"2.0","id":5,"result":{}}`, transport.ViaHost, false, "n5", "n6"},
		{"an error answer", false, `{"error":{"code":1,"message":"x"},"id":6,"jsonrpc":"2.0"}`, transport.ViaHost, false, "n6", "n5"},
		{"a server request with the same id", false, `{"jsonrpc":"2.0","method":"sampling/createMessage","id":5,"result":{}}`, transport.ViaHost, false, "", "n5"},
		{"a method after the result", false, `{"jsonrpc":"2.0","id":5,"result":{},"method":"x"}`, transport.ViaHost, false, "", "n5"},
		{"a late answer to a cancelled call", false, `{"jsonrpc":"2.0","id":7,"result":{}}`, transport.ViaDropped, false, "n7", "n5"},
		{"the viewer's answer", false, `{"jsonrpc":"2.0","id":"mcpscope-00-1","result":{}}`, transport.ViaViewer, true, "smcpscope-00-1", "n5"},
		{"an answer to a forgotten viewer call", false, `{"jsonrpc":"2.0","id":"mcpscope-00-9","result":{}}`, transport.ViaViewer, false, "", "n5"},
		{"progress nobody awaits", false, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpscope-00-p1","progress":1}}`, transport.ViaHost, false, "", "smcpscope-00-1"},
		{"the viewer's progress", true, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpscope-00-p1","progress":1}}`, transport.ViaViewer, true, "", "smcpscope-00-1"},
		{"the viewer's progress, params first", true, `{"params":{"progressToken":"mcpscope-00-p1"},"method":"notifications/progress","jsonrpc":"2.0"}`, transport.ViaViewer, true, "", "smcpscope-00-1"},
		{"the host's progress", true, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`, transport.ViaHost, false, "", "smcpscope-00-1"},
		{"method first, with an id and a result", false, `{"method":"x","id":5,"result":{}}`, transport.ViaHost, false, "", "n5"},
		{"the viewer's progress, method first", true, `{"method":"notifications/progress","params":{"progressToken":"mcpscope-00-p1"}}`, transport.ViaViewer, true, "", "smcpscope-00-1"},
		{"no JSON", false, `id 5 result`, transport.ViaHost, false, "", "n5"},
		{"cut short after the method", false, `{"jsonrpc":"2.0","method":"notifications/message","params":{`, transport.ViaHost, false, "", "n5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProxy()
			if tc.tokens {
				withToken(p)
			}
			via, after := p.route([]byte(tc.line))
			if via != tc.via || (after != nil) != tc.after {
				t.Fatalf("route = %s (after %v), want %s (after %v)", via, after != nil, tc.via, tc.after)
			}
			tracked := func(key string) bool {
				return p.inflight[key] != nil || p.cancelled[key] || p.injected[key] != nil
			}
			if tc.gone != "" && tracked(tc.gone) {
				t.Fatalf("%s still tracked", tc.gone)
			}
			if tc.stays != "" && !tracked(tc.stays) {
				t.Fatalf("%s no longer tracked", tc.stays)
			}
		})
	}
}

// watch is off exactly when nothing is tracked, so that lines are then not
// parsed at all.
func TestWatchFollowsTheCallsTracked(t *testing.T) {
	p := &stdioProxy{prefix: "mcpscope-00-", sprefix: "smcpscope-00-", inflight: map[string]*hostCall{}, cancelled: map[string]bool{}, injected: map[string]*injectCall{}, tokens: map[string]*injectCall{}}
	p.rewatch()
	if p.watch.Load() {
		t.Fatal("watch on with nothing tracked")
	}
	po := &pendingOut{call: &hostCall{id: []byte("1")}, key: "n1"}
	p.track(po, 3)
	if !p.watch.Load() {
		t.Fatal("watch off with a call in flight")
	}
	if via, _ := p.route([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)); via != transport.ViaHost || p.watch.Load() {
		t.Fatalf("after the answer: via %s, watch %v", via, p.watch.Load())
	}
	p.nextID.Add(1)
	p.mu.Lock()
	p.rewatch()
	p.mu.Unlock()
	if !p.watch.Load() {
		t.Fatal("watch off after a viewer injected a call")
	}
}
