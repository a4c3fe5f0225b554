package session

import (
	"errors"
	"testing"
	"time"

	"mcpscope/transport"
)

// TestOfflineUnansweredCallEndsWithTheRecording: a recorded call that got
// no answer ends where the recording says the connection ended (its
// transport closed, its server exited) or, failing that, with the
// recording's last frame: lost, with a fixed duration, never pending with
// a clock that runs on.
func TestOfflineUnansweredCallEndsWithTheRecording(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration, f transport.Frame) transport.Frame { f.Time = t0.Add(d); return f }
	event := func(d time.Duration, name string) transport.Frame {
		return transport.Frame{Time: t0.Add(d), Dir: transport.Local, Kind: transport.Event, Meta: transport.Meta{Event: name, Detail: name}}
	}
	call := []transport.Frame{
		at(0, out(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)),
		at(100*time.Millisecond, in(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)),
		at(time.Second, out(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}}`)),
		at(3500*time.Millisecond, in(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`)),
	}
	for _, c := range []struct {
		name string
		end  []transport.Frame
		took time.Duration
		why  string
	}{
		{"transport closed", []transport.Frame{event(17*time.Minute+37*time.Second, transport.EvClosed)}, 17*time.Minute + 36*time.Second, "the transport closed"},
		{"server exited", []transport.Frame{event(5*time.Second, transport.EvExited), event(6*time.Second, transport.EvClosed)}, 4 * time.Second, "the server process exited"},
		{"recording cut off", nil, 2500 * time.Millisecond, RecordingEnded},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeJournal(t, "stdio: slow-server", append(append([]transport.Frame{}, call...), c.end...)...)
			s, _, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if l := waitLoaded(t, s); l.Err != nil {
				t.Fatalf("loading: %+v", l)
			}
			cl := s.Lookup("2")
			if cl == nil {
				t.Fatal("no call 2")
			}
			sn := cl.Snapshot()
			later := time.Now().Add(time.Hour) // a clock still running would show it
			if StateWord(&sn) != "lost" || !errors.Is(sn.Err(), ErrClosed) || sn.Duration(later) != c.took {
				t.Fatalf("call 2: %s (%v), %s; want lost after %s", StateWord(&sn), sn.Err(), sn.Duration(later), c.took)
			}
			if f := sn.Failure; f == nil || len(f.Reason) < len(c.why) || f.Reason[:len(c.why)] != c.why {
				t.Fatalf("call 2 ended because %v, want %q", sn.Failure, c.why)
			}
			if in := s.Lookup("1").Snapshot(); in.State != StateOK {
				t.Fatalf("the answered call: %s", in.State)
			}
		})
	}
}
