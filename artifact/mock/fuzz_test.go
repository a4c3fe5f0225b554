package mock

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzSplice: replacing a member of any JSON object leaves every other
// byte as it was and valid JSON valid; asking for a member that is not
// there changes nothing.
func FuzzSplice(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"result":{}}`), "id", []byte(`"abc"`))
	f.Add([]byte(`{ "id" : 7 , "params" : { "progressToken" : "t" } }`), "params", []byte(`{}`))
	f.Add([]byte(`{"a":"\"id\":1","id":[1,2]}`), "id", []byte(`null`))
	f.Add([]byte(`[1]`), "id", []byte(`1`))
	f.Fuzz(func(t *testing.T, raw []byte, key string, value []byte) {
		out, ok := splice(raw, value, key)
		if !ok {
			if !bytes.Equal(out, raw) {
				t.Fatal("a failed splice changed the input")
			}
			return
		}
		s, e, _ := member(raw, key)
		if !bytes.Equal(out[:s], raw[:s]) || !bytes.Equal(out[s+len(value):], raw[e:]) || !bytes.Equal(out[s:s+len(value)], value) {
			t.Fatalf("splice %q in %q: %q", key, raw, out)
		}
		if json.Valid(raw) && json.Valid(value) && !json.Valid(out) {
			t.Fatalf("valid %q with %q for %q became invalid %q", raw, value, key, out)
		}
		var m map[string]json.RawMessage
		if json.Valid(value) && json.Unmarshal(out, &m) == nil && m[key] != nil && !bytes.Equal(canonical(m[key]), canonical(value)) {
			t.Fatalf("member %q is %s, want %s", key, m[key], value)
		}
	})
}
