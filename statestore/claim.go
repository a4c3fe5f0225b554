package statestore

import (
	"encoding/json"
	"os"
	"sync"

	"mcpscope/journal"
	"mcpscope/transport"
)

// preClaims are call leases a command took before its session existed
// (ClaimCall), for Rejoin to adopt.
var preClaims sync.Map // handle → *Held

// ClaimCall takes the lease on d's call for this process before a session
// is made to rejoin it (a race's loser learns who holds it before it
// touches the server); the session's Rejoin adopts it. Release it if no
// Rejoin follows.
func ClaimCall(store Store, handle string) (*Held, error) {
	h, err := Hold(store, CallLease(handle), false)
	if err != nil {
		return nil, err
	}
	h.OnRelease(func() { preClaims.CompareAndDelete(handle, h) }) // released unadopted: forget it
	preClaims.Store(handle, h)
	return h, nil
}

// TakeClaim is the lease ClaimCall took on handle, now the caller's to
// keep or release; nil when none was taken.
func TakeClaim(handle string) *Held {
	if v, ok := preClaims.LoadAndDelete(handle); ok {
		return v.(*Held)
	}
	return nil
}

// ProgressFromJournal reads the journal of the call's last process for what it
// saw on stream after the record's lastID (a record is written at most
// every persistEvery; the journal, before anything is shown): the last
// event id, and the progress with those steps counted. ok is false when
// the journal holds nothing newer.
func ProgressFromJournal(path, stream, lastID string, token json.RawMessage, p Progress) (string, Progress, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", p, false
	}
	defer f.Close()
	tok := journal.IDKey(token)
	past := lastID == "" // events after the record's last id count
	id, moved := lastID, false
	_, _ = journal.Read(f, func(_ uint64, fr transport.Frame) error {
		if fr.Meta.LogicalStream() != stream || fr.Meta.EventID == "" {
			return nil
		}
		if !past {
			past = fr.Meta.EventID == lastID
			return nil
		}
		id, moved = fr.Meta.EventID, true
		var n struct {
			Method string `json:"method"`
			Params struct {
				Token    json.RawMessage `json:"progressToken"`
				Progress float64         `json:"progress"`
				Total    float64         `json:"total"`
				Message  string          `json:"message"`
			} `json:"params"`
		}
		if fr.Kind == transport.Message && json.Unmarshal(fr.Data, &n) == nil && n.Method == "notifications/progress" && journal.IDKey(n.Params.Token) == tok {
			p.Step(n.Params.Progress, n.Params.Total, n.Params.Message, fr.Time)
		}
		return nil
	})
	return id, p, moved
}
