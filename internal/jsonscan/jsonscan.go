// Package jsonscan holds the small pieces the hand-written JSON scanners
// (the proxy's envelope scanner, the detail view's indexer) share.
package jsonscan

import "bytes"

// SkipString returns the index after the JSON string starting at b[i]
// ('"'), or -1 when it does not end.
func SkipString(b []byte, i int) int {
	j := i + 1
	k := bytes.IndexByte(b[j:], '"')
	if k < 0 {
		return -1
	}
	if bytes.IndexByte(b[j:j+k], '\\') < 0 {
		return j + k + 1 // no escapes: the common case, two vector scans
	}
	for j < len(b) {
		switch b[j] {
		case '"':
			return j + 1
		case '\\':
			j += 2 // an escape: skip the escaped byte
		default:
			j++
		}
	}
	return -1
}
