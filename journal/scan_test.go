package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// refDecode is decode as it was before the one-pass scanner: json.Unmarshal
// into Envelope. The scanner must agree with it on every input.
func refDecode(data []byte) (env *Envelope, batch []*Envelope, class Class) {
	d := bytes.TrimLeft(data, " \t\r\n")
	if len(d) == 0 {
		return nil, nil, ClassInvalid
	}
	if d[0] == '[' {
		var raws []json.RawMessage
		if json.Unmarshal(d, &raws) != nil {
			return nil, nil, ClassInvalid
		}
		for _, r := range raws {
			var e Envelope
			if json.Unmarshal(r, &e) == nil {
				batch = append(batch, &e)
			}
		}
		return nil, batch, ClassBatch
	}
	var e Envelope
	if err := json.Unmarshal(d, &e); err != nil {
		return nil, nil, ClassInvalid
	}
	return &e, nil, e.Class()
}

// refHints is what the session used to unmarshal from params and result,
// once per question.
func refHints(e *Envelope) Hints {
	var h Hints
	var prog struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress float64         `json:"progress"`
		Total    float64         `json:"total"`
		Message  string          `json:"message"`
	}
	if json.Unmarshal(e.Params, &prog) != nil {
		h.ProgressBad = true
	} else {
		h.Token, h.Progress, h.Total, h.Message = prog.Token, prog.Progress, prog.Total, prog.Message
	}
	var meta struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
			Sub   json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
		} `json:"_meta"`
	}
	if json.Unmarshal(e.Params, &meta) == nil {
		h.MetaToken, h.SubscriptionID = meta.Meta.Token, meta.Meta.Sub
	}
	var cancel struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(e.Params, &cancel) == nil {
		h.RequestID = cancel.RequestID
	}
	var name struct {
		Name   string `json:"name"`
		URI    string `json:"uri"`
		TaskID string `json:"taskId"`
	}
	if len(e.Params) > 0 && json.Unmarshal(e.Params, &name) == nil {
		h.Name = firstNonEmptyString(name.Name, name.URI, name.TaskID)
	}
	var rt struct {
		ResultType string `json:"resultType"`
	}
	if json.Unmarshal(e.Result, &rt) == nil {
		h.ResultType = rt.ResultType
	}
	var ie struct {
		IsError bool `json:"isError"`
	}
	h.IsError = json.Unmarshal(e.Result, &ie) == nil && ie.IsError
	var task struct {
		Task json.RawMessage `json:"task"`
	}
	h.HasTask = json.Unmarshal(e.Result, &task) == nil && len(task.Task) > 0 && string(task.Task) != "null"
	return h
}

