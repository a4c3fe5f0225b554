package session

import "testing"

var benchMsg = []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"flood","data":"n 123456"}}`)
var benchBig = []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"result 7 of search: sunny, 21°C, light wind from the west, and a long paragraph of plain prose that goes on for a while without any quotes at all, as tool results often do"}]}}`)

func BenchmarkEscapeRuns(b *testing.B) {
	var buf []byte
	for b.Loop() {
		buf = appendJSONText(buf[:0], benchMsg)
		buf = appendJSONText(buf[:0], benchBig)
	}
}

func BenchmarkEscapeByteLoop(b *testing.B) {
	var buf []byte
	for b.Loop() {
		buf = escapeByteLoop(buf[:0], benchMsg)
		buf = escapeByteLoop(buf[:0], benchBig)
	}
}
