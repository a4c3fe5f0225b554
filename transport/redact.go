package transport

import (
	"errors"
	"net/url"
	"strings"
)

// redacted replaces a secret wherever one is recorded.
const redacted = "[redacted]"

// RedactURL is raw fit to show or record: its userinfo and the values of
// secret-looking query (and fragment) parameters become [redacted]. The rest
// is kept byte for byte, so a URL without secrets comes back unchanged and
// redacting twice changes nothing. It never fails: a string that does not
// parse as a URL is redacted by the same rules, more eagerly.
func RedactURL(raw string) string {
	if !strings.ContainsAny(raw, "@?#") {
		return raw // no userinfo, query or fragment: nothing to redact (journal reads call this per frame)
	}
	var b strings.Builder
	s := raw
	if i := strings.Index(s, "://"); i > 0 && isScheme(s[:i]) {
		b.WriteString(s[:i+3])
		s = s[i+3:]
		if at := userinfoEnd(s, parsesAsURL(raw)); at >= 0 {
			b.WriteString(redacted + "@")
			s = s[at+1:]
		}
	}
	s, frag, hasFrag := strings.Cut(s, "#")
	s, query, hasQuery := strings.Cut(s, "?")
	b.WriteString(s)
	if hasQuery {
		b.WriteString("?" + redactParams(query))
	}
	if hasFrag {
		b.WriteString("#" + redactParams(frag)) // implicit OAuth puts tokens there
	}
	return b.String()
}

// RedactTarget is a session's target fit to show or record, however it
// was written: "http: URL" and "http+sse: URL" (journal headers, proxies)
// get RedactURL, "stdio: LINE" has its NAME=value words for secrets
// redacted, and a bare URL (a rejoin record's) gets RedactURL. Readers
// call it on what they read, since files written by older builds hold
// targets as they were typed. Redacting twice changes nothing.
func RedactTarget(t string) string {
	kind, rest, ok := strings.Cut(t, ": ")
	switch {
	case !ok || !isScheme(kind):
		return RedactURL(t)
	case kind == "stdio":
		return kind + ": " + stdioRedactLine(rest)
	}
	return kind + ": " + RedactURL(rest)
}

// RedactText is free text (an event's detail, an error) fit to show or
// record: every URL in it (scheme://…, up to white space or a quote) gets
// RedactURL, the rest is kept byte for byte. Text without "://" comes back
// as it is; redacting twice changes nothing.
func RedactText(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			break
		}
		start := i
		for start > 0 && schemeByte(s[start-1]) {
			start--
		}
		for start < i && !isLetter(s[start]) {
			start++ // a scheme starts with a letter
		}
		end := i + 3
		for end < len(s) && !textURLEnd(s[end]) {
			end++
		}
		b.WriteString(s[:start])
		if start < i {
			b.WriteString(RedactURL(s[start:end]))
		} else {
			b.WriteString(s[start:end])
		}
		s = s[end:]
	}
	b.WriteString(s)
	return b.String()
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func schemeByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

// textURLEnd ends a URL in free text: white space, a quote or an angle
// bracket (anything else may be part of a password).
func textURLEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '`', '<', '>':
		return true
	}
	return false
}

// userinfoEnd is the index of the '@' that ends the userinfo in s (what
// follows "scheme://"), or -1. A URL that parses has its authority end at the
// first '/', '?' or '#'; one that does not may be a password with such a
// character in it, so there the last '@' anywhere counts.
func userinfoEnd(s string, parses bool) int {
	if !parses {
		return strings.LastIndexByte(s, '@')
	}
	end := strings.IndexAny(s, "/?#")
	if end < 0 {
		end = len(s)
	}
	return strings.LastIndexByte(s[:end], '@')
}

// parsesAsURL reports whether raw parses, with our own marks read as plain
// text (so that redacted input is judged like the original was).
func parsesAsURL(raw string) bool {
	_, err := url.Parse(strings.ReplaceAll(raw, redacted, "x"))
	return err == nil
}

// isScheme reports whether s is a URL scheme (RFC 3986 §3.1).
func isScheme(s string) bool {
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// redactParams redacts the values of secret-looking name=value pairs in a
// query or fragment, keeping everything else as written.
func redactParams(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		name, val, ok := strings.Cut(p, "=")
		if !ok || val == "" {
			continue
		}
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if isSecretParam(name) {
			parts[i] = p[:strings.IndexByte(p, '=')+1] + redacted
		}
	}
	return strings.Join(parts, "&")
}

// secretParams are query parameter names that carry credentials without
// looking like it to IsSecretName (signed URLs, OAuth codes).
var secretParams = map[string]bool{"key": true, "sig": true, "signature": true, "code": true,
	"pass": true, "pwd": true, "jwt": true, "assertion": true}

// isSecretParam reports whether a query parameter's value should not be
// shown: a credential-looking name, a known one, or a …key / …signature.
func isSecretParam(name string) bool {
	n := strings.ToLower(name)
	return IsSecretName(n) || secretParams[n] || strings.HasSuffix(n, "key") || strings.HasSuffix(n, "signature")
}

// URLParseReason says why raw did not parse (err is url.Parse's) without
// quoting raw's secrets: net/url quotes pieces of the URL, and a password
// holding a '/' is read as a port, so its words are kept only for URLs
// with nothing to redact.
func URLParseReason(raw string, err error) string {
	if RedactURL(raw) != raw {
		return "it does not parse; a / ? # or @ in a user name or password must be percent-encoded (%2F %3F %23 %40)"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