func firstNonEmptyString(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// sameEnvelope says how two envelopes differ, "" when they do not.
func sameEnvelope(got, want *Envelope) string {
	if (got == nil) != (want == nil) {
		return fmt.Sprintf("envelope %v, want %v", got != nil, want != nil)
	}
	if got == nil {
		return ""
	}
	switch {
	case got.JSONRPC != want.JSONRPC:
		return fmt.Sprintf("jsonrpc %q, want %q", got.JSONRPC, want.JSONRPC)
	case !bytes.Equal(got.ID, want.ID) || (got.ID == nil) != (want.ID == nil):
		return fmt.Sprintf("id %q, want %q", got.ID, want.ID)
	case got.Method != want.Method:
		return fmt.Sprintf("method %q, want %q", got.Method, want.Method)
	case !bytes.Equal(got.Params, want.Params) || (got.Params == nil) != (want.Params == nil):
		return fmt.Sprintf("params %q, want %q", got.Params, want.Params)
	case !bytes.Equal(got.Result, want.Result) || (got.Result == nil) != (want.Result == nil):
		return fmt.Sprintf("result %q, want %q", got.Result, want.Result)
	case (got.Error == nil) != (want.Error == nil):
		return fmt.Sprintf("error %v, want %v", got.Error, want.Error)
	case got.Error != nil && (got.Error.Code != want.Error.Code || got.Error.Message != want.Error.Message || !bytes.Equal(got.Error.Data, want.Error.Data)):
		return fmt.Sprintf("error %+v, want %+v", *got.Error, *want.Error)
	}
	gh, wh := got.h, refHints(want)
	switch {
	case gh.ProgressBad != wh.ProgressBad:
		return fmt.Sprintf("progressBad %v, want %v", gh.ProgressBad, wh.ProgressBad)
	case !gh.ProgressBad && (!bytes.Equal(gh.Token, wh.Token) || gh.Progress != wh.Progress || gh.Total != wh.Total || gh.Message != wh.Message):
		return fmt.Sprintf("progress %q %v %v %q, want %q %v %v %q", gh.Token, gh.Progress, gh.Total, gh.Message, wh.Token, wh.Progress, wh.Total, wh.Message)
	case !bytes.Equal(gh.MetaToken, wh.MetaToken) || !bytes.Equal(gh.SubscriptionID, wh.SubscriptionID):
		return fmt.Sprintf("_meta token %q sub %q, want %q %q", gh.MetaToken, gh.SubscriptionID, wh.MetaToken, wh.SubscriptionID)
	case !bytes.Equal(gh.RequestID, wh.RequestID) && !gh.ProgressBad:
		return fmt.Sprintf("requestId %q, want %q", gh.RequestID, wh.RequestID)
	case gh.Name != wh.Name:
		return fmt.Sprintf("name %q, want %q", gh.Name, wh.Name)
	case gh.ResultType != wh.ResultType:
		return fmt.Sprintf("resultType %q, want %q", gh.ResultType, wh.ResultType)
	case gh.IsError != wh.IsError:
		return fmt.Sprintf("isError %v, want %v", gh.IsError, wh.IsError)
	case gh.HasTask != wh.HasTask:
		return fmt.Sprintf("hasTask %v, want %v", gh.HasTask, wh.HasTask)
	}
	return ""
}

func checkDecode(t *testing.T, data []byte) {
	t.Helper()
	env, batch, class, isJSON := decodeFrame(data)
	if isJSON != json.Valid(data) {
		t.Fatalf("%q: valid JSON %v, json.Valid says %v", data, isJSON, !isJSON)
	}
	wenv, wbatch, wclass := refDecode(data)
	if class != wclass {
		t.Fatalf("%q: class %v, want %v", data, class, wclass)
	}
	if d := sameEnvelope(env, wenv); d != "" {
		t.Fatalf("%q: %s", data, d)
	}
	if len(batch) != len(wbatch) {
		t.Fatalf("%q: batch of %d, want %d", data, len(batch), len(wbatch))
	}
	for i := range batch {
		if d := sameEnvelope(batch[i], wbatch[i]); d != "" {
			t.Fatalf("%q: batch element %d: %s", data, i, d)
		}
	}
	checkDecodeNoProgress(t, data)
}

// checkDecodeNoProgress: decoding for a reader of no progress gives what
// decoding does, but for a progress notification's params' hints, which
// it does not read (ProgressParams not ok, the rest empty).
func checkDecodeNoProgress(t *testing.T, data []byte) {
	t.Helper()
	env, batch, class, isJSON := decodeFrameQuoted(data, nil, nil, false)
	lenv, lbatch, lclass, lisJSON := decodeFrameQuoted(data, nil, nil, true)
	if lclass != class || lisJSON != isJSON || env == nil && !reflect.DeepEqual(describeDecoded(lenv, lbatch), describeDecoded(env, batch)) {
		t.Fatalf("%q: noProgress decodes %v %v %q, want %v %v %q", data, lclass, lisJSON, describeDecoded(lenv, lbatch), class, isJSON, describeDecoded(env, batch))
	}
	if env == nil {
		return
	}
	want := *env
	if env.Method == "notifications/progress" {
		want.h.paramHints = paramHints{ProgressBad: true}
	}
	if got, want := describeEnvelope(lenv), describeEnvelope(&want); got != want {
		t.Fatalf("%q: noProgress decodes\n%s\nwant\n%s", data, got, want)
	}
}

var decodeSeeds = []string{
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpscope-1","progress":3,"total":10,"message":"step"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true,"resultType":"complete"}}`,
	`{"jsonrpc":"2.0","id":"a","result":{"task":{"taskId":"t1","status":"working"}}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"x":1}}}`,
	`{"jsonrpc":"2.0","id":2,"error":{"code":1.5,"message":"m"}}`,
	`{"jsonrpc":"2.0","method":"tools/call","id":3,"params":{"name":"echo","_meta":{"progressToken":7}}}`,
	`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"9"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"x"}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":"x"}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress"}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":null}`,
	`{"jsonrpc":"2.0","method":"x","params":[1,2]}`,
	`{"jsonrpc":"2.0","method":"x","params":{"_meta":"no","progressToken":1}}`,
	`{"JSONRPC":"2.0","ID":1,"Method":"m","PARAMS":{"NAME":"n","_META":{"PROGRESSTOKEN":1}}}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"result":1,"result":{"resultType":5}}`,
	`{"m\u0065thod":"esc","jsonrpc":"2.\u0030"}`,
	`[{"jsonrpc":"2.0","id":1,"result":{}},5,null,{"method":3},{"jsonrpc":"2.0","method":"a"}]`,
	`[]`, `[`, `[1,]`, `null`, `{}`, `"str"`, `5`, `{"a":1} x`, `{"a":"\x01"}`, "{\"a\":\"\xff\"}", `{"method":"\ud800"}`,
	`{"jsonrpc":"2.0","method":"m","params":{"message":null,"progress":1e400}}`,
	`{"jsonrpc":"2.0","method":"m","params":{"name":5,"uri":"u"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"isError":"yes"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"isError":true,"isError":null}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"ſtatus":1,"reſultType":"task"}}`,
	`  {"jsonrpc" : "2.0" , "id" : 1 , "result" : { } }  `,
	`{"jsonrpc":"2.0","id":-0.5e+3,"result":[]}`,
	`{"jsonrpc":"2.0","id":01,"result":1}`,
	`{"jsonrpc":"2.0","method":"m","params":{"_meta":{"progressToken":1},"_meta":"x"}}`,
	`{"jsonrpc":"2.0","method":"m","params":{"name":"a","progress":1},"params":{"total":2}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"isError":true,"task":{}},"result":{"resultType":"r"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"taſk":{},"iſError":true,"ISERROR":null}}`,
	`{"jsonrpc":"2.0","method":"m","params":{"NAME":"n","proGreSS":2,"_META":{"progreſſToken":3}}}`,
	// member's compact fast path and floatOf's integer one, at their edges.
	`{"jsonrpc":"2.0","method":"m","params":{"progress":999999999999999,"total":9999999999999999}}`,
	`{"jsonrpc":"2.0","method":"m","params":{"progress":0,"total":-0,"message":"m"}}`,
	`{"jsonrpc":"2.0","method":"m","params":{"progress":12345678901234567890123,"total":1.5e3}}`,
	`{"jsonrpc":"2.0","method":"m","params":{"progress": 1,"total":` + "\t" + `2}}`,
	`{"a":1,"b" :2,"c": 3,"d"` + "\n" + `:4}`, `{"a":1,"b":`, `{"a":1,"b":}`, `{"a":1,"b"`, `{"a":1,"b":"`,
	"{\"a\":1,\"k\x01\":2}", "{\"a\":1,\"k\xc3\xa9\":2}", `{"a":1,"k\"y":2}`, `{"a":1,,"b":2}`, `{"a":1 ,"b":2}`,
	`{"a":1,"a2345678901234567890123456789":2}`, `{"method":"m","method":null,"jsonrpc":null}`,
	// A progress notification's params, which a reader of no progress
	// steps over, until a later method makes it another message.
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"name":"n","_meta":{"progressToken":1}},"method":"tools/call","id":1}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1},"method":"notifications/progress","params":null}`,
	`{"jsonrpc":"2.0","params":{"progressToken":1,"progress":2},"method":"notifications/progress"}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":[1,}}`,
}

