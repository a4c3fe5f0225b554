// Package pbwire writes and reads the protobuf wire format, the little of
// it OTLP/HTTP needs, as google.golang.org/protobuf/encoding/protowire
// does. It exists so that the binary does not link protobuf: its
// reflection-based runtime and the OTLP message types weighed ~2 MB of
// every build, and even protowire alone runs an init that reads the
// executable, on every start of every command.
package pbwire

import "math"

// Type is a field's wire type.
type Type int8

const (
	VarintType     Type = 0
	Fixed64Type    Type = 1
	BytesType      Type = 2
	StartGroupType Type = 3
	EndGroupType   Type = 4
	Fixed32Type    Type = 5
)

// recursionLimit bounds nested groups, as protowire's default does.
const recursionLimit = 10000

// AppendVarint appends v as a base-128 varint.
func AppendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// AppendTag appends field num's key of wire type typ.
func AppendTag(b []byte, num int32, typ Type) []byte {
	return AppendVarint(b, uint64(num)<<3|uint64(typ&7))
}

// AppendBytes appends v length-delimited.
func AppendBytes(b []byte, v []byte) []byte {
	return append(AppendVarint(b, uint64(len(v))), v...)
}

// AppendMessage appends field num holding the embedded message m
// (already encoded), present even when m is empty.
func AppendMessage(b []byte, num int32, m []byte) []byte {
	return AppendBytes(AppendTag(b, num, BytesType), m)
}

// AppendString appends v length-delimited.
func AppendString(b []byte, v string) []byte {
	return append(AppendVarint(b, uint64(len(v))), v...)
}

// AppendFixed64 appends v little-endian in 8 bytes.
func AppendFixed64(b []byte, v uint64) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
}

// AppendDouble appends v's IEEE 754 bits as a fixed64.
func AppendDouble(b []byte, v float64) []byte { return AppendFixed64(b, math.Float64bits(v)) }

// ConsumeVarint reads a varint: its value and length, or a negative
// length when b does not start with one.
func ConsumeVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 10; i++ {
		if i >= len(b) {
			return 0, -1
		}
		c := b[i]
		if i == 9 && c > 1 {
			return 0, -1 // overflows 64 bits
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, -1
}

// ConsumeTag reads a field's key: its number, wire type and length, or a
// negative length when it is not one (a number outside 1..MaxInt32).
func ConsumeTag(b []byte) (int32, Type, int) {
	v, n := ConsumeVarint(b)
	if n < 0 {
		return 0, 0, n
	}
	if v>>3 > math.MaxInt32 || v>>3 < 1 {
		return 0, 0, -1
	}
	return int32(v >> 3), Type(v & 7), n
}

// ConsumeBytes reads a length-delimited value: the value and the length
// read in all, or a negative length when it is cut short.
func ConsumeBytes(b []byte) ([]byte, int) {
	m, n := ConsumeVarint(b)
	if n < 0 {
		return nil, n
	}
	if m > uint64(len(b[n:])) {
		return nil, -1
	}
	return b[n:][:m], n + int(m)
}

// ConsumeFieldValue is the length of field num's value of type typ at
// the start of b (a group whole, to its end), negative when malformed.
func ConsumeFieldValue(num int32, typ Type, b []byte) int {
	return consumeFieldValue(num, typ, b, recursionLimit)
}

func consumeFieldValue(num int32, typ Type, b []byte, depth int) int {
	switch typ {
	case VarintType:
		_, n := ConsumeVarint(b)
		return n
	case Fixed32Type:
		if len(b) < 4 {
			return -1
		}
		return 4
	case Fixed64Type:
		if len(b) < 8 {
			return -1
		}
		return 8
	case BytesType:
		_, n := ConsumeBytes(b)
		return n
	case StartGroupType:
		if depth < 0 {
			return -1
		}
		n0 := len(b)
		for {
			num2, typ2, n := ConsumeTag(b)
			if n < 0 {
				return n
			}
			b = b[n:]
			if typ2 == EndGroupType {
				if num != num2 {
					return -1
				}
				return n0 - len(b)
			}
			if n = consumeFieldValue(num2, typ2, b, depth-1); n < 0 {
				return n
			}
			b = b[n:]
		}
	}
	return -1 // an end group alone, or a reserved wire type
}
