package mock

import (
	"encoding/json"
	"testing"
)

func TestWithResultMeta(t *testing.T) {
	note := json.RawMessage(`{"match":"by-name"}`)
	for in, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                       `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"k":{"match":"by-name"}}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`:           `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"k":{"match":"by-name"}},"content":[]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"a":1},"x":2}}`:  `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"k":{"match":"by-name"},"a":1},"x":2}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"_meta":{ }}}`:            `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"k":{"match":"by-name"} }}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"no"}}`: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"no"}}`,
	} {
		got := string(withResultMeta([]byte(in), "k", note))
		if got != want {
			t.Errorf("withResultMeta(%s)\n got %s\nwant %s", in, got, want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("not JSON: %s", got)
		}
	}
}
