package themes

import (
	"os"
	"testing"
)

func TestNoColorWins(t *testing.T) {
	env := map[string]string{"NO_COLOR": "1"}
	if !NoColorSet(func(k string) string { return env[k] }) {
		t.Fatal("NO_COLOR=1 not honoured")
	}
	if NoColorSet(func(string) string { return "" }) {
		t.Fatal("empty NO_COLOR must not disable colour")
	}
	t.Setenv("NO_COLOR", "yes")
	if th := FromEnv("dark"); !th.NoColor {
		t.Fatalf("FromEnv with NO_COLOR gave %q", th.Name)
	}
}

func TestByName(t *testing.T) {
	for _, n := range Names() {
		if got := ByName(n).Name; got != n {
			t.Errorf("ByName(%q).Name = %q", n, got)
		}
	}
	if ByName("nope").Name != "dark" {
		t.Error("unknown theme should fall back to dark")
	}
	if ByName("dark").Level("warning").Render("x") == "" {
		t.Error("level style renders nothing")
	}
}

func TestSaveAndSaved(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if Saved() != "" {
		t.Fatal("a fresh config has a saved theme")
	}
	if err := Save("light"); err != nil {
		t.Fatal(err)
	}
	if got := Saved(); got != "light" {
		t.Fatalf("Saved() = %q after Save(light)", got)
	}
	if st, err := os.Stat(Settings()); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("settings file: %v %v", st, err)
	}
}