func TestDecodeMatchesJSON(t *testing.T) {
	for _, s := range decodeSeeds {
		checkDecode(t, []byte(s))
	}
	deep := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	checkDecode(t, []byte(`{"id":1,"result":`+deep+`}`))
	checkDecode(t, []byte(`{"id":1,"result":[`+deep+`]}`))
	// params and results are read during the envelope's own pass: its
	// depth limit and its syntax checks hold inside them too.
	checkDecode(t, []byte(`{"id":1,"method":"m","params":{"a":`+deep+`}}`))
	checkDecode(t, []byte(`{"id":1,"method":"m","params":{"_meta":{"progressToken":`+deep+`}}}`))
	checkDecode(t, []byte(`{"id":1,"result":{"task":[`+deep+`]}}`))
	for _, s := range []string{
		`{"id":1,"method":"m","params":{"progress":1.}}`, `{"id":1,"method":"m","params":{"total":-}}`,
		`{"id":1,"method":"m","params":{"message":"\x"}}`, `{"id":1,"method":"m","params":{"name":tru}}`,
		`{"id":1,"method":"m","params":{"_meta":{"progressToken":[1,]}}}`, `{"id":1,"method":"m","params":{"_meta":nul}}`,
		`{"id":1,"result":{"isError":truex}}`, `{"id":1,"result":{"resultType":"a" "b"}}`, `{"id":1,"result":{"task":}}`,
		`{"id":1,"method":"m","params":{"name":"a"},"params":{"uri":"u"},"params":null}`,
		`{"id":1,"result":{"isError":true},"result":{"task":null}}`, `{"id":1,"result":{"resultType":"x"},"result":[]}`,
	} {
		checkDecode(t, []byte(s))
	}
}

