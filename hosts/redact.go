package hosts

import (
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"mcpscope/internal/shell"
	"mcpscope/transport"
)

// Redaction is for showing: what a host's file holds is the person's, and a
// listing ends up in terminals, screenshots and bug reports.

const redacted = "[redacted]"

// Redacted is s for showing: the values of secret-looking env variables and
// headers, secret-looking arguments and URL credentials are [redacted].
// Variable references (${input:token}, ${env:TOKEN}) are not secrets and
// stay as written.
func (s Server) Redacted() Server {
	r := s
	r.Args = redactArgs(s.Args)
	r.URL = redactURL(s.URL)
	if s.Env != nil {
		r.Env = maps.Clone(s.Env)
		for k, v := range r.Env {
			r.Env[k] = redactEnv(k, v)
		}
	}
	if s.Headers != nil {
		r.Headers = maps.Clone(s.Headers)
		for k, v := range r.Headers {
			r.Headers[k] = redactHeader(k, v)
		}
	}
	if s.Wrapped != nil {
		w := *s.Wrapped
		w.Inner = redactArgs(w.Inner)
		r.Wrapped = &w
	}
	return r
}

// CommandLine is how s is reached, for people, secrets redacted: for stdio
// the env assignments and the command, shell-quoted; for HTTP the URL and
// its headers as -H flags.
func (s Server) CommandLine() string {
	r := s.Redacted()
	var words []string
	if r.Kind != "stdio" {
		words = append(words, r.URL)
		for _, k := range slices.Sorted(maps.Keys(r.Headers)) {
			words = append(words, "-H", k+": "+r.Headers[k])
		}
		return quoteRedacted(words)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Env)) {
		words = append(words, k+"="+r.Env[k])
	}
	words = append(words, r.Command)
	return quoteRedacted(append(words, r.Args...))
}

// quoteRedacted shell-quotes words, leaving the [redacted] marker bare so
// that KEY=[redacted] reads as what it is.
func quoteRedacted(words []string) string {
	const mark = "mcpscope_redacted_mark"
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = strings.ReplaceAll(shell.Quote(strings.ReplaceAll(w, redacted, mark)), mark, redacted)
	}
	return strings.Join(q, " ")
}

// secretName is transport.IsSecretName, and the spellings of keys and
// passwords it leaves to others (OPENAI_KEY, DB_PASS, a session).
func secretName(name string) bool {
	if transport.IsSecretName(name) {
		return true
	}
	n := strings.ToLower(strings.TrimLeft(name, "-"))
	if strings.HasSuffix(n, "key") || strings.HasSuffix(n, "pass") || strings.HasSuffix(n, "pat") {
		return true
	}
	for _, w := range strings.FieldsFunc(n, func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9') }) {
		switch w {
		case "key", "pat", "pass", "pwd", "jwt", "cookie", "session", "sig", "signature", "dsn":
			return true
		}
	}
	return false
}

// refs matches the variables hosts resolve: ${env:X}, ${input:x}, ${X}.
var refs = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{[^}]+\}`) })

// hidden is v redacted, unless it is only variable references.
func hidden(v string) string {
	if strings.Contains(v, "${") && strings.TrimSpace(refs().ReplaceAllString(v, "")) == "" {
		return v
	}
	if v == "" {
		return v
	}
	return redacted
}

func redactEnv(name, v string) string {
	if secretName(name) {
		return hidden(v)
	}
	return redactURL(v)
}

// redactHeader keeps a credential's scheme ("Bearer"), as
// transport.RedactHeader does.
func redactHeader(name, v string) string {
	if !secretName(name) {
		return v
	}
	if i := strings.IndexByte(v, ' '); i > 0 && i < 16 {
		return v[:i] + " " + hidden(strings.TrimSpace(v[i+1:]))
	}
	return hidden(v)
}

var (
	assignment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(-{0,2}[A-Za-z_][A-Za-z0-9_.-]*)=(.*)$`) })
	headerWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z0-9-]+):\s*(.*)$`) })
)

// redactArgs redacts NAME=secret and --token=secret words, the word after a
// secret-named flag (--api-key sk-…), "Authorization: Bearer …" words
// (mcp-remote's --header) and URL credentials.
func redactArgs(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = redactWord(a)
		if i > 0 && isSecretFlag(args[i-1]) && !strings.HasPrefix(a, "-") {
			out[i] = hidden(a)
		}
	}
	return out
}

func isSecretFlag(w string) bool {
	return strings.HasPrefix(w, "-") && !strings.Contains(w, "=") && secretName(w)
}

func redactWord(w string) string {
	if m := assignment().FindStringSubmatch(w); m != nil {
		if secretName(m[1]) {
			return m[1] + "=" + hidden(m[2])
		}
		return m[1] + "=" + redactURL(m[2])
	}
	if m := headerWord().FindStringSubmatch(w); m != nil && !strings.HasPrefix(m[2], "//") && secretName(m[1]) {
		return m[1] + ": " + redactHeader(m[1], m[2])
	}
	return redactURL(w)
}

// redactURL hides a URL's user information and secret-named query
// parameters; anything else comes back as it is.
func redactURL(raw string) string {
	if !strings.Contains(raw, "://") {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return raw
	}
	user := u.User != nil
	u.User = nil
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			k, v, ok := strings.Cut(p, "=")
			if name, err := url.QueryUnescape(k); ok && err == nil && secretName(name) {
				parts[i] = k + "=" + hidden(v)
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	out := u.String()
	if user {
		out = strings.Replace(out, "://", "://"+redacted+"@", 1)
	}
	return out
}

// ShowCommand is argv for people: shell-quoted, secrets redacted.
func ShowCommand(argv []string) string {
	return quoteRedacted(redactArgs(argv))
}
