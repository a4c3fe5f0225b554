// Package oauth is mcpscope's OAuth 2.1 client for MCP servers that answer
// 401 (the MCP authorization spec, 2025-03-26 to 2025-11-25): it reads the
// WWW-Authenticate challenge, discovers the protected resource and its
// authorization server, registers (pre-registered, Client ID Metadata
// Document, or dynamic registration), runs the authorization code flow with
// PKCE and the resource indicator, and puts the token on every request
// through an http.RoundTripper. Every step is reported through Notes so the
// inspector's journal shows the whole dance, tokens redacted.
package oauth

import (
	"strings"
)

// Challenge is a parsed WWW-Authenticate Bearer challenge (RFC 6750 §3,
// RFC 9728 §5.1).
type Challenge struct {
	ResourceMetadata string // resource_metadata: where the protected resource metadata is
	Scope            string // the scopes the request needs, space-separated
	Error            string // invalid_token, insufficient_scope, …
	ErrorDescription string
}

// ParseChallenges reads the first Bearer or DPoP challenge (RFC 9449 §7.1)
// out of WWW-Authenticate header values; other schemes are skipped. ok is
// false when there is none.
func ParseChallenges(values []string) (Challenge, bool) {
	for _, v := range values {
		for _, c := range splitChallenges(v) {
			if strings.EqualFold(c.scheme, "Bearer") || strings.EqualFold(c.scheme, "DPoP") {
				return Challenge{ResourceMetadata: c.params["resource_metadata"], Scope: c.params["scope"],
					Error: c.params["error"], ErrorDescription: c.params["error_description"]}, true
			}
		}
	}
	return Challenge{}, false
}

type rawChallenge struct {
	scheme string
	params map[string]string
}

// splitChallenges parses one header value: `Scheme k=v, k="v, w", Scheme2 …`.
// A token after a comma that is not followed by '=' starts a new challenge.
func splitChallenges(s string) []rawChallenge {
	var out []rawChallenge
	var cur *rawChallenge
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == ',') {
			i++
		}
	}
	token := func() string {
		start := i
		for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != ',' && s[i] != '=' {
			i++
		}
		return s[start:i]
	}
	for {
		skip()
		if i >= len(s) {
			break
		}
		name := token()
		j := i
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j < len(s) && s[j] == '=' && cur != nil && !isToken68Tail(s, j) {
			i = j + 1
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			cur.params[strings.ToLower(name)] = value(s, &i)
			continue
		}
		if name == "" { // a stray '=': skip it
			i++
			continue
		}
		out = append(out, rawChallenge{scheme: name, params: map[string]string{}})
		cur = &out[len(out)-1]
		i = j
	}
	return out
}

// isToken68Tail reports a '=' that pads a token68 credential (a run of
// '=' followed by a comma or the end) rather than starting a value.
func isToken68Tail(s string, j int) bool {
	for j < len(s) && s[j] == '=' {
		j++
	}
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	return j >= len(s) || s[j] == ','
}

// value reads a quoted string (with backslash escapes) or a token.
func value(s string, i *int) string {
	if *i < len(s) && s[*i] == '"' {
		var b strings.Builder
		*i++
		for *i < len(s) {
			c := s[*i]
			*i++
			switch c {
			case '\\':
				if *i < len(s) {
					b.WriteByte(s[*i])
					*i++
				}
			case '"':
				return b.String()
			default:
				b.WriteByte(c)
			}
		}
		return b.String()
	}
	start := *i
	for *i < len(s) && s[*i] != ',' && s[*i] != ' ' && s[*i] != '\t' {
		*i++
	}
	return s[start:*i]
}
