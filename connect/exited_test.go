package connect

import (
	"testing"

	"mcpscope/session"
	"mcpscope/transport"
)

// reaped is a process transport whose child was reaped but which has not
// closed Done yet: the moment a probe failed by the exit returns in.
type reaped struct{ done chan struct{} }

func (r *reaped) Start(transport.Sink) error                    { return nil }
func (r *reaped) Send(_ transport.Outgoing, done func(error))   { done(nil) }
func (r *reaped) Close() error                                  { return nil }
func (r *reaped) Done() <-chan struct{}                         { return r.done }
func (r *reaped) Describe() string                              { return "stdio: reaped" }
func (r *reaped) ExitStatus() (code int, sig string, gone bool) { return 1, "", true }

// TestExitedBeforeDone: the era probe sees a server that exited on
// server/discover as exited even before the transport closed Done, so it
// starts the server again instead of sending initialize to the dead one
// (a TestHostileServers flake under load).
func TestExitedBeforeDone(t *testing.T) {
	s := session.New(&reaped{done: make(chan struct{})}, session.Options{})
	if !exited(s) {
		t.Fatal("a reaped server process is not seen as exited while Done is still open")
	}
}
