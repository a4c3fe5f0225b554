package oauth

import "testing"

func TestParseChallenges(t *testing.T) {
	cases := []struct {
		in   []string
		want Challenge
		ok   bool
	}{
		{[]string{`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"`},
			Challenge{ResourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource", Scope: "files:read"}, true},
		{[]string{`Basic realm="x", Bearer error="insufficient_scope", scope="a b", error_description="needs \"b\""`},
			Challenge{Error: "insufficient_scope", Scope: "a b", ErrorDescription: `needs "b"`}, true},
		{[]string{`Negotiate abc==`, `bearer scope=read`}, Challenge{Scope: "read"}, true},
		{[]string{`Bearer`}, Challenge{}, true},
		{[]string{`Basic realm="x"`}, Challenge{}, false},
		{nil, Challenge{}, false},
		{[]string{`Bearer realm="a,b", scope="x"`}, Challenge{Scope: "x"}, true},
	}
	for _, c := range cases {
		got, ok := ParseChallenges(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("%q: got %+v %v, want %+v %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParseChallenges(f *testing.F) {
	f.Add(`Bearer resource_metadata="x", scope="a b"`)
	f.Add(`Basic a==, Bearer error=x`)
	f.Fuzz(func(t *testing.T, s string) {
		ParseChallenges([]string{s}) // must not panic or loop
	})
}
