package pager

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"mcpscope/themes"
)

// lineText draws line i of a doc whole, without styling.
func lineText(d *Doc, i int) string {
	it := newIter(d, i, "")
	var b []byte
	for {
		u, _, _, ok := it.next()
		if !ok {
			return string(b)
		}
		b = append(b, u...)
	}
}

// The JSON index lays JSON out exactly as json.Indent does, line for
// line, for hand-picked shapes and random documents.
func TestIndexJSONMatchesIndent(t *testing.T) {
	cases := []string{
		`{}`, `[]`, `1`, `"s"`, `null`,
		`{"a":1,"b":[1,2],"c":{},"d":[],"e":{"f":[{"g":true}]}}`,
		" { \"a\" : [ ] , \"b\" :\n{ \"c\" : \"x\\\"y\" } } ",
		`[[[]],[[1]],{"":""}]`,
		`{"k":"a,b:{c}[d]","esc":"\\\\","u":"\u00e9"}`,
		`[-1.5e+10,0,true,false,null]`,
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		b, _ := json.Marshal(randomJSON(rng, 4))
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		var want bytes.Buffer
		if err := json.Indent(&want, bytes.TrimSpace([]byte(c)), "", "  "); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		var d Doc
		d.AddJSON([]byte(c))
		if got := strings.Join(d.Text(), "\n"); got != want.String() {
			t.Fatalf("%s:\n got %s\nwant %s", c, got, want.String())
		}
	}
}

func randomJSON(r *rand.Rand, depth int) any {
	k := r.Intn(7)
	if depth == 0 {
		k = r.Intn(4)
	}
	switch k {
	case 0:
		return r.Intn(1000) - 500
	case 1:
		return []string{"", "plain", "quote\"d", "back\\slash", "a\nb", "ünï", "{[,:]}"}[r.Intn(7)]
	case 2:
		return r.Intn(2) == 0
	case 3:
		return nil
	case 4, 5:
		m := map[string]any{}
		for j := r.Intn(4); j > 0; j-- {
			m[fmt.Sprint("k", j)] = randomJSON(r, depth-1)
		}
		return m
	}
	var a []any
	for j := r.Intn(4); j > 0; j-- {
		a = append(a, randomJSON(r, depth-1))
	}
	return a
}

// Server bytes are inert on every path: raw lines show control pictures,
// JSON strings keep their meaning as \u escapes, tabs become spaces.
func TestDocInert(t *testing.T) {
	var d Doc
	d.AddRaw([]byte("a\x1b[2Jb\tc\x07\r\nbidi \u202e x\xff"))
	d.AddJSON([]byte(`{"k":"\u001b ok ` + "\u202e" + `"}`))
	d.AddText(clPlain, "text \x1b]52;c;x\x07")
	got := d.Text()
	want := []string{"a␛[2Jb    c␇", "bidi \uFFFD x\uFFFD", "{", `  "k": "\u001b ok \u202e"`, "}", "text ␛]52;c;x␇"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// bigDoc is one JSON result holding a text of n numbered lines, the shape
// of the demo's big tool.
func bigDoc(n int) (*Doc, []byte) {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "line %08d %s\n", i, strings.Repeat(".", 49))
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 5, "result": map[string]any{
		"content": []any{map[string]any{"type": "text", "text": sb.String()}}}})
	var d Doc
	d.AddJSON(b)
	return &d, b
}

func plainRows(p *Pager) []string {
	var out []string
	for _, l := range p.Render(themes.Plain()) {
		_, rest := utf8.DecodeRuneInString(ansi.Strip(l)) // the gutter
		out = append(out, ansi.Strip(l)[rest:])
	}
	return out
}

