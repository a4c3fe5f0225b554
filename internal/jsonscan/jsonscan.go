// Package jsonscan holds the small pieces the hand-written JSON scanners
// (the proxy's envelope scanner, the detail view's indexer) and the
// journal encoders share, and the JSON string escapers (escape.go: the
// journal's rule and encoding/json's, and why there are two).
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

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

// SkipNumber returns the index after the JSON number starting at b[i],
// or -1 where b holds none there.
func SkipNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// PlainRun returns the index of the first byte at or after b[i] that a
// JSON string cannot hold as itself or that needs a closer look: '"',
// '\\', a control byte (< 0x20) or a non-ASCII byte; len(b) when none.
// It tests eight bytes at a time, so the runs of plain text between
// escapes cost a fraction of a byte-by-byte loop.
func PlainRun(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := SpecialMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return i
}

const (
	ones = 0x0101010101010101
	high = 0x8080808080808080
	low7 = ^uint64(high)
)

// SpecialMask flags (with its high bit) each byte of x that is '"',
// '\\', below 0x20 or 0x80 and above; 0 when none is. Every flag is
// exact: each byte is tested on its own low 7 bits, where no sum
// carries into the next byte. So the lowest flagged byte
// (bits.TrailingZeros64(m)/8, x read little-endian) is the first special
// one, and a loop may take the flags one by one.
func SpecialMask(x uint64) uint64 {
	return high &^ (printable(x&low7) &^ x) // &^ x: and below 0x80
}

// printable has the high bit set of each byte of t (bytes of 7 bits) that
// is ≥ 0x20, is not '"' and is not '\\': each term's sum stays within its
// byte, so the two masks' flags are exact.
func printable(t uint64) uint64 {
	return (t + ones*0x60) & ((t ^ ones*'"') + low7) & ((t ^ ones*'\\') + low7)
}

// SpecialDELMask is SpecialMask with DEL (0x7f) flagged too: the bytes the
// journal's string writers escape or look at (a DEL is escaped beyond
// ASCII's rules). Every flag is exact, as SpecialMask's.
func SpecialDELMask(x uint64) uint64 {
	t := x & low7
	// t+1 has its high bit set where t is 0x7f: DEL (or 0xff, flagged
	// already).
	return high &^ (printable(t) &^ (x | (t + ones)))
}

// ByteMask flags (with its high bit) each byte of x that is c, exactly.
func ByteMask(x uint64, c byte) uint64 {
	t := x ^ (ones * uint64(c))
	return ^((t&low7 + low7) | t | low7)
}

// CommonPrefix is how many bytes a and b begin with alike, compared eight
// at a time (the encoders' memos of the last line).
func CommonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)>>3
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// Word is the eight bytes of b from i, little-endian; past b's end (fewer
// than eight left) they read as 0, which SpecialDELMask flags as a control
// and ByteMask flags only for c 0. A loop over b eight bytes at a time
// needs no second loop for its tail.
func Word(b []byte, i int) uint64 {
	if i+8 <= len(b) {
		return binary.LittleEndian.Uint64(b[i:])
	}
	if n := len(b); n >= 8 {
		return binary.LittleEndian.Uint64(b[n-8:]) >> (8 * (8 - (n - i)))
	}
	var v uint64
	for k := len(b) - 1; k >= i; k-- {
		v = v<<8 | uint64(b[k])
	}
	return v
}
