package bench

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jsonStrings counts the strings of a file's JSON lines as encoding/json
// reads them, member names included.
func jsonStrings(t *testing.T, data []byte) int {
	t.Helper()
	n := 0
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := tok.(string); ok {
			n++
		}
	}
}

// TestCountStrings checks the strings loop against encoding/json on lines
// full of what ends a string early when misread: quotes and backslashes in
// runs of every length, at every offset in a word, and across the 64 KiB
// pieces a long line is read in.
func TestCountStrings(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{`"`, `\`, `\\`, `\"`, `"\`, "a", "é", "\n", "\t", "\x00", "}"}
	text := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	var data []byte
	for i := range 2000 {
		v := map[string]any{text(r.IntN(12)): text(r.IntN(60)), "raw": text(r.IntN(200)), "n": i}
		if i%2 == 0 { // a frame inside a record, as the journal holds one
			inner, _ := json.Marshal(map[string]string{"m": text(r.IntN(40))})
			v["raw"] = string(inner)
		}
		line, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		data = append(append(data, line...), '\n')
	}
	check(t, data)
	// A line longer than the 64 KiB the loop reads at a time, whose first
	// piece ends in a backslash that escapes the second's first byte, a
	// quote or a backslash. Each in a file of its own, twice, so that no
	// miscount hides in another's or in an odd count of quotes.
	for _, tail := range []string{`\"x"`, `\\"`} {
		head := []byte(`{"k":"`)
		line := append(head, bytes.Repeat([]byte("a"), 1<<16-len(head)-1)...)
		line = append(line, tail+`,"y":"z"}`+"\n"...)
		if !json.Valid(bytes.TrimSpace(line)) {
			t.Fatalf("the long line is not JSON: %q", line[len(line)-20:])
		}
		check(t, append(line, line...))
	}
}

// check compares CountStrings with encoding/json on a file of data.
func check(t *testing.T, data []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "j.jsonl")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := CountStrings(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := jsonStrings(t, data); got != want {
		t.Fatalf("CountStrings = %d, encoding/json reads %d strings", got, want)
	}
}
