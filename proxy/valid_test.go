package proxy

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

var validSeeds = []string{
	``, ` `, `{}`, `[]`, ` {} `, "\t[ ]\r\n", `{`, `}`, `[`, `]`, `{]`, `[}`, `{,}`, `[,]`, `[1,]`, `{"a":1,}`,
	`{"a"}`, `{"a":}`, `{a:1}`, `{"a" 1}`, `{"a":1 "b":2}`, `[1 2]`, `{"a":1}{}`, `{} x`, `"x"`, `"`, `"\`, `"\"`,
	`"\q"`, `"\u12"`, `"\u12g4"`, `"\u12aF"`, `"\/\b\f\n\r\t\\\""`, "\"a\x1fb\"", "\"a\x7fb\"", "\"\xff\xfe\"",
	"\"\u202e\"", `0`, `-0`, `-`, `01`, `-01`, `1.`, `1.5`, `.5`, `1e`, `1e+`, `1e+5`, `1E-5`, `1.5e3`, `-1.5E+03x`,
	`true`, `tru`, `truee`, `false`, `null`, `nul`, `nulls`, `[true,false,null]`, `{"":""}`, `{"a":{"b":[1,{"c":null}]}}`,
	floodNote, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi \"there\""}]}}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
}

// validJSON agrees with encoding/json.Valid, on hand-picked inputs and on
// many random mutations of them.
func TestValidJSONAgreesWithEncodingJSON(t *testing.T) {
	check := func(b []byte) {
		t.Helper()
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	}
	for _, s := range validSeeds {
		check([]byte(s))
	}
	const alphabet = "{}[],:\"\\ \t\r\n0123456789-+.eEtrufalsn/bu\x00\x1f\x7f\xff"
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		b := []byte(validSeeds[r.IntN(len(validSeeds)-4)])
		for range 1 + r.IntN(3) {
			switch op := r.IntN(3); {
			case op == 0 && len(b) > 0:
				b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
			case op == 1 && len(b) > 0:
				i := r.IntN(len(b))
				b = append(b[:i], b[i+1:]...)
			default:
				i := r.IntN(len(b) + 1)
				b = append(b[:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[i:]...)...)
			}
		}
		check(b)
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range validSeeds[:len(validSeeds)-4] { // the deep ones slow the fuzzer down
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

func BenchmarkValidJSON(b *testing.B) {
	line := []byte(floodNote)
	b.Run("validJSON", func(b *testing.B) {
		for b.Loop() {
			validJSON(line)
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		for b.Loop() {
			json.Valid(line)
		}
	})
}
