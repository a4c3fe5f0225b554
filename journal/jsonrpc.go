package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Class is what a decoded message is, by shape (JSON-RPC 2.0 §4-5).
type Class uint8

const (
	ClassNone         Class = iota // not a message (stderr, event, garbage)
	ClassRequest                   // method + id
	ClassNotification              // method, no id
	ClassResult                    // id + result
	ClassError                     // error (id may be missing)
	ClassBatch                     // a JSON array of messages
	ClassInvalid                   // JSON, but not a JSON-RPC message we can read
)

func (c Class) String() string {
	return [...]string{"", "request", "notification", "result", "error", "batch", "invalid"}[c]
}

// Envelope is the lenient reading of one JSON-RPC message. The exact bytes
// stay in the frame; nothing here is ever re-encoded onto the wire.
type Envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`

	h Hints // what correlation needs from params and result, read in the same pass
}

// RPCError is a JSON-RPC error object as the server sent it.
type RPCError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	if len(e.Data) > 0 && len(e.Data) < 200 {
		return fmt.Sprintf("server error %d: %s (data: %s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("server error %d: %s", e.Code, e.Message)
}

// Class reports the message's shape.
func (e *Envelope) Class() Class {
	switch {
	case e.Error != nil:
		return ClassError
	case e.Method != "" && hasID(e.ID):
		return ClassRequest
	case e.Method != "":
		return ClassNotification
	case hasID(e.ID) && e.Result != nil:
		return ClassResult
	}
	return ClassInvalid
}

// Key is the canonical text of the message id, "" when absent.
func (e *Envelope) Key() string { return IDKey(e.ID) }

// KeyBytes is Key's text for looking a call up: the id's own bytes when
// they are already canonical (a plain string or integer, the common case),
// so that a map lookup by string(KeyBytes(id)) allocates nothing.
func KeyBytes(id json.RawMessage) []byte {
	id = bytes.TrimSpace(id)
	if !hasID(id) {
		return nil
	}
	if id[0] == '"' && plainQuoted(id) || plainInteger(id) {
		return id
	}
	return []byte(IDKey(id))
}

func hasID(id json.RawMessage) bool {
	return len(id) > 0 && !bytes.Equal(id, []byte("null"))
}

// IDKey canonicalises an id so 7, 7.0 and " 7" correlate; strings keep quotes
// so the number 7 and the string "7" stay distinct, as JSON-RPC says.
func IDKey(id json.RawMessage) string {
	id = bytes.TrimSpace(id)
	if !hasID(id) {
		return ""
	}
	if id[0] == '"' {
		if plainQuoted(id) {
			return string(id) // what strconv.Quote would give back
		}
		var s string
		if json.Unmarshal(id, &s) == nil {
			return strconv.Quote(s)
		}
		return string(id)
	}
	if plainInteger(id) {
		return string(id) // what the float round trip below gives back, without it
	}
	if f, err := strconv.ParseFloat(string(id), 64); err == nil {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return string(id)
}

// plainInteger reports whether id is an integer of at most 15 digits
// without a leading zero: exact in a float64, so it is its own canonical
// text.
func plainInteger(id []byte) bool {
	d := id
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 15 || (d[0] == '0' && len(d) > 1) {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// plainQuoted reports whether a JSON string token is printable ASCII
// without escapes, so that it is its own strconv.Quote.
func plainQuoted(tok []byte) bool {
	if len(tok) < 2 || tok[len(tok)-1] != '"' {
		return false
	}
	for _, c := range tok[1 : len(tok)-1] {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// decode reads data leniently: a message, a batch, or nothing. It is the
// one pass over a frame's bytes (scan.go); the envelope's raw parts are
// slices of data.
func DecodeClass(data []byte) (env *Envelope, batch []*Envelope, class Class) {
	env, batch, class, _ = decodeFrame(data)
	return env, batch, class
}

// Decode reads a frame's message as the session does, in one pass and
// without copying: the envelope's raw parts (id, params, result) are
// slices of data. A batch gives its messages, env nil; anything else nil.
func Decode(data []byte) (env *Envelope, batch []*Envelope) {
	env, batch, _ = DecodeClass(data)
	return env, batch
}

// decodeFrame is decode that also says whether data is valid JSON at all
// (valid JSON that is not a message is ClassInvalid too).
func decodeFrame(data []byte) (env *Envelope, batch []*Envelope, class Class, isJSON bool) {
	return DecodeFrameInto(data, nil)
}

// DecodeInto is Decode for a reader that reuses one Envelope frame after
// frame: a single message is read into into (reset first) and returned as
// env; a batch still gives envelopes of its own.
func DecodeInto(into *Envelope, data []byte) (env *Envelope, batch []*Envelope) {
	env, batch, _, _ = DecodeFrameInto(data, into)
	return env, batch
}

// DecodeFrameInto is decodeFrame reading a single message into into, or
// into a new Envelope when into is nil.
func DecodeFrameInto(data []byte, into *Envelope) (env *Envelope, batch []*Envelope, class Class, isJSON bool) {
	return decodeFrameQuoted(data, into, nil, false)
}

// decodeFrameQuoted is DecodeFrameInto with data's quote table (nil: none),
// which a journal's reader noted as it unescaped data (quoteTable); with
// noProgress, a progress notification's params are stepped over, not read
// (ReadDecodedNoProgress).
func decodeFrameQuoted(data []byte, into *Envelope, quotes []int32, noProgress bool) (env *Envelope, batch []*Envelope, class Class, isJSON bool) {
	d := data
	for len(d) > 0 && (d[0] == ' ' || d[0] == '\t' || d[0] == '\r' || d[0] == '\n') {
		d = d[1:] // bytes.TrimLeft builds its set of four on every call
	}
	if len(d) == 0 {
		return nil, nil, ClassInvalid, false
	}
	if d[0] == '[' {
		b, ok := decodeBatch(d)
		if !ok {
			return nil, nil, ClassInvalid, false
		}
		return nil, b, ClassBatch, true
	}
	if into == nil {
		into = &Envelope{}
	}
	e, syntax := decodeEnvelopeQuoted(d, into, quotes, len(data)-len(d), noProgress)
	if e == nil {
		return nil, nil, ClassInvalid, syntax
	}
	return e, nil, e.Class(), true
}

// ParamName picks the human name of a request from its params: its tool or
// prompt name, else its resource URI, else its task id.
func ParamName(params json.RawMessage) string {
	if len(params) == 0 || !json.Valid(params) {
		return ""
	}
	var h Hints
	readParams(params, &h)
	return h.Name
}

// What the decoding pass read from params and result (scan.go), for
// readers that correlate frames outside a Session (artifact/scan): nothing
// is decoded a second time. An Envelope not made by Decode has none.

// ProgressParams is what a progress notification's params say; ok is
// false where json.Unmarshal into those fields would fail (no params, not
// an object, a field of the wrong type).
func (e *Envelope) ProgressParams() (token json.RawMessage, progress, total float64, message string, ok bool) {
	return e.h.Token, e.h.Progress, e.h.Total, e.h.Message, !e.h.ProgressBad
}

// MetaProgressToken is a request's params._meta.progressToken, nil when
// absent or when _meta is not an object.
func (e *Envelope) MetaProgressToken() json.RawMessage { return e.h.MetaToken }

// CancelledID is params.requestId (notifications/cancelled), nil when absent.
func (e *Envelope) CancelledID() json.RawMessage { return e.h.RequestID }

// Name is what a request is about: params.name, else uri, else taskId.
func (e *Envelope) Name() string { return e.h.Name }

// ResultKind is the result's resultType, "complete" when it names none.
func (e *Envelope) ResultKind() string { return resultTypeOf(e.h.ResultType) }

// ToolError reports a result with isError true.
func (e *Envelope) ToolError() bool { return e.h.IsError }

// Hints is what the decoding pass read from params and result, kept in
// the envelope: zero for an Envelope not made by Decode.
func (e *Envelope) Hints() *Hints { return &e.h }

// ResultType reads resultType; absent means "complete".
func ResultType(result json.RawMessage) string {
	if len(result) == 0 || !json.Valid(result) {
		return "complete"
	}
	var h Hints
	readResult(result, &h)
	return resultTypeOf(h.ResultType)
}

// resultTypeOf is the resultType a result's member names: "complete"
// when it names none.
func resultTypeOf(rt string) string {
	if rt == "" {
		return "complete"
	}
	return rt
}

// SmallEnvelope is e without the params and result that would pin a
// large frame in memory: its version, method, error and (short) id.
func SmallEnvelope(e *Envelope) *Envelope {
	if e == nil {
		return nil
	}
	s := &Envelope{JSONRPC: e.JSONRPC, Method: e.Method}
	if len(e.ID) <= 256 {
		s.ID = bytes.Clone(e.ID)
	}
	if e.Error != nil {
		s.Error = &RPCError{Code: e.Error.Code, Message: e.Error.Message}
		if len(s.Error.Message) > 1024 {
			s.Error.Message = s.Error.Message[:1024]
		}
	}
	return s
}