// FuzzDecodeMatchesJSON: the one-pass scanner reads every input exactly as
// json.Unmarshal into Envelope (and into the structs correlation used to
// unmarshal params and results into, one per question) does.
func FuzzDecodeMatchesJSON(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data)
	})
}

func BenchmarkDecode(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpscope-1","progress":12345,"total":1000000,"message":"step 12345 of 1000000"}}`)
	b.Run("scanner", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			DecodeClass(data)
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			e, _, _ := refDecode(data)
			_ = refHints(e)
		}
	})
}

// TestDecodeHeadReadsWhatIsBeforeTheCut: the head of a huge message names
// what its members before the cut say, and nothing past it.
func TestDecodeHeadReadsWhatIsBeforeTheCut(t *testing.T) {
	e := DecodeHead([]byte(` {"jsonrpc":"2.0", "id" : 7,"method":"tools/call","params":{"name":"big","arguments":{"x":"abc`))
	if e == nil || e.Method != "tools/call" || string(e.ID) != "7" || e.JSONRPC != "2.0" || e.Params != nil {
		t.Fatalf("DecodeHead = %+v, want tools/call with id 7 and no params", e)
	}
	e = DecodeHead([]byte(`{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"bad"},"result":{"x":`))
	if e == nil || e.Error == nil || e.Error.Code != -32602 || e.Error.Message != "bad" || string(e.ID) != `"a"` {
		t.Fatalf("DecodeHead = %+v, want the error of id \"a\"", e)
	}
	for _, head := range []string{`{}`, `{"jsonrpc":"2.0"}`, `{"params":{"method":"x"`, `{"meth`, `[{"method":"x"}]`, ``} {
		if e := DecodeHead([]byte(head)); e != nil {
			t.Errorf("DecodeHead(%q) = %+v, want nil", head, e)
		}
	}
}

// TestKeySwitchesAreKeyName: each member set's switch names the key its
// list does (keyName), for its names, their case folds (ASCII and the
// Kelvin and long-s folds encoding/json accepts), other keys and none.
func TestKeySwitchesAreKeyName(t *testing.T) {
	sets := []struct {
		set  *keySet
		fast func([]byte) string
	}{{envelopeKeys, envelopeKey}, {paramsKeys, paramsKey}, {resultKeys, resultKey},
		// names that begin with the letters a non-ASCII character folds to
		// (no switch: keyName against its definition is the check)
		{newKeySet("kind", "size", "Skip"), func(k []byte) string { return keyName(k, newKeySet("kind", "size", "Skip")) }}}
	for _, set := range sets {
		keys := []string{"", "x", "arguments", "content", "ID", "_META", "Name\u017f", "tas\u212a", "level", "logger", "data", strings.Repeat("n", 70)}
		for _, n := range set.set.names {
			keys = append(keys, n, strings.ToUpper(n), n[:len(n)-1], n+"s", strings.ReplaceAll(n, "k", "\u212a"), strings.ReplaceAll(n, "s", "\u017f"))
		}
		for _, k := range keys {
			if got, want := set.fast([]byte(k)), keyName([]byte(k), set.set); got != want {
				t.Errorf("%v: key %q names %q, keyName says %q", set.set.names, k, got, want)
			}
			// keyName against its definition: the first name keyIs accepts.
			want := ""
			for _, n := range set.set.names {
				if keyIs([]byte(k), n) {
					want = n
					break
				}
			}
			if got := keyName([]byte(k), set.set); got != want {
				t.Errorf("%v: keyName(%q) = %q, keyIs says %q", set.set.names, k, got, want)
			}
		}
	}
}
