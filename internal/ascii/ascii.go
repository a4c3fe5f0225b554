// Package ascii holds byte-at-a-time ASCII helpers for the hand-written
// matchers that compare names and text without decoding UTF-8 (the
// journal's key folding, the filter's patterns, the OTLP export's key
// check).
package ascii

// Lower is c in lower case when it is an ASCII letter, else c: a byte of
// a UTF-8 character (0x80 and above) is left as it is.
func Lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
