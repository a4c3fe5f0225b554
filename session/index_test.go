package session

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	"mcpscope/journal"
	"mcpscope/transport"
)

// longKey is a call id longer than a record holds: its key is numbered
// in memory instead.
const longKey = `"a-call-id-longer-than-an-index-record-holds-0001"`

// indexJournal writes a journal of n progress notifications of two calls
// (one with a short id, one with an id longer than a record holds), with
// their requests and responses, and returns its path.
func indexJournal(t *testing.T, n int) string {
	t.Helper()
	s, path := journaled(t)
	at := func(i int) time.Time { return time.Unix(1700000000, int64(i)).UTC() }
	s.Ingest(transport.Frame{Time: at(0), Dir: transport.Out, Kind: transport.Message,
		Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":"t"}}}`)})
	s.Ingest(transport.Frame{Time: at(0), Dir: transport.Out, Kind: transport.Message,
		Data: []byte(`{"jsonrpc":"2.0","id":` + longKey + `,"method":"tools/call","params":{"name":"b","_meta":{"progressToken":"u"}}}`)})
	for i := 1; i <= n; i++ {
		tok := "t"
		if i%3 == 0 {
			tok = "u"
		}
		s.Ingest(frameIn(i, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%q,"progress":%d}}`, tok, i)))
	}
	s.Ingest(frameIn(n+1, `{"jsonrpc":"2.0","id":1,"result":{}}`))
	s.Ingest(frameIn(n+2, `{"jsonrpc":"2.0","id":`+longKey+`,"result":{}}`))
	s.Ingest(frameIn(n+3, `{"jsonrpc":"2.0","id":77,"result":{}}`)) // a note
	if err := s.journal.Close(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	return path
}

// A live journaled session writes its index beside the journal as it
// goes, and it is the index a reader of the journal builds: byte for byte.
// (How readers check, rebuild and place indexes: framestore/index_test.go.)
func TestLiveIndexIsTheOneAReaderBuilds(t *testing.T) {
	n := 3*journal.IndexPageRecords + 100
	path := indexJournal(t, n)
	idx := journal.IndexPath(path)
	written, err := os.ReadFile(idx)
	if err != nil {
		t.Fatalf("the live session left no index beside its journal: %v", err)
	}
	if want := journal.IndexHeader + (n+5)*journal.IndexRecord; len(written) != want {
		t.Fatalf("index file is %d bytes, want %d (a header and a record per frame)", len(written), want)
	}
	if err := os.Remove(idx); err != nil {
		t.Fatal(err)
	}
	s, _, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Store().Len(); got != n+5 {
		t.Fatalf("the reader holds %d frames, want %d", got, n+5)
	}
	s.Close()
	again, err := os.ReadFile(idx)
	if err != nil {
		t.Fatalf("the reader wrote no index: %v", err)
	}
	if !bytes.Equal(again, written) {
		t.Fatal("the index a reader builds from the journal differs from the one the live session wrote")
	}
}
