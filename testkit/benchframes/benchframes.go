// Package benchframes holds the frames the JSON string benchmarks share:
// jsonscan's escapers write them, journal's read-back decodes them.
package benchframes

import (
	"bytes"
	"strings"
)

// Frame is one benchmark input.
type Frame struct {
	Name string
	Data []byte
}

// Frames go from the commonest (a short notification: a quote every few
// bytes; a tool result of plain prose) to a long resource, one that carries
// JSON inside a string, and text that is mostly multi-byte.
var Frames = []Frame{
	{"notification", []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"flood","data":"n 123456"}}`)},
	{"result", []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"result 7 of search: sunny, 21°C, light wind from the west, and a long paragraph of plain prose that goes on for a while without any quotes at all, as tool results often do"}]}}`)},
	{"nested", []byte(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"{\"rows\":[{\"id\":1,\"name\":\"alpha\"},{\"id\":2,\"name\":\"beta\"}],\n\"total\":2}"}],"isError":false}}`)},
	{"prose64k", []byte(`{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"file:///a.md","text":"` +
		strings.Repeat("Plain prose of a long resource, line after line, with hardly anything to escape. ", 800) + `"}]}}`)},
	{"accented", bytes.Repeat([]byte("déjà vu, naïve café, Grüße aus Köln; "), 40)},
	{"cjk", bytes.Repeat([]byte("東京の天気は晴れ、気温は二十一度です。"), 40)},
}
