package journal

import (
	"bytes"
	"strings"
	"testing"
)

var benchMsg = []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"flood","data":"n 123456"}}`)
var benchBig = []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"result 7 of search: sunny, 21°C, light wind from the west, and a long paragraph of plain prose that goes on for a while without any quotes at all, as tool results often do"}]}}`)

// benchFrames are the frames BenchmarkUnescapeRaw reads back (jsonscan's
// escaper benchmarks write the same ones), from the commonest (a short notification: a quote every few bytes) to a long
// tool result and one that carries JSON inside a string.
var benchFrames = []struct {
	name string
	data []byte
}{
	{"notification", benchMsg},
	{"result", benchBig},
	{"nested", []byte(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"{\"rows\":[{\"id\":1,\"name\":\"alpha\"},{\"id\":2,\"name\":\"beta\"}],\n\"total\":2}"}],"isError":false}}`)},
	{"prose64k", []byte(`{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"file:///a.md","text":"` +
		strings.Repeat("Plain prose of a long resource, line after line, with hardly anything to escape. ", 800) + `"}]}}`)},
	{"accented", bytes.Repeat([]byte("déjà vu, naïve café, Grüße aus Köln; "), 40)},
	{"cjk", bytes.Repeat([]byte("東京の天気は晴れ、気温は二十一度です。"), 40)},
}

// BenchmarkUnescapeRaw: read-back's string decoder on each frame as the
// journal writes it (B/s is bytes of frame decoded).
func BenchmarkUnescapeRaw(b *testing.B) {
	for _, f := range benchFrames {
		b.Run(f.name, func(b *testing.B) {
			raw := appendJSONString(nil, f.data)
			scratch := &rawScratch{borrow: true}
			b.SetBytes(int64(len(f.data)))
			for b.Loop() {
				if _, _, ok := unescapeRaw(raw, 0, false, false, scratch); !ok {
					b.Fatal("unescapeRaw failed")
				}
			}
		})
	}
}
