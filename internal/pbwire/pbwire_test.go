package pbwire

import (
	"bytes"
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestAsProtowire: what is written and read here is what protowire
// writes and reads, on the edges of varints, tags and lengths and on
// malformed input.
func TestAsProtowire(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 300, 1<<35 - 1, math.MaxInt64, math.MaxUint64, uint64(1<<64 - 1 - 5)} {
		if got, want := AppendVarint([]byte("k"), v), protowire.AppendVarint([]byte("k"), v); !bytes.Equal(got, want) {
			t.Errorf("varint %d: %x, protowire %x", v, got, want)
		}
		if got, want := AppendFixed64(nil, v), protowire.AppendFixed64(nil, v); !bytes.Equal(got, want) {
			t.Errorf("fixed64 %d: %x, protowire %x", v, got, want)
		}
	}
	for _, num := range []int32{1, 15, 16, 2047, 1<<29 - 1} {
		for _, typ := range []Type{VarintType, Fixed64Type, BytesType, Fixed32Type} {
			if got, want := AppendTag(nil, num, typ), protowire.AppendTag(nil, protowire.Number(num), protowire.Type(typ)); !bytes.Equal(got, want) {
				t.Errorf("tag %d/%d: %x, protowire %x", num, typ, got, want)
			}
		}
	}
	long := bytes.Repeat([]byte("x"), 300)
	if got, want := AppendBytes(nil, long), protowire.AppendBytes(nil, long); !bytes.Equal(got, want) {
		t.Error("bytes of 300")
	}
	if got, want := AppendString(nil, "é"), protowire.AppendString(nil, "é"); !bytes.Equal(got, want) {
		t.Error("string")
	}
	inputs := [][]byte{nil, {0}, {0x80}, {0x08}, {0x08, 0x96, 0x01}, {0x0a, 0x02, 'h'}, {0x0a, 0x01, 'h'}, {0x0d, 1, 2, 3}, {0x0d, 1, 2, 3, 4},
		{0x09, 1, 2, 3, 4, 5, 6, 7}, {0x09, 1, 2, 3, 4, 5, 6, 7, 8}, {0x0b, 0x08, 0x01, 0x0c}, {0x0b, 0x08, 0x01, 0x14}, {0x0b}, {0x0c}, {0x0e},
		{0x0f}, bytes.Repeat([]byte{0xff}, 9), append(bytes.Repeat([]byte{0xff}, 9), 1), append(bytes.Repeat([]byte{0xff}, 9), 2),
		{0xf8, 0xff, 0xff, 0xff, 0x0f, 0}, {0xf8, 0xff, 0xff, 0xff, 0x1f, 0}, {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}}
	for _, in := range inputs {
		v, n := ConsumeVarint(in)
		wv, wn := protowire.ConsumeVarint(in)
		if v != wv || (n < 0) != (wn < 0) || (n >= 0 && n != wn) {
			t.Errorf("varint of %x: %d %d, protowire %d %d", in, v, n, wv, wn)
		}
		num, typ, n := ConsumeTag(in)
		wnum, wtyp, wn := protowire.ConsumeTag(in)
		if (n < 0) != (wn < 0) || (n >= 0 && (n != wn || num != int32(wnum) || typ != Type(wtyp))) {
			t.Errorf("tag of %x: %d %d %d, protowire %d %d %d", in, num, typ, n, wnum, wtyp, wn)
		}
		if n < 0 {
			continue
		}
		rest := in[n:]
		fn, wfn := ConsumeFieldValue(num, typ, rest), protowire.ConsumeFieldValue(wnum, wtyp, rest)
		if (fn < 0) != (wfn < 0) || (fn >= 0 && fn != wfn) {
			t.Errorf("field value of %x: %d, protowire %d", in, fn, wfn)
		}
		if typ == BytesType {
			b, bn := ConsumeBytes(rest)
			wb, wbn := protowire.ConsumeBytes(rest)
			if !bytes.Equal(b, wb) || (bn < 0) != (wbn < 0) || (bn >= 0 && bn != wbn) {
				t.Errorf("bytes of %x: %x %d, protowire %x %d", in, b, bn, wb, wbn)
			}
		}
	}
}
