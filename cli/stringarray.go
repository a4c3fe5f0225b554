package cli

import (
	"bytes"
	"encoding/csv"
	"strings"

	"github.com/spf13/pflag"
)

// stringArrayVarP defines a flag as pflag's StringArrayVarP does (the
// same type name, Set and String, so help, completion and GetStringArray
// see no difference), without its cost: pflag renders every such flag's
// default through encoding/csv, a 4 KB buffer each, and the command tree
// has dozens of them, built on every start, --version included. The
// default is recorded as "" rather than pflag's "[]": pflag's usage
// recognises "[]" as no default only for its own type, and fang's help
// shows neither.
func stringArrayVarP(fs *pflag.FlagSet, p *[]string, name, short, usage string) {
	*p = nil
	fs.AddFlag(&pflag.Flag{Name: name, Shorthand: short, Usage: usage, Value: &stringArray{p: p}, DefValue: ""})
}

func stringArrayVar(fs *pflag.FlagSet, p *[]string, name, usage string) {
	stringArrayVarP(fs, p, name, "", usage)
}

// stringArray is pflag's stringArrayValue: each use of the flag appends
// one value, the first replacing the default.
type stringArray struct {
	p       *[]string
	changed bool
}

func (s *stringArray) Set(v string) error {
	if !s.changed {
		*s.p = []string{v}
		s.changed = true
	} else {
		*s.p = append(*s.p, v)
	}
	return nil
}

func (s *stringArray) Append(v string) error {
	*s.p = append(*s.p, v)
	return nil
}

func (s *stringArray) Replace(vs []string) error {
	*s.p = append(make([]string, 0, len(vs)), vs...)
	return nil
}

func (s *stringArray) GetSlice() []string {
	return append(make([]string, 0, len(*s.p)), *s.p...)
}

func (s *stringArray) Type() string { return "stringArray" }

// String is pflag's: the values as one CSV record in brackets.
func (s *stringArray) String() string {
	if len(*s.p) == 0 {
		return "[]"
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if w.Write(*s.p) != nil {
		return "[]" // pflag drops the error the same way, with an empty record
	}
	w.Flush()
	return "[" + strings.TrimSuffix(b.String(), "\n") + "]"
}
