// Package themes turns a palette of semantic colour tokens into the lipgloss
// styles the UI draws with. Built in: dark, light, high-contrast, and a
// colourless theme used when NO_COLOR is set (https://no-color.org).
package themes

import (
	"encoding/json"
	"errors"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"charm.land/lipgloss/v2"

	"mcpscope/internal/xdg"
)

// Palette names colours by what they mean, not what they look like, so a
// theme is a palette and nothing else.
type Palette struct {
	Text, Faint, Accent, Border, Selection, SelectionText string
	OK, Warn, Error, Info, Pending, Late                  string
	JSONKey, JSONString, JSONNumber, JSONLiteral, Match   string
}

// Theme is a palette rendered into styles. Styles are values: copy freely.
type Theme struct {
	Name    string
	NoColor bool

	Text, Faint, Title, Accent, Border lipgloss.Style
	Selected, StatusBar, HelpKey       lipgloss.Style
	OK, Warn, Error, Info, Pending     lipgloss.Style
	Late, Cancelled                    lipgloss.Style
	JSONKey, JSONString, JSONNumber    lipgloss.Style
	JSONLiteral, JSONPunct, Match      lipgloss.Style
	BarDone, BarTodo                   lipgloss.Style
	Levels                             map[string]lipgloss.Style // log level → style
}

var palettes = map[string]Palette{
	"dark": {
		Text: "#d0d0d0", Faint: "#7a7a7a", Accent: "#87afff", Border: "#4e4e4e", Selection: "#3a3a5a", SelectionText: "#ffffff",
		OK: "#87d787", Warn: "#ffd75f", Error: "#ff5f5f", Info: "#5fd7ff", Pending: "#d7afff", Late: "#ff875f",
		JSONKey: "#87afff", JSONString: "#afd787", JSONNumber: "#ffaf5f", JSONLiteral: "#d787d7", Match: "#ffff00",
	},
	"light": {
		Text: "#262626", Faint: "#6c6c6c", Accent: "#005fd7", Border: "#bcbcbc", Selection: "#d7d7ff", SelectionText: "#000000",
		OK: "#008700", Warn: "#af5f00", Error: "#d70000", Info: "#0087af", Pending: "#8700af", Late: "#d75f00",
		JSONKey: "#005fd7", JSONString: "#5f8700", JSONNumber: "#af5f00", JSONLiteral: "#8700af", Match: "#ffd700",
	},
	"high-contrast": {
		Text: "#ffffff", Faint: "#c0c0c0", Accent: "#00ffff", Border: "#ffffff", Selection: "#ffff00", SelectionText: "#000000",
		OK: "#00ff00", Warn: "#ffff00", Error: "#ff0000", Info: "#00ffff", Pending: "#ff00ff", Late: "#ff8000",
		JSONKey: "#00ffff", JSONString: "#00ff00", JSONNumber: "#ffff00", JSONLiteral: "#ff00ff", Match: "#ff00ff",
	},
}

// Names lists the built-in themes in the order the UI cycles through them.
func Names() []string { return []string{"dark", "light", "high-contrast"} }

// ByName returns a built-in theme; unknown names get dark.
func ByName(name string) Theme {
	p, ok := palettes[name]
	if !ok {
		name, p = "dark", palettes["dark"]
	}
	return build(name, p)
}

// Plain is the colourless theme: structure comes from bold, faint, reverse
// and underline only, so it stays readable with NO_COLOR.
func Plain() Theme {
	s := lipgloss.NewStyle
	t := Theme{Name: "no-color", NoColor: true,
		Text: s(), Faint: s().Faint(true), Title: s().Bold(true), Accent: s().Bold(true), Border: s().Faint(true),
		Selected: s().Reverse(true), StatusBar: s().Reverse(true), HelpKey: s().Bold(true),
		OK: s(), Warn: s().Bold(true), Error: s().Bold(true).Underline(true), Info: s(), Pending: s().Italic(true),
		Late: s().Bold(true), Cancelled: s().Faint(true),
		JSONKey: s().Bold(true), JSONString: s(), JSONNumber: s(), JSONLiteral: s().Italic(true), JSONPunct: s().Faint(true),
		Match: s().Reverse(true), BarDone: s().Reverse(true), BarTodo: s().Faint(true),
	}
	t.Levels = levels(t)
	return t
}

// FromEnv picks the theme: NO_COLOR (any non-empty value) wins over name.
func FromEnv(name string) Theme {
	if NoColorSet(os.Getenv) {
		return Plain()
	}
	return ByName(name)
}

// NoColorSet reports whether NO_COLOR asks for no colour.
func NoColorSet(getenv func(string) string) bool {
	return strings.TrimSpace(getenv("NO_COLOR")) != ""
}

func build(name string, p Palette) Theme {
	c := func(s string) color.Color { return lipgloss.Color(s) }
	s := lipgloss.NewStyle
	fg := func(x string) lipgloss.Style { return s().Foreground(c(x)) }
	t := Theme{Name: name,
		Text: fg(p.Text), Faint: fg(p.Faint), Title: fg(p.Accent).Bold(true), Accent: fg(p.Accent), Border: fg(p.Border),
		Selected:  s().Background(c(p.Selection)).Foreground(c(p.SelectionText)),
		StatusBar: s().Background(c(p.Border)).Foreground(c(p.SelectionText)),
		HelpKey:   fg(p.Accent).Bold(true),
		OK:        fg(p.OK), Warn: fg(p.Warn), Error: fg(p.Error).Bold(true), Info: fg(p.Info), Pending: fg(p.Pending),
		Late: fg(p.Late).Bold(true), Cancelled: fg(p.Faint).Strikethrough(true),
		JSONKey: fg(p.JSONKey), JSONString: fg(p.JSONString), JSONNumber: fg(p.JSONNumber), JSONLiteral: fg(p.JSONLiteral),
		JSONPunct: fg(p.Faint), Match: s().Background(c(p.Match)).Foreground(c("#000000")),
		BarDone: fg(p.Accent), BarTodo: fg(p.Border),
	}
	t.Levels = levels(t)
	return t
}

func levels(t Theme) map[string]lipgloss.Style {
	return map[string]lipgloss.Style{
		"debug": t.Faint, "info": t.Text, "notice": t.Info, "warning": t.Warn,
		"error": t.Error, "critical": t.Error.Reverse(true), "alert": t.Error.Reverse(true), "emergency": t.Error.Reverse(true),
	}
}

// Level styles a log level; unknown levels look like info.
func (t Theme) Level(level string) lipgloss.Style {
	if st, ok := t.Levels[level]; ok {
		return st
	}
	return t.Text
}

// Settings is where the theme a person chose is kept:
// $XDG_CONFIG_HOME/mcpscope/settings.json (default ~/.config/mcpscope).
func Settings() string {
	dir := xdg.ConfigDir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "settings.json")
}

// Saved is the theme chosen last time ("" when none was, or it is not a
// built-in one any more).
func Saved() string {
	b, err := os.ReadFile(Settings())
	if err != nil {
		return ""
	}
	var s struct {
		Theme string `json:"theme"`
	}
	if json.Unmarshal(b, &s) != nil {
		return ""
	}
	if _, ok := palettes[s.Theme]; !ok {
		return ""
	}
	return s.Theme
}

// Save keeps name as the chosen theme, keeping whatever else the settings
// file holds; written atomically.
func Save(name string) error {
	path := Settings()
	if path == "" {
		return errors.New("no home directory to keep the theme in")
	}
	m := map[string]json.RawMessage{}
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	m["theme"], _ = json.Marshal(name)
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
