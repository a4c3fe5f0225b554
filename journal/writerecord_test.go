package journal

import (
	"bytes"
	"strings"
	"testing"

	"mcpscope/transport"
)

// WriteRecord writes what AppendRecord makes, byte for byte, for frames
// over its chunk: multi-byte characters and escapes across the chunk
// boundaries, hidden characters, and data that is not UTF-8 (b64).
func TestWriteRecordMatchesAppendRecord(t *testing.T) {
	datas := [][]byte{
		[]byte(strings.Repeat("é\"\n\u202e\x01ab", recordChunk/5)),
		[]byte(strings.Repeat("x", recordChunk-1) + "€" + strings.Repeat("y", recordChunk)),
		append([]byte(strings.Repeat("z", recordChunk*2)), 0xff, 0xfe),
		[]byte("small"),
	}
	for i, d := range datas {
		f := transport.Frame{Dir: transport.In, Kind: transport.Message, Data: d, Meta: transport.Meta{Stream: "post:1", HTTPMethod: "POST"}}
		var w bytes.Buffer
		buf, err := WriteRecord(&w, nil, 7, f)
		if err != nil {
			t.Fatal(err)
		}
		if want := AppendRecord(nil, 7, f); !bytes.Equal(w.Bytes(), want) {
			t.Fatalf("data %d: WriteRecord wrote %d bytes, AppendRecord %d, not the same", i, w.Len(), len(want))
		}
		if cap(buf) > 4*recordChunk {
			t.Fatalf("data %d: the buffer grew to %d bytes for a %d-byte frame", i, cap(buf), len(d))
		}
	}
}
