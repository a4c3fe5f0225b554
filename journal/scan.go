package journal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"mcpscope/internal/ascii"
	"mcpscope/internal/jsonscan"
	"strconv"
	"unicode/utf8"
)

// This file is the one pass over a frame's bytes: it validates the JSON
// exactly as encoding/json would, fills the Envelope (its raw parts are
// slices of the frame, never copies) and reads on the way everything
// correlation needs from params and result, so nothing is unmarshalled a
// second time. Its results match json.Unmarshal into Envelope, which a
// fuzz test (FuzzDecodeMatchesJSON) checks.

// Hints are what one pass reads beside the envelope: what correlation
// needs from params and result.
type Hints struct {
	paramHints
	resultHints
}

// paramHints are the hints read from params.
type paramHints struct {
	Token          json.RawMessage // params.progressToken (a progress notification)
	MetaToken      json.RawMessage // params._meta.progressToken (a request)
	SubscriptionID json.RawMessage // params._meta["io.modelcontextprotocol/subscriptionId"]
	RequestID      json.RawMessage // params.requestId (notifications/cancelled)
	Name           string          // params.name, params.uri or params.taskId: what a request is about
	Progress       float64
	Total          float64
	Message        string
	// ProgressBad: params would not unmarshal into the progress fields
	// (absent, not an object, or a field of the wrong type).
	ProgressBad bool
	// MetaBad: a _meta member is not an object, so (as with json.Unmarshal
	// into the structs this replaces) neither token nor subscription counts.
	MetaBad bool
}

