package cli

import (
	"reflect"
	"testing"

	"github.com/spf13/pflag"
)

// TestStringArrayAsPflags: the flag reads, prints and reports itself as
// pflag's StringArrayVarP does, in help and in GetStringArray.
func TestStringArrayAsPflags(t *testing.T) {
	var mine, theirs []string
	a, b := pflag.NewFlagSet("a", pflag.ContinueOnError), pflag.NewFlagSet("b", pflag.ContinueOnError)
	stringArrayVarP(a, &mine, "header", "H", "send a header (repeatable)")
	b.StringArrayVarP(&theirs, "header", "H", nil, "send a header (repeatable)")
	if a.FlagUsages() != b.FlagUsages() {
		t.Errorf("usage %q, pflag's %q", a.FlagUsages(), b.FlagUsages())
	}
	fa, fb := a.Lookup("header"), b.Lookup("header")
	if fa.Value.Type() != fb.Value.Type() || fa.Value.String() != fb.Value.String() {
		t.Errorf("default %q type %q string %q, pflag's %q %q %q", fa.DefValue, fa.Value.Type(), fa.Value.String(), fb.DefValue, fb.Value.Type(), fb.Value.String())
	}
	args := []string{"-H", "A: 1", "--header", `B: "x,y"`, "--header=C"}
	if err := a.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := b.Parse(args); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(mine, theirs) || fa.Value.String() != fb.Value.String() {
		t.Errorf("parsed %q (%s), pflag's %q (%s)", mine, fa.Value, theirs, fb.Value)
	}
	ga, errA := a.GetStringArray("header")
	gb, errB := b.GetStringArray("header")
	if !reflect.DeepEqual(ga, gb) || errA != nil || errB != nil {
		t.Errorf("GetStringArray %q %v, pflag's %q %v", ga, errA, gb, errB)
	}
	sa, sb := fa.Value.(pflag.SliceValue), fb.Value.(pflag.SliceValue)
	_ = sa.Replace([]string{"z"})
	_ = sb.Replace([]string{"z"})
	_ = sa.Append("w")
	_ = sb.Append("w")
	if !reflect.DeepEqual(sa.GetSlice(), sb.GetSlice()) || !reflect.DeepEqual(mine, theirs) {
		t.Errorf("after Replace and Append %q, pflag's %q", sa.GetSlice(), sb.GetSlice())
	}
}
