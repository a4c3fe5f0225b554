package filter

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// cmp is a comparison of ~dur and ~size.
type cmp uint8

const (
	cmpGE cmp = iota // the default when no operator is written
	cmpGT
	cmpLE
	cmpLT
	cmpEQ
)

// cmpText lists the operators longest first, so ">=" is not read as ">".
var cmpText = []struct {
	text string
	cmp  cmp
}{{">=", cmpGE}, {"<=", cmpLE}, {">", cmpGT}, {"<", cmpLT}, {"=", cmpEQ}}

func (c cmp) String() string {
	for _, t := range cmpText {
		if t.cmp == c {
			return t.text
		}
	}
	return "?"
}

// quantity is "compare with n", n in the kind's base unit (ns or bytes).
type quantity struct {
	cmp cmp
	n   int64
}

func (q quantity) holds(v int64) bool {
	switch q.cmp {
	case cmpGT:
		return v > q.n
	case cmpLE:
		return v <= q.n
	case cmpLT:
		return v < q.n
	case cmpEQ:
		return v == q.n
	}
	return v >= q.n
}

type unit struct {
	name string
	size int64
}

// measure is what ~dur and ~size count: units largest first (String picks
// the largest that divides exactly), aliases only for reading.
type measure struct {
	what     string // "duration", "size"
	units    []unit
	aliases  []unit
	needUnit bool // a bare number is an error rather than the base unit
}

var durations = &measure{
	what: "duration",
	units: []unit{
		{"h", int64(time.Hour)}, {"m", int64(time.Minute)}, {"s", int64(time.Second)},
		{"ms", int64(time.Millisecond)}, {"us", int64(time.Microsecond)}, {"ns", 1},
	},
	aliases:  []unit{{"µs", int64(time.Microsecond)}},
	needUnit: true,
}

var sizes = &measure{
	what: "size",
	units: []unit{
		{"GiB", 1 << 30}, {"GB", 1e9}, {"MiB", 1 << 20}, {"MB", 1e6},
		{"KiB", 1 << 10}, {"KB", 1e3}, {"B", 1},
	},
}

func (m *measure) unitNames() string {
	var names []string
	for _, u := range m.units {
		names = append(names, u.name)
	}
	return strings.Join(names, ", ")
}

// parse reads [op]number[unit], e.g. ">=1.5MiB"; the message of an error
// says what was wrong with text.
func (m *measure) parse(text string) (quantity, error) {
	q := quantity{cmp: cmpGE}
	rest := text
	for _, c := range cmpText {
		if strings.HasPrefix(rest, c.text) {
			q.cmp, rest = c.cmp, rest[len(c.text):]
			break
		}
	}
	num, unitName := splitNumber(rest)
	if num == "" {
		return q, fmt.Errorf("bad %s %q: expected a number, as in >500ms or <1MB", m.what, text)
	}
	u, ok := m.unit(unitName)
	if !ok && unitName == "" {
		return q, fmt.Errorf("bad %s %q: needs a unit (%s)", m.what, text, m.unitNames())
	}
	if !ok {
		return q, fmt.Errorf("bad %s %q: unknown unit %q (use %s)", m.what, text, unitName, m.unitNames())
	}
	r, _ := new(big.Rat).SetString(num) // splitNumber checked the syntax
	r.Mul(r, new(big.Rat).SetInt64(u.size))
	if !r.IsInt() {
		return q, fmt.Errorf("bad %s %q: not a whole number of %s", m.what, text, m.units[len(m.units)-1].name)
	}
	if !r.Num().IsInt64() {
		return q, fmt.Errorf("bad %s %q: too large", m.what, text)
	}
	q.n = r.Num().Int64()
	return q, nil
}

// unit finds a unit by name, ignoring case: the units of one measure differ
// by more than case, and people type mb and MS.
func (m *measure) unit(name string) (unit, bool) {
	if name == "" {
		return m.units[len(m.units)-1], !m.needUnit
	}
	for _, list := range [][]unit{m.units, m.aliases} {
		for _, u := range list {
			if strings.EqualFold(u.name, name) {
				return u, true
			}
		}
	}
	return unit{}, false
}

// splitNumber splits "12.5MB" into "12.5" and "MB"; num is "" when text does
// not start with digits[.digits].
func splitNumber(text string) (num, rest string) {
	i := digits(text, 0)
	if i == 0 {
		return "", text
	}
	if i < len(text) && text[i] == '.' {
		j := digits(text, i+1)
		if j == i+1 {
			return "", text
		}
		i = j
	}
	return text[:i], text[i:]
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// format writes q in the largest unit that holds it exactly.
func (m *measure) format(q quantity) string {
	u := m.units[len(m.units)-1]
	for _, c := range m.units {
		if q.n != 0 && q.n%c.size == 0 {
			u = c
			break
		}
	}
	return q.cmp.String() + strconv.FormatInt(q.n/u.size, 10) + u.name
}
