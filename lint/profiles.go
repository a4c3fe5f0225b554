package lint

import (
	"fmt"
	"slices"
	"strings"
)

// Profile is how one host reads a catalog: the severity of each
// portability rule there (a rule it does not name it reads without
// trouble) and the string formats it accepts.
type Profile struct {
	Name    string
	About   string
	Rules   map[string]Severity
	Formats []string // nil: any format
}

// Profiles are the hosts lint knows, in the order findings name them.
// The spec's rules and behaviour apply to every profile; these tables are
// only what differs between hosts.
var Profiles = []Profile{
	// Claude Code. Field report: modelcontextprotocol/inspector#1005 — a
	// Go server's interface{} field becomes a bare `true` property schema
	// and Claude Code refuses the whole tool list.
	{Name: "claude-code", About: "Claude Code",
		Rules: map[string]Severity{BoolSchema: Error}},
	// OpenAI (Codex, the Agents SDK, structured outputs). Field reports:
	// format "uri" (what zod's z.url() emits) hard-rejected by some OpenAI
	// models; nullable type arrays handled unevenly. The format list is
	// the one OpenAI's structured outputs accept; strict function calling
	// also wants additionalProperties: false on every object.
	{Name: "openai", About: "OpenAI models (Codex, structured outputs, strict function calling)",
		Rules: map[string]Severity{Format: Error, TypeArray: Warning, UntypedUnion: Warning, Discriminator: Warning,
			AdditionalProperties: Warning, BoolSchema: Warning},
		Formats: []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}},
	// Gemini (the Gemini API's function declarations, Gemini CLI). Field
	// reports: anyOf branches without type and $defs/$ref break Gemini;
	// nullable type arrays handled unevenly. Its schema is an OpenAPI
	// subset: string formats date-time and enum only.
	{Name: "gemini", About: "Gemini function declarations (Gemini API, Gemini CLI)",
		Rules: map[string]Severity{UntypedUnion: Error, Ref: Error, TypeArray: Warning, Format: Warning,
			Discriminator: Warning, BoolSchema: Warning},
		Formats: []string{"date-time", "enum"}},
	// strict: the portable subset every host reads alike, as a CI gate
	// would check it. Field reports: the official Inspector's --strict
	// (schema portability as a CI gate, inspector PR #2121) and
	// mcp-ts-core's portability lint. Every portability rule, as a
	// warning (a host refuses nothing here that another profile does not
	// already call an error); --strict makes warnings fail.
	{Name: "strict", About: "the portable subset (the Inspector's --strict, mcp-ts-core's portability lint)",
		Rules: map[string]Severity{BoolSchema: Warning, Format: Warning, TypeArray: Warning, UntypedUnion: Warning,
			Ref: Warning, Discriminator: Warning, AdditionalProperties: Warning},
		Formats: []string{"date-time"}},
}

// ProfileNames are the profiles' names, in order.
func ProfileNames() []string {
	var n []string
	for _, p := range Profiles {
		n = append(n, p.Name)
	}
	return n
}

// SelectProfiles picks profiles by name ("all" or none: every one).
func SelectProfiles(names []string) ([]Profile, error) {
	if len(names) == 0 || slices.Contains(names, "all") {
		return Profiles, nil
	}
	var out []Profile
	for _, p := range Profiles {
		if slices.Contains(names, p.Name) {
			out = append(out, p)
		}
	}
	for _, n := range names {
		if !slices.Contains(ProfileNames(), n) {
			return nil, fmt.Errorf("no profile %q: the profiles are %s, or all", n, strings.Join(ProfileNames(), ", "))
		}
	}
	return out, nil
}
