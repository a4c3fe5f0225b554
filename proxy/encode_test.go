package proxy

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"mcpscope/journal"
	"mcpscope/transport"
)

var encodeSeeds = []string{
	floodNote, `{"jsonrpc":"2.0","id":1,"result":{}}`, `not json`, `x`, `"`, `\`, `\\"\"`, "a\tb\rc", "\x00\x01\x1f\x20",
	"ctl \x1b[31m red", "del \x7f", "é", "bidi \u202e txt", "sep \u2028", "c1 \u0085", "bom \ufeff", "bad \xff\xfe utf-8",
	`{"text":"héllo \"wörld\""}`, "{\"a\":\"\x01\"}", string(bytes.Repeat([]byte(`"\`), 500)),
}

// check encodes lines as one run with runEncoder and holds every record to
// journal.AppendRecord's.
func checkRunEncoder(t *testing.T, enc *runEncoder, run *lineRun, lines []string, seq uint64) {
	t.Helper()
	run.data, run.lines = run.data[:0], run.lines[:0]
	vias := []string{transport.ViaHost, "", transport.ViaViewer, transport.ViaDropped}
	for i, l := range lines {
		start := len(run.data)
		run.data = append(run.data, l...)
		run.lines = append(run.lines, runLine{start: start, end: len(run.data), via: vias[i%len(vias)]})
		run.data = append(run.data, '\n')
	}
	var buf []byte
	for i := range run.lines {
		l := &run.lines[i]
		buf = enc.appendLine(buf[:0], seq+uint64(i), run, run.data[l.start:l.end], l.via)
		f := transport.Frame{Time: run.t, Dir: run.dir, Kind: run.kind, Data: run.data[l.start:l.end], Meta: transport.Meta{PID: run.pid, Via: l.via}}
		if f.Kind == 0 {
			f.Kind = transport.Garbage
			if validJSON(f.Data) {
				f.Kind = transport.Message
			}
		}
		if want := journal.AppendRecord(nil, seq+uint64(i), f); !bytes.Equal(buf, want) {
			t.Fatalf("line %q:\n got %s\nwant %s", f.Data, buf, want)
		}
	}
}

// runEncoder writes exactly journal.AppendRecord's records, whatever the
// line, time, dir, kind, pid and via.
func TestRunEncoderIsAppendRecord(t *testing.T) {
	var enc runEncoder
	base := time.Now()
	runs := []*lineRun{
		{t: base, dir: transport.In, pid: 4242},
		{t: base.Add(time.Nanosecond), dir: transport.Out, pid: 4242},
		{t: base.UTC().Add(time.Second), dir: transport.In, kind: transport.Stderr, pid: 7},
		{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), dir: transport.In},
		{t: base.Add(time.Hour), dir: transport.Local, kind: transport.Message, pid: 1},
	}
	for i, run := range runs {
		checkRunEncoder(t, &enc, run, encodeSeeds, uint64(1+i*1000))
		checkRunEncoder(t, &enc, run, encodeSeeds[:3], uint64(1<<40))
	}
	// JSON, and JSON a byte or two from it: the kind is the encoder's own
	// reading of the line.
	checkRunEncoder(t, &enc, runs[0], validSeeds[1:], 1)
	mut := rand.New(rand.NewPCG(7, 8))
	const jsonAlphabet = "{}[],:\"\\ \t\r\n0123456789-+.eEtrufalsn/buxq\x00\x1f\x7f\xff"
	for i := range 50000 {
		b := []byte(validSeeds[mut.IntN(len(validSeeds)-4)])
		for range mut.IntN(3) {
			switch op := mut.IntN(3); {
			case op == 0 && len(b) > 0:
				b[mut.IntN(len(b))] = jsonAlphabet[mut.IntN(len(jsonAlphabet))]
			case op == 1 && len(b) > 0:
				k := mut.IntN(len(b))
				b = append(b[:k], b[k+1:]...)
			default:
				k := mut.IntN(len(b) + 1)
				b = append(b[:k], append([]byte{jsonAlphabet[mut.IntN(len(jsonAlphabet))]}, b[k:]...)...)
			}
		}
		if len(b) > 0 {
			checkRunEncoder(t, &enc, runs[i%2], []string{string(b)}, uint64(i))
		}
	}

	rnd := rand.New(rand.NewPCG(5, 6))
	const alphabet = "{}[]\":,\\ \t\r\x00\x1f\x7fazAZ09"
	for i := range 20000 {
		var line []byte
		for range 1 + rnd.IntN(40) {
			switch rnd.IntN(10) {
			case 0:
				line = append(line, byte(rnd.IntN(256)))
			case 1:
				line = append(line, "é\u202e\u2028\u0085"[rnd.IntN(9):]...)
			default:
				line = append(line, alphabet[rnd.IntN(len(alphabet))])
			}
		}
		checkRunEncoder(t, &enc, runs[i%len(runs)], []string{string(line)}, uint64(i))
	}
}

func FuzzRunEncoder(f *testing.F) {
	for _, s := range encodeSeeds {
		f.Add([]byte(s), uint8(0))
	}
	for _, s := range validSeeds[:len(validSeeds)-4] {
		f.Add([]byte(s), uint8(5))
	}
	f.Fuzz(func(t *testing.T, line []byte, k uint8) {
		if len(line) == 0 {
			return // runs hold no empty lines
		}
		var enc runEncoder
		run := &lineRun{t: time.Unix(0, int64(k)*1e6+int64(len(line))), dir: transport.Dir(1 + k%3), kind: transport.Kind(k % 5), pid: int(k)}
		checkRunEncoder(t, &enc, run, []string{string(line)}, uint64(k))
	})
}

func BenchmarkRunEncoder(b *testing.B) {
	run := &lineRun{t: time.Now(), dir: transport.In, pid: 4242, data: []byte(floodNote)}
	run.lines = []runLine{{start: 0, end: len(floodNote), via: transport.ViaHost}}
	buf := make([]byte, 0, 4096)
	b.Run("runEncoder", func(b *testing.B) {
		var enc runEncoder
		for b.Loop() {
			buf = enc.appendLine(buf[:0], 123456, run, run.data, transport.ViaHost)
		}
	})
	// A flood as the bench's server sends it: lines alike but for a
	// number near their end, numbered in turn.
	flood := make([][]byte, 1000)
	for i := range flood {
		flood[i] = []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"flood","data":"n ` + strconv.Itoa(i*997) + `"}}`)
	}
	b.Run("runEncoder-flood", func(b *testing.B) {
		var enc runEncoder
		for i := 0; b.Loop(); i++ {
			buf = enc.appendLine(buf[:0], uint64(1+i), run, flood[i%len(flood)], transport.ViaHost)
		}
	})
	b.Run("AppendRecord", func(b *testing.B) {
		f := transport.Frame{Time: run.t, Dir: transport.In, Kind: transport.Message, Data: run.data, Meta: transport.Meta{PID: 4242, Via: transport.ViaHost}}
		for b.Loop() {
			buf = journal.AppendRecord(buf[:0], 123456, f)
		}
	})
}

// Lines that begin as the previous one did resume from its checkpoints
// (lineMemo): each record is still AppendRecord's, whatever the lines
// share, where they part, and how deep they nest on the way.
func TestRunEncoderResumes(t *testing.T) {
	var enc runEncoder
	run := &lineRun{t: time.Now(), dir: transport.In, pid: 4242}
	deep := strings.Repeat("[", 70) + strings.Repeat("]", 70)
	pairs := [][2]string{
		{`{"a":1}`, `{}`},
		{`{"a":1}`, `{ }`},
		{`{"a":1,"b":2}`, `{"a":1,"b"}`},
		{`{"a":1,"b":2}`, `{"a":1,"b":2,"c":3}`},
		{`{"a":1,"b":2}`, `{"a":1,"b":2}x`},
		{`{"a":1,"b":2}`, `{"a":1,"b":2`},
		{`{"a":1,"b":2}`, `{"a":1,`},
		{`{"a":1,"b":2}`, `{"a":1,"b":2}` + "\x7f"},
		{`{"a":[1,{"b":2}]}`, `{"a":[1,{"b":2}],"c":3}`},
		{`{"a":[1,{"b":2}]}`, `{"a":[1,{"b":2]}}`},
		{`{"a":` + deep + `,"b":1}`, `{"a":` + deep + `,"b":2}`},
		{`[` + deep + `,{"b":1}]`, `[` + deep + `,{"b":2}]`},
		{`{"a":{"b":` + deep + `,"c":1}}`, `{"a":{"b":` + deep + `,"c":2}}`},
		{strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat(`}`, 70), strings.Repeat(`{"a":`, 70) + "2" + strings.Repeat(`}`, 70)},
		{`{"x":"` + strings.Repeat("y", memoLineMax) + `"}`, `{"x":"` + strings.Repeat("y", memoLineMax) + `"}`},
		{floodNote, floodNote},
		{floodNote, strings.Replace(floodNote, `"info"`, `"warning"`, 1)},
		{floodNote, strings.Replace(floodNote, `"data":`, `"data" :`, 1)},
		{floodNote, strings.Replace(floodNote, `"data":`, `"data\"":`, 1)},
		{floodNote, strings.Replace(floodNote, `"data":"`, `"data":"é`, 1)},
		{floodNote, strings.Replace(floodNote, `"data":"`, "\"data\":\"\x01", 1)},
		{floodNote, strings.Replace(floodNote, `}}`, `}`, 1)},
	}
	for i, p := range pairs {
		checkRunEncoder(t, &enc, run, []string{p[0], p[1], p[0], p[1], p[1]}, uint64(1+10*i))
	}
	// Every seed against itself cut short, a byte changed, and its tail
	// replaced, at every offset.
	const alphabet = "{}[],:\"\\ \t\r0123456789-.eEtrufalsn\x00\x1f\x7f\xff"
	r := rand.New(rand.NewPCG(9, 10))
	for _, s := range append(validSeeds[:len(validSeeds)-4], encodeSeeds...) {
		for k := range len(s) + 1 {
			changed := []byte(s)
			if k < len(s) {
				changed[k] = alphabet[r.IntN(len(alphabet))]
			}
			tail := s[:k] + validSeeds[r.IntN(len(validSeeds)-4)]
			lines := []string{s, s[:k], s, string(changed), s, tail, tail}
			for _, l := range lines {
				if l == "" {
					lines = nil // runs hold no empty lines
				}
			}
			if lines != nil {
				checkRunEncoder(t, &enc, run, lines, uint64(k))
			}
		}
	}
}

// FuzzRunEncoderPair encodes two lines in turn with one encoder, the
// second resuming from the first where they begin alike.
func FuzzRunEncoderPair(f *testing.F) {
	f.Add([]byte(floodNote), []byte(strings.Replace(floodNote, "some", "any", 1)))
	f.Add([]byte(`{"a":{"b":[1,{"c":2}]}}`), []byte(`{"a":{"b":[1,{"c":3}],"d":[]}}`))
	f.Add([]byte(`{"a":1}`), []byte(`{}`))
	f.Add([]byte(`{"a":`+strings.Repeat("[", 70)+strings.Repeat("]", 70)+`,"b":1}`), []byte(`{"a":`+strings.Repeat("[", 70)+strings.Repeat("]", 70)+`,"b":2}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if len(a) == 0 || len(b) == 0 {
			return // runs hold no empty lines
		}
		var enc runEncoder
		run := &lineRun{t: time.Unix(0, int64(len(a))), dir: transport.In, pid: 7}
		checkRunEncoder(t, &enc, run, []string{string(a), string(b), string(a), string(b)}, 1)
	})
}

// BenchmarkAppendLineJSON: the checker and escaper on lines it meets first
// (no memo to resume from), JSON and not (B/s is bytes of line).
func BenchmarkAppendLineJSON(b *testing.B) {
	lines := []struct {
		name  string
		line  []byte
		check bool
	}{
		{"notification", []byte(floodNote), true},
		{"nested", []byte(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"{\"rows\":[{\"id\":1,\"name\":\"alpha\"},{\"id\":2,\"name\":\"beta\"}],\n\"total\":2}"}],"isError":false}}`), true},
		{"prose", []byte(`{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"file:///a.md","text":"` + strings.Repeat("Plain prose of a long resource, line after line. ", 80) + `"}]}}`), true},
		{"notjson", []byte(strings.Repeat(`log: "quoted" and \ plain text, `, 20)), false},
	}
	for _, l := range lines {
		b.Run(l.name, func(b *testing.B) {
			buf := make([]byte, 0, 4*len(l.line))
			b.SetBytes(int64(len(l.line)))
			var mm lineMemo
			for b.Loop() {
				mm.forget()
				buf, _, _ = mm.appendLineJSON(buf[:0], l.line, l.check)
			}
		})
	}
}