// A line far longer than the screen wraps into rows that, joined, are
// the line; the end of the doc shows the last of it; without wrap the
// horizontal offset shows the middle.
func TestPagerWrapsAndScrollsAHugeLine(t *testing.T) {
	d, _ := bigDoc(20000)
	p := New(d)
	p.Resize(50, 10)
	textLine := -1
	for i := 0; i < d.n; i++ {
		if strings.Contains(lineText(d, i), "line 00000001") {
			textLine = i
		}
	}
	full := lineText(d, textLine)
	if rows := p.rows(textLine); rows != (len(full)+49)/50 {
		t.Fatalf("%d rows for a line of %d cells at 50", rows, len(full))
	}
	p.End()
	got := strings.Join(plainRows(p), "\n")
	if !strings.Contains(strings.Join(plainRows(p), ""), `line 00020000 `) || !strings.HasSuffix(got, "}") {
		t.Fatalf("the end of the doc:\n%s", got)
	}
	// Walk every row of a huge line from its top: joined, they are the line.
	d, _ = bigDoc(2000)
	p = New(d)
	p.Resize(50, 10)
	full = lineText(d, textLine)
	p.Home()
	for p.top != textLine {
		p.LineDown()
	}
	var sb strings.Builder
	for p.top == textLine {
		rows := plainRows(p)
		sb.WriteString(rows[0])
		before := pos{p.top, p.row}
		p.Scroll(1)
		if (pos{p.top, p.row}) == before {
			break
		}
	}
	if !strings.HasPrefix(full, sb.String()) || sb.Len() < len(full)-50*10 {
		t.Fatalf("rows joined are not the line: %d of %d bytes", sb.Len(), len(full))
	}
	// No wrap: the offset reaches the middle of the line.
	p.SetWrap(false)
	p.cur = textLine
	p.show(false)
	p.x = 100000
	row := plainRows(p)[p.offset(textLine)]
	if mid := full[100000 : 100000+50]; row != mid {
		t.Fatalf("col 100000:\n got %q\nwant %q", row, mid)
	}
}

// Folding hides a container behind one line that says what is inside;
// the cursor moves over it; unfolding brings it back.
func TestPagerFolds(t *testing.T) {
	var d Doc
	d.AddJSON([]byte(`{"a":{"b":1,"c":2},"d":[1,2,3],"e":4}`))
	p := New(&d)
	p.Resize(60, 20)
	p.LineDown() // "a": {
	if !p.ToggleFold() {
		t.Fatal("no fold on an opener")
	}
	rows := plainRows(p)
	if rows[1] != `  "a": {…},  2 keys` || rows[2] != `  "d": [` {
		t.Fatalf("folded:\n%s", strings.Join(rows, "\n"))
	}
	p.LineDown()
	if p.cur != 5 {
		t.Fatalf("the cursor went to line %d, want 5 (past the fold)", p.cur)
	}
	p.LineDown() // 1 inside d: space folds its container
	p.ToggleFold()
	if rows := plainRows(p); rows[2] != `  "d": […],  3 items` || p.cur != 5 {
		t.Fatalf("folding from inside:\n%s (cursor %d)", strings.Join(rows, "\n"), p.cur)
	}
	p.LineUp()
	if p.cur != 1 {
		t.Fatalf("up over a fold went to %d", p.cur)
	}
	p.UnfoldAll()
	p.FoldAll()
	if rows := plainRows(p); len(rows) != 5 || p.Where() != "line 2 of 12 · 2 folded" {
		t.Fatalf("fold all: %q %s", rows, p.Where())
	}
	p.Search("3")
	p.Jump(0)
	if rows := plainRows(p); len(rows) != 9 || p.cur != 8 {
		t.Fatalf("a search hit inside a fold opens it: %q, cursor %d", rows, p.cur)
	}
}

// A search hit deep inside a huge line scrolls to the row that shows it.
func TestPagerSearchInAHugeLine(t *testing.T) {
	d, _ := bigDoc(5000)
	p := New(d)
	p.Resize(70, 12)
	p.Search("LINE 00004321")
	if len(p.hits) != 1 {
		t.Fatalf("%d hits", len(p.hits))
	}
	p.Jump(0)
	if !strings.Contains(strings.Join(plainRows(p), ""), "line 00004321") {
		t.Fatalf("the hit is not on screen:\n%s", strings.Join(plainRows(p), "\n"))
	}
}

// Cursor motion over a tall line scrolls row by row instead of jumping
// past it.
func TestPagerCursorOverTallLine(t *testing.T) {
	var d Doc
	d.AddText(clPlain, "first", strings.Repeat("x", 100), "last")
	p := New(&d)
	p.Resize(10, 4)
	p.LineDown() // onto the 10-row line: its first rows show
	if p.cur != 1 || p.top != 1 || p.row != 0 {
		t.Fatalf("cursor %d top %d row %d", p.cur, p.top, p.row)
	}
	for i := 0; i < 6; i++ {
		p.LineDown() // rows 2..10 come into view one by one
	}
	if p.cur != 1 || p.row != 6 {
		t.Fatalf("after scrolling: cursor %d row %d", p.cur, p.row)
	}
	p.LineDown()
	if p.cur != 2 {
		t.Fatalf("the cursor should reach the next line, at %d", p.cur)
	}
	p.LineUp()
	p.LineUp()
	if p.cur != 1 || p.row != 5 {
		t.Fatalf("up from below shows the end of the tall line first: cursor %d row %d", p.cur, p.row)
	}
}
