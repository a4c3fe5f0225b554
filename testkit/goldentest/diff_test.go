package goldentest

import "testing"

func TestUnifiedDiff(t *testing.T) {
	want := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n"
	got := "a\nb\nC\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n"
	const diff = `--- w
+++ g
@@ -1,6 +1,6 @@
 a
 b
-c
+C
 d
 e
 f
@@ -11,3 +11,4 @@
 k
 l
 m
+n
`
	if d := unifiedDiff("w", "g", want, got); d != diff {
		t.Errorf("diff:\n%s\nwant:\n%s", d, diff)
	}
	if d := unifiedDiff("w", "g", want, want); d != "" {
		t.Errorf("equal texts gave a diff:\n%s", d)
	}
}

func TestUnifiedDiffEdges(t *testing.T) {
	for _, c := range []struct{ want, got, diff string }{
		{"", "x\n", "--- w\n+++ g\n@@ -0,0 +1,1 @@\n+x\n"},
		{"x\n", "", "--- w\n+++ g\n@@ -1,1 +0,0 @@\n-x\n"},
		{"x", "x\n", "--- w\n+++ g\n(one ends with a newline and the other does not: w false, g true)\n"},
		{"\x1b[1mx\n", "x\n", "--- w\n+++ g\n@@ -1,1 +1,1 @@\n-\\x1b[1mx\n+x\n"},
	} {
		if d := unifiedDiff("w", "g", c.want, c.got); d != c.diff {
			t.Errorf("%q to %q:\n%s\nwant:\n%s", c.want, c.got, d, c.diff)
		}
	}
}
