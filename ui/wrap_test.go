package ui

import (
	"fmt"
	"strings"
	"testing"
)

// wrapSizes are the four sizes the wrapping goldens are pinned at.
var wrapSizes = [][2]int{{60, 20}, {80, 24}, {120, 40}, {200, 60}}

// cityTool has an enum too long for one line and a description of
// several sentences (issue 40, item 6).
const cityTool = `{"tools":[{"name":"forecast","description":"Tells the weather for one of the cities this server knows about, for today or for up to six days ahead, with the temperature in the unit you choose and the chance of rain as a percentage; the numbers come from the national weather services and may lag by an hour",
	"inputSchema":{"type":"object","additionalProperties":false,"properties":{"city":{"type":"string","enum":["New York","Chicago","Los Angeles","San Francisco","Houston","Philadelphia","Phoenix","San Antonio","San Diego","Dallas"],"description":"the city whose weather to tell; only these cities are known to the server, any other is refused with an error"},
	"days":{"type":"integer","minimum":0,"maximum":6}},"required":["city"]}}]}`

// The schema pane wraps a long enum under its property instead of cutting
// it: every city is on the screen, at each size.
func TestGoldenCatalogEnumWraps(t *testing.T) {
	for _, sz := range wrapSizes {
		w, h := sz[0], sz[1]
		name := fmt.Sprintf("catalog-enum-%dx%d", w, h)
		t.Run(name, func(t *testing.T) {
			m := newTestModel(t, loadFixture(t), w, h)
			loadPage(m, 0, cityTool)
			press(m, "catalog")
			got := screen(m)
			checkSize(t, got, w, h)
			golden(t, name, got)
			if !strings.Contains(got, "Dallas") {
				t.Errorf("the enum is cut, Dallas is missing:\n%s", got)
			}
		})
	}
}

// The tool form wraps the tool's description (a few lines, whole words)
// and the focused field's, instead of cutting each to one line.
func TestGoldenToolFormWraps(t *testing.T) {
	for _, sz := range wrapSizes {
		w, h := sz[0], sz[1]
		name := fmt.Sprintf("tool-form-wrap-%dx%d", w, h)
		t.Run(name, func(t *testing.T) {
			m := newTestModel(t, loadFixture(t), w, h)
			loadPage(m, 0, cityTool)
			press(m, "catalog", "open")
			got := screen(m)
			checkSize(t, got, w, h)
			golden(t, name, got)
			flat := strings.Join(strings.Fields(got), " ")
			if !strings.Contains(flat, "chance of rain") {
				t.Errorf("the description is cut to one line:\n%s", got)
			}
			if !strings.Contains(flat, "refused with") {
				t.Errorf("the field's description is cut to one line:\n%s", got)
			}
			for _, l := range strings.Split(got, "\n") {
				if (strings.Contains(l, "weather") || strings.Contains(l, "refused")) && strings.Contains(l, "…") && !strings.Contains(l, " …") {
					t.Errorf("a word is cut: %q", l)
				}
			}
		})
	}
}
