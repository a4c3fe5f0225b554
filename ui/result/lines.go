package result

import "encoding/json"

// Styles colour the classes of lines on a terminal (nil: as is).
type Styles struct {
	Faint, Heading, Error func(string) string
}

// ANSI are the styles for a colour terminal.
func ANSI() Styles {
	wrap := func(code string) func(string) string {
		return func(s string) string { return "\x1b[" + code + "m" + s + "\x1b[0m" }
	}
	return Styles{Faint: wrap("2"), Heading: wrap("1;36"), Error: wrap("1;31")}
}

// Render is the result as lines for a terminal: the blocks, styled, JSON
// indented and made inert; false as for Blocks.
func Render(res json.RawMessage, o Options, st Styles) ([]string, bool) {
	bs, ok := Blocks(res, o)
	if !ok {
		return nil, false
	}
	return Lines(bs, st), true
}

// Lines lays blocks out as lines.
func Lines(bs []Block, st Styles) []string {
	var out []string
	for _, b := range bs {
		if b.JSON != nil {
			out = append(out, jsonLines(b.JSON)...)
			continue
		}
		f := map[Class]func(string) string{Faint: st.Faint, Heading: st.Heading, Error: st.Error}[b.Class]
		for _, l := range b.Lines {
			if f != nil && l != "" {
				l = f(l)
			}
			out = append(out, l)
		}
	}
	return out
}