// resultHints are the hints read from a result.
type resultHints struct {
	ResultType string // result.resultType ("" = none or unreadable)
	IsError    bool   // result.isError is true
	HasTask    bool   // result has a "task" member

	// ResultTypeBad: result.resultType is there but not a string.
	ResultTypeBad bool
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

const metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

type scanner struct {
	b     []byte
	i     int
	depth int
	bad   bool // a value had a type Envelope cannot hold: the message is invalid
	// quotes, when not nil, are where b's quotes are, less qoff, for a b
	// that is clean (quoteTable): a string then ends at the next quote.
	quotes []int32
	qoff   int
	qk     int // the quote the walk is likely at next
	// noProgress: a progress notification's params are stepped over, not
	// read (ReadDecodedNoProgress).
	noProgress bool
}

// closing is the index of the quote that ends the string opening at b[i]
// (a quote), from the quote table; -1 when there is none to tell.
func (sc *scanner) closing(i int) int {
	// Where the walk is expected, inline; anywhere else, a call.
	if k, q := sc.qk, sc.quotes; k+1 < len(q) && int(q[k]) == i+sc.qoff {
		sc.qk = k + 2
		return int(q[k+1]) - sc.qoff
	}
	return sc.closingFound(i)
}

// closingFound is closing for a quote the walk did not expect: it went
// back, or past a quote the table holds.
func (sc *scanner) closingFound(i int) int {
	q, at := sc.quotes, int32(i+sc.qoff)
	k := sc.qk
	if k >= len(q) || q[k] != at {
		// The walk went back, or past a quote the table holds: look it up.
		lo, hi := 0, len(q)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if q[m] < at {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if k = lo; k >= len(q) || q[k] != at {
			return -1
		}
	}
	if k+1 >= len(q) {
		return -1 // no quote ends it: the walk finds it unfinished
	}
	sc.qk = k + 2
	return int(q[k+1]) - sc.qoff
}

// decodeEnvelopeQuoted reads one message into e (reset first): nil when
// json.Unmarshal into Envelope would fail (invalid JSON, or a member of the
// wrong type); syntax says whether data is valid JSON at all. quotes is
// data's quote table (scanner.quotes), nil when there is none.
func decodeEnvelopeQuoted(data []byte, e *Envelope, quotes []int32, qoff int, noProgress bool) (*Envelope, bool) {
	sc := scanner{b: data, quotes: quotes, qoff: qoff, noProgress: noProgress}
	sc.ws()
	*e = Envelope{}
	if !sc.envelope(e) {
		return nil, false
	}
	sc.ws()
	if sc.i != len(sc.b) {
		return nil, false
	}
	if sc.bad {
		return nil, true
	}
	return e, true
}

// decodeBatch reads a JSON array of messages; elements that are not
// messages are left out, as before. ok is false when the array itself is
// not valid JSON.
func decodeBatch(data []byte) ([]*Envelope, bool) {
	sc := scanner{b: data}
	sc.ws()
	if sc.peek() != '[' {
		return nil, false
	}
	sc.i++
	sc.depth++
	var out []*Envelope
	sc.ws()
	if sc.peek() == ']' {
		sc.i++
	} else {
		for {
			sc.ws()
			start := sc.i
			e := &Envelope{}
			inner := scanner{b: sc.b, i: sc.i, depth: sc.depth}
			if inner.envelope(e) {
				sc.i = inner.i
				if !inner.bad {
					out = append(out, e)
				}
			} else {
				// Not an object we can read: it must still be valid JSON.
				sc.i = start
				if !sc.skip() {
					return nil, false
				}
			}
			sc.ws()
			if c := sc.peek(); c == ',' {
				sc.i++
				continue
			} else if c == ']' {
				sc.i++
				break
			}
			return nil, false
		}
	}
	sc.ws()
	if sc.i != len(sc.b) {
		return nil, false
	}
	return out, true
}

func (sc *scanner) peek() byte {
	if sc.i < len(sc.b) {
		return sc.b[sc.i]
	}
	return 0
}

func (sc *scanner) ws() {
	for sc.i < len(sc.b) {
		switch sc.b[sc.i] {
		case ' ', '\t', '\r', '\n':
			sc.i++
		default:
			return
		}
	}
}

// envelope reads an object (or null) into e. It reports false only for
// bytes that are not valid JSON; a member of the wrong type sets sc.bad.
func (sc *scanner) envelope(e *Envelope) bool {
	if sc.literal("null") {
		e.h.ProgressBad = true // no params
		return true
	}
	if sc.peek() != '{' {
		if !sc.skip() {
			return false
		}
		sc.bad = true // valid JSON, but not an object
		return true
	}
	// The member walk as a loop, not object's closure: it runs for every
	// message.
	if !sc.enter() {
		return false
	}
	skipped := false // the last params were stepped over (noProgress)
	for first := true; ; first = false {
		key, done, ok := sc.member(first)
		if !ok {
			return false
		}
		if done {
			break
		}
		start := sc.i
		switch envelopeKey(key) {
		case "jsonrpc":
			ok = sc.stringInto(&e.JSONRPC)
		case "id":
			if ok = sc.skip(); ok {
				e.ID = sc.b[start:sc.i]
			}
		case "method":
			ok = sc.stringInto(&e.Method)
		case "params":
			// Its hints are read on the way; a repeated key: the last.
			e.h.paramHints = paramHints{}
			if skipped = sc.noProgress && e.Method == "notifications/progress"; skipped {
				ok = sc.skip() // as valid JSON as params would find it: they read their values with skip
			} else {
				ok = sc.params(&e.h)
			}
			if ok {
				e.Params = sc.b[start:sc.i]
			}
		case "result":
			e.h.resultHints = resultHints{}
			if ok = sc.result(&e.h); ok {
				e.Result = sc.b[start:sc.i]
			}
		case "error":
			ok = sc.rpcError(&e.Error)
		default:
			ok = sc.skip()
		}
		if !ok {
			return false
		}
	}
	// The check at "params" saw the method so far; this one sees the last,
	// and is needed too: params may come before the method (read, then
	// dropped here), or a later method make them another message's (read
	// here), and a skipped notification's hints are still to be marked bad.
	if sc.noProgress && e.Method == "notifications/progress" {
		e.h.paramHints = paramHints{ProgressBad: true} // not read (or, params before method, not kept)
	} else if skipped {
		readParams(e.Params, &e.h) // a later "method" made it another message
	}
	if e.Params == nil {
		e.h.ProgressBad = true
	}
	return true
}

// object walks an object's members; member reads the value at sc.i.
func (sc *scanner) object(member func(key []byte) bool) bool {
	if !sc.enter() {
		return false
	}
	for first := true; ; first = false {
		key, done, ok := sc.member(first)
		if !ok {
			return false
		}
		if done {
			return true
		}
		if !member(key) {
			return false
		}
	}
}

// enter steps into the object at sc.i; false when there is none (or it
// nests too deep). The members are then read with member.
func (sc *scanner) enter() bool {
	if sc.peek() != '{' {
		return false
	}
	sc.i++
	if sc.depth++; sc.depth > maxDepth {
		return false
	}
	return true
}

// member reads up to the next member's value (first: the object's first
// member), leaving sc.i at the value, which the caller reads: its key, or
// done when the object ended instead; ok is false for bytes that are not
// JSON. It is object's walk for readers that would rather loop than pass a
// closure (one that captures a result makes the result escape).
func (sc *scanner) member(first bool) (key []byte, done, ok bool) {
	// Compact JSON (`,"key":value`, a short key of printable ASCII) is
	// read in place by one byte loop: most frames are written so, and the
	// walk below costs a ws call per token.
	if i := sc.i; i < len(sc.b) {
		if !first && sc.b[i] == ',' {
			i++
		}
		if (i > sc.i || first) && i < len(sc.b) && sc.b[i] == '"' {
			j := -1
			if sc.quotes != nil {
				j = sc.closing(i)
			}
			if j < 0 {
				j = shortKeyEnd(sc.b, i)
			}
			// Space around the colon, or nothing after it: the walk.
			if j >= 0 && j+2 < len(sc.b) && sc.b[j+1] == ':' && sc.b[j+2] > ' ' {
				sc.i = j + 2
				return sc.b[i+1 : j], false, true
			}
		}
	}
	sc.ws()
	if c := sc.peek(); c == '}' {
		sc.i++
		sc.depth--
		return nil, true, true
	} else if !first {
		if c != ',' {
			return nil, false, false
		}
		sc.i++
		sc.ws()
	}
	key, ok = sc.key()
	if !ok {
		return nil, false, false
	}
	sc.ws()
	if sc.peek() != ':' {
		return nil, false, false
	}
	sc.i++
	sc.ws()
	return key, false, true
}

// shortKeyEnd is the index of the quote that ends the key opening at
// b[i] (a quote), when the key is short printable ASCII without escapes;
// -1 otherwise. Byte by byte: cheaper than str's word-at-a-time setup for
// the few bytes keys are.
func shortKeyEnd(b []byte, i int) int {
	for j, end := i+1, min(len(b), i+24); j < end; j++ {
		if c := b[j]; c == '"' {
			return j
		} else if c < 0x20 || c >= utf8.RuneSelf || c == '\\' {
			return -1
		}
	}
	return -1
}

// key reads an object key, unquoted (escapes are rare: the slow path).
func (sc *scanner) key() ([]byte, bool) {
	if sc.peek() != '"' {
		return nil, false
	}
	start := sc.i
	if j := shortKeyEnd(sc.b, start); j >= 0 {
		sc.i = j + 1
		return sc.b[start+1 : j], true
	}
	plain, ok := sc.str()
	if !ok {
		return nil, false
	}
	if plain {
		return sc.b[start+1 : sc.i-1], true
	}
	var s string
	if json.Unmarshal(sc.b[start:sc.i], &s) != nil {
		return nil, false
	}
	return []byte(s), true
}

// keyIs matches a key the way encoding/json does: exactly, or folded.
func keyIs(key []byte, want string) bool {
	return string(key) == want || (len(key) >= len(want)/2 && bytes.EqualFold(key, []byte(want)))
}

// keySet is the members one reader looks for, in the order it tries them,
// with what lets most other ASCII keys be turned away at a glance: the
// lengths and the (lower-cased) first bytes of its names.
type keySet struct {
	names  []string
	lens   uint64    // bit n: a name is n bytes long (names are shorter than 64)
	firsts [4]uint64 // bit c: a name begins with byte c, either case for a letter
}

func newKeySet(names ...string) *keySet {
	k := &keySet{names: names}
	for _, n := range names {
		k.lens |= 1 << len(n)
		c := ascii.Lower(n[0])
		k.firsts[c>>6] |= 1 << (c & 63)
	}
	return k
}

// keyName is the one of set's names that key matches as encoding/json
// matches a member, "" when none: an exact name first (the common case, no
// folding), else the first that matches folded. No two names fold to each
// other, so this is the first of names that keyIs accepts.
func keyName(key []byte, set *keySet) string {
	for _, n := range set.names {
		// Length and first byte inline: most names are not the key, and
		// each comparison would otherwise be a call.
		if len(key) == len(n) && key[0] == n[0] && string(key) == n {
			return n
		}
	}
	return foldedKeyName(key, set)
}

// envelopeKey, paramsKey and resultKey are keyName for the members every
// message has, an exact key found by a switch (which the compiler makes a
// search by length, then bytes: the loop compared it with each name in
// turn), the rest folded as keyName does.
func envelopeKey(key []byte) string {
	switch string(key) {
	case "jsonrpc":
		return "jsonrpc"
	case "id":
		return "id"
	case "method":
		return "method"
	case "params":
		return "params"
	case "result":
		return "result"
	case "error":
		return "error"
	}
	return foldedKeyName(key, envelopeKeys)
}

func paramsKey(key []byte) string {
	switch string(key) {
	case "progressToken":
		return "progressToken"
	case "progress":
		return "progress"
	case "total":
		return "total"
	case "message":
		return "message"
	case "requestId":
		return "requestId"
	case "name":
		return "name"
	case "uri":
		return "uri"
	case "taskId":
		return "taskId"
	case "_meta":
		return "_meta"
	}
	return foldedKeyName(key, paramsKeys)
}

func resultKey(key []byte) string {
	switch string(key) {
	case "resultType":
		return "resultType"
	case "isError":
		return "isError"
	case "task":
		return "task"
	}
	return foldedKeyName(key, resultKeys)
}

// foldedKeyName is keyName for a key that is none of set's names exactly.
func foldedKeyName(key []byte, set *keySet) string {
	if len(key) == 0 {
		return ""
	}
	// An ASCII key folds to an (ASCII) name only at its length and with its
	// first letter: most keys are names of neither, and each would cost an
	// EqualFold per name.
	asciiKey := true
	for _, c := range key {
		if c >= utf8.RuneSelf {
			asciiKey = false
			break
		}
	}
	first := ascii.Lower(key[0])
	if asciiKey && (len(key) >= 64 || set.lens&(1<<len(key)) == 0 || set.firsts[first>>6]&(1<<(first&63)) == 0) {
		return ""
	}
	for _, n := range set.names {
		if asciiKey && (len(key) != len(n) || first != ascii.Lower(n[0])) {
			continue
		}
		if keyIs(key, n) {
			return n
		}
	}
	return ""
}

// The members each reader looks for, in the order it tries them.
var (
	envelopeKeys = newKeySet("jsonrpc", "id", "method", "params", "result", "error")
	errorKeys    = newKeySet("code", "message", "data")
	paramsKeys   = newKeySet("progressToken", "progress", "total", "message", "requestId", "name", "uri", "taskId", "_meta")
	metaKeys     = newKeySet("progressToken", metaSubscriptionID)
	resultKeys   = newKeySet("resultType", "isError", "task")
)

// stringInto reads a string (or null, which leaves dst alone) into dst.
func (sc *scanner) stringInto(dst *string) bool {
	start := sc.i
	if sc.peek() != '"' {
		if sc.literal("null") {
			return true
		}
		if !sc.skip() {
			return false
		}
		sc.bad = true
		return true
	}
	plain, ok := sc.str()
	if !ok {
		return false
	}
	*dst = unquote(sc.b[start:sc.i], plain)
	return true
}

// unquote turns a scanned string token into Go text, as encoding/json
// does (invalid UTF-8 becomes U+FFFD).
func unquote(tok []byte, plain bool) string {
	if plain {
		return word(tok[1 : len(tok)-1])
	}
	var s string
	_ = json.Unmarshal(tok, &s)
	return s
}

func (sc *scanner) rpcError(dst **RPCError) bool {
	if sc.literal("null") {
		*dst = nil
		return true
	}
	if sc.peek() != '{' {
		if !sc.skip() {
			return false
		}
		sc.bad = true
		return true
	}
	if *dst == nil {
		*dst = &RPCError{}
	}
	e := *dst
	return sc.object(func(key []byte) bool {
		start := sc.i
		switch keyName(key, errorKeys) {
		case "code":
			if sc.literal("null") {
				return true
			}
			if !sc.skip() {
				return false
			}
			n, err := strconv.ParseInt(string(sc.b[start:sc.i]), 10, 64)
			if err != nil {
				sc.bad = true // not an integer that fits: json.Unmarshal fails too
			} else {
				e.Code = n
			}
		case "message":
			return sc.stringInto(&e.Message)
		case "data":
			if !sc.skip() {
				return false
			}
			e.Data = sc.b[start:sc.i]
		default:
			return sc.skip()
		}
		return true
	})
}

func (sc *scanner) literal(lit string) bool {
	if len(sc.b)-sc.i >= len(lit) && string(sc.b[sc.i:sc.i+len(lit)]) == lit {
		sc.i += len(lit)
		return true
	}
	return false
}

// skip steps over one valid JSON value.
func (sc *scanner) skip() bool {
	switch c := sc.peek(); {
	case c == '"':
		_, ok := sc.str()
		return ok
	case c == '{':
		// object's walk as a loop: a closure call a member was a tenth
		// of stepping over an object.
		if !sc.enter() {
			return false
		}
		for first := true; ; first = false {
			_, done, ok := sc.member(first)
			if !ok {
				return false
			}
			if done {
				return true
			}
			if !sc.skip() {
				return false
			}
		}
	case c == '[':
		return sc.array()
	case c == '-' || (c >= '0' && c <= '9'):
		return sc.number()
	case c == 't':
		return sc.literal("true")
	case c == 'f':
		return sc.literal("false")
	case c == 'n':
		return sc.literal("null")
	}
	return false
}

func (sc *scanner) array() bool {
	sc.i++
	if sc.depth++; sc.depth > maxDepth {
		return false
	}
	sc.ws()
	if sc.peek() == ']' {
		sc.i++
		sc.depth--
		return true
	}
	for {
		sc.ws()
		if !sc.skip() {
			return false
		}
		sc.ws()
		switch sc.peek() {
		case ',':
			sc.i++
		case ']':
			sc.i++
			sc.depth--
			return true
		default:
			return false
		}
	}
}

// str steps over a string token; plain reports that it has no escapes and
// is valid UTF-8, so its bytes are its text.
func (sc *scanner) str() (plain, ok bool) {
	if sc.quotes != nil {
		if j := sc.closing(sc.i); j >= 0 {
			sc.i = j + 1
			return true, true
		}
	}
	sc.i++ // the opening quote
	plain = true
	for sc.i < len(sc.b) {
		// Plain text, eight bytes at a time (jsonscan.PlainRun, inline:
		// most strings are short, and the call would cost more than them).
		for sc.i+8 <= len(sc.b) {
			if m := jsonscan.SpecialMask(binary.LittleEndian.Uint64(sc.b[sc.i:])); m != 0 {
				sc.i += bits.TrailingZeros64(m) / 8
				break
			}
			sc.i += 8
		}
		if sc.i+8 > len(sc.b) {
			sc.i = jsonscan.PlainRun(sc.b, sc.i)
		}
		if sc.i >= len(sc.b) {
			break
		}
		c := sc.b[sc.i]
		switch {
		case c == '"':
			sc.i++
			return plain, true
		case c == '\\':
			plain = false
			sc.i++
			if sc.i >= len(sc.b) {
				return false, false
			}
			switch sc.b[sc.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				sc.i++
			case 'u':
				if hex4(sc.b[sc.i-1:]) < 0 {
					return false, false
				}
				sc.i += 5
			default:
				return false, false
			}
		case c < 0x20:
			return false, false
		case c < utf8.RuneSelf:
			sc.i++
		default:
			r, n := utf8.DecodeRune(sc.b[sc.i:])
			if r == utf8.RuneError && n == 1 {
				plain = false // becomes U+FFFD when unquoted
			}
			sc.i += n
		}
	}
	return false, false
}

func (sc *scanner) number() bool {
	if sc.i >= len(sc.b) {
		return false
	}
	e := jsonscan.SkipNumber(sc.b, sc.i)
	if e < 0 {
		return false
	}
	sc.i = e
	return true
}

// readParams reads the members of params correlation needs from params,
// which is known to be valid JSON.
func readParams(params []byte, h *Hints) {
	sc := scanner{b: params}
	sc.ws()
	h.paramHints = paramHints{}
	sc.params(h)
}

// params steps over the value at sc.i (false: it is not valid JSON) and
// reads on the way what correlation needs from it as params, so the
// envelope's one pass reads it once.
func (sc *scanner) params(h *Hints) bool {
	if sc.literal("null") {
		return true // json.Unmarshal of null leaves every field alone
	}
	if sc.peek() != '{' {
		h.ProgressBad = true
		return sc.skip()
	}
	var name, uri, taskID string
	nameBad := false
	if !sc.enter() {
		return false
	}
	for first := true; ; first = false {
		key, done, ok := sc.member(first)
		if !ok {
			return false
		}
		if done {
			break
		}
		start := sc.i
		switch k := paramsKey(key); k {
		case "progressToken":
			ok = sc.skip()
			h.Token = sc.b[start:sc.i]
		case "progress", "total":
			dst := &h.Progress
			if k == "total" {
				dst = &h.Total
			}
			ok = sc.skip()
			h.ProgressBad = !floatOf(sc.b[start:sc.i], dst) || h.ProgressBad
		case "message":
			var typed bool
			typed, ok = sc.stringMember(&h.Message)
			h.ProgressBad = !typed || h.ProgressBad
		case "requestId":
			ok = sc.skip()
			h.RequestID = sc.b[start:sc.i]
		case "name", "uri", "taskId":
			dst := &name
			if k == "uri" {
				dst = &uri
			} else if k == "taskId" {
				dst = &taskID
			}
			var typed bool
			typed, ok = sc.stringMember(dst)
			nameBad = !typed || nameBad
		case "_meta":
			ok = sc.meta(h)
		default:
			ok = sc.skip()
		}
		if !ok {
			return false
		}
	}
	if !nameBad {
		h.Name = name
		if h.Name == "" {
			h.Name = uri
		}
		if h.Name == "" {
			h.Name = taskID
		}
	}
	if h.MetaBad {
		h.MetaToken, h.SubscriptionID = nil, nil
	}
	return true
}

// stringMember reads a string (or null) into dst: ok false for bytes that
// are not JSON, typed false for a value json.Unmarshal into a string
// fails on.
func (sc *scanner) stringMember(dst *string) (typed, ok bool) {
	bad := sc.bad
	sc.bad = false
	ok = sc.stringInto(dst)
	typed = !sc.bad
	sc.bad = bad
	return typed, ok
}

// meta steps over params._meta, reading the progress token of a request
// and the subscription id of a listen stream's notification. Like
// json.Unmarshal into the structs this replaces, a _meta that is not an
// object yields neither.
func (sc *scanner) meta(h *Hints) bool {
	if sc.literal("null") {
		return true
	}
	if sc.peek() != '{' {
		h.MetaBad = true
		return sc.skip()
	}
	if !sc.enter() {
		return false
	}
	for first := true; ; first = false {
		key, done, ok := sc.member(first)
		if !ok {
			return false
		}
		if done {
			return true
		}
		start := sc.i
		if !sc.skip() {
			return false
		}
		switch keyName(key, metaKeys) {
		case "progressToken":
			h.MetaToken = sc.b[start:sc.i]
		case metaSubscriptionID:
			h.SubscriptionID = sc.b[start:sc.i]
		}
	}
}

// floatOf reads a number value (or null) as json.Unmarshal into float64
// would: false for any other value.
func floatOf(v []byte, dst *float64) bool {
	if string(v) == "null" {
		return true
	}
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return false
	}
	if len(v) <= 15 && v[0] != '-' {
		// A small non-negative integer (progress counts mostly are) is
		// exact in a float64: no need for ParseFloat.
		n := 0
		for _, c := range v {
			if c < '0' || c > '9' {
				n = -1
				break
			}
			n = n*10 + int(c-'0')
		}
		if n >= 0 {
			*dst = float64(n)
			return true
		}
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return false
	}
	*dst = f
	return true
}

// readResult reads result.resultType, result.isError and whether a task
// came back, the only things correlation needs from a result, which is
// known to be valid JSON.
func readResult(result []byte, h *Hints) {
	sc := scanner{b: result}
	sc.ws()
	h.resultHints = resultHints{}
	sc.result(h)
}

// result steps over the value at sc.i (false: it is not valid JSON),
// reading on the way what correlation needs from it as a result.
func (sc *scanner) result(h *Hints) bool {
	if sc.peek() != '{' {
		return sc.skip()
	}
	var rt string
	rtBad, errBad := false, false
	var isErr bool
	if !sc.enter() {
		return false
	}
	for first := true; ; first = false {
		key, done, ok := sc.member(first)
		if !ok {
			return false
		}
		if done {
			break
		}
		start := sc.i
		switch resultKey(key) {
		case "resultType":
			var typed bool
			typed, ok = sc.stringMember(&rt)
			rtBad = !typed || rtBad
		case "isError":
			switch {
			case sc.literal("true"):
				isErr = true
			case sc.literal("false"):
				isErr = false
			case sc.literal("null"):
			default:
				ok = sc.skip()
				errBad = true
			}
		case "task":
			ok = sc.skip()
			h.HasTask = string(sc.b[start:sc.i]) != "null"
		default:
			ok = sc.skip()
		}
		if !ok {
			return false
		}
	}
	if !rtBad {
		h.ResultType = rt
	}
	h.ResultTypeBad = rtBad
	h.IsError = isErr && !errBad
	return true
}

// DecodeHead reads what the head of a huge message says about it (the
// members before the cut: usually jsonrpc, id, method, error), for an
// item held as a prefix. nil when the head names none of them.
func DecodeHead(data []byte) *Envelope {
	sc := scanner{b: data}
	sc.ws()
	if !sc.enter() {
		return nil
	}
	e := &Envelope{}
	for first := true; ; first = false {
		key, done, ok := sc.member(first)
		if !ok || done {
			break // the head ends (or the object does)
		}
		start := sc.i
		if !sc.skip() {
			break // the value runs past the cut
		}
		v := sc.b[start:sc.i]
		switch {
		case keyIs(key, "jsonrpc") && v[0] == '"':
			_, plain := (&scanner{b: v}).str()
			e.JSONRPC = unquote(v, plain)
		case keyIs(key, "method") && v[0] == '"':
			_, plain := (&scanner{b: v}).str()
			e.Method = unquote(v, plain)
		case keyIs(key, "id"):
			e.ID = bytes.Clone(v)
		case keyIs(key, "error"):
			sub := scanner{b: v}
			sub.rpcError(&e.Error)
		}
	}
	if e.Method == "" && e.ID == nil && e.Error == nil {
		return nil
	}
	return SmallEnvelope(e)
}
