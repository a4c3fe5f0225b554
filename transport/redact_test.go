package transport

import (
	"errors"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	const S = "CANARY-5e1" // every secret below contains it
	for _, c := range []struct{ name, in, want string }{
		{"plain", "http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/mcp"},
		{"plain query", "https://e.com/mcp?x=1&y=two", "https://e.com/mcp?x=1&y=two"},
		{"user and password", "https://ada:" + S + "@e.com/mcp", "https://[redacted]@e.com/mcp"},
		{"token as user", "https://" + S + "@github.com/x", "https://[redacted]@github.com/x"},
		{"token as user, x-oauth-basic", "https://" + S + ":x-oauth-basic@github.com/x", "https://[redacted]@github.com/x"},
		{"secret params", "http://h/mcp?api_key=" + S + "&token=" + S + "&x=1&access_token=" + S + "&client_secret=" + S,
			"http://h/mcp?api_key=[redacted]&token=[redacted]&x=1&access_token=[redacted]&client_secret=[redacted]"},
		{"signed URL params", "https://b.s3.example/o?X-Amz-Signature=" + S + "&X-Amz-Credential=" + S + "&sig=" + S + "&key=" + S + "&code=" + S + "&Expires=9",
			"https://b.s3.example/o?X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]&sig=[redacted]&key=[redacted]&code=[redacted]&Expires=9"},
		{"escaped name", "http://h/?api%5Fkey=" + S, "http://h/?api%5Fkey=[redacted]"},
		{"value with =", "http://h/?x=a=b&password=" + S + "=c", "http://h/?x=a=b&password=[redacted]"},
		{"no value", "http://h/?token&token=", "http://h/?token&token="},
		{"userinfo and query", "http://u:" + S + "@h/mcp?api_key=" + S + "&token=" + S,
			"http://[redacted]@h/mcp?api_key=[redacted]&token=[redacted]"},
		{"fragment params", "http://h/cb#access_token=" + S + "&state=s", "http://h/cb#access_token=[redacted]&state=s"},
		{"plain fragment", "http://h/doc#section-2", "http://h/doc#section-2"},
		{"ipv6", "http://u:" + S + "@[::1]:8080/mcp?token=" + S, "http://[redacted]@[::1]:8080/mcp?token=[redacted]"},
		{"ipv6 plain", "http://[fe80::1%25eth0]:80/mcp", "http://[fe80::1%25eth0]:80/mcp"},
		{"@ in the path", "https://e.com/@ada/mcp", "https://e.com/@ada/mcp"},
		{"@ in the query", "https://e.com/mcp?email=a@b.c", "https://e.com/mcp?email=a@b.c"},
		{"relative endpoint", "/message?sessionId=s1", "/message?sessionId=s1"},
		{"relative with a secret", "/message?token=" + S, "/message?token=[redacted]"},
		{"URL inside a relative query", "/cb?next=http://u:p@x/", "/cb?next=http://u:p@x/"},
		{"invalid: / in the password", "http://u:p/" + S + "@h/mcp", "http://[redacted]@h/mcp"},
		{"invalid: # in the password", "http://u:p#" + S + "@h/mcp", "http://[redacted]@h/mcp"},
		{"invalid: bad port", "http://h:port/mcp?token=" + S, "http://h:port/mcp?token=[redacted]"},
		{"not a URL", "not a url", "not a url"},
		{"empty", "", ""},
	} {
		got := RedactURL(c.in)
		if got != c.want {
			t.Errorf("%s: RedactURL(%q)\n got %q\nwant %q", c.name, c.in, got, c.want)
		}
		if strings.Contains(got, S) {
			t.Errorf("%s: the secret is still in %q", c.name, got)
		}
		if again := RedactURL(got); again != got {
			t.Errorf("%s: redacting again changed %q to %q", c.name, got, again)
		}
	}
}

// A URL that does not parse is reported without its secret, though
// net/url's own message quotes it.
func TestBadURLKeepsItsSecret(t *testing.T) {
	const S = "CANARY-77ab"
	bad := "http://ada:" + S + "/x@h:1/mcp" // the password's '/' ends the host: net/url reads the password as a port
	h := NewHTTP(HTTPOptions{URL: bad})
	herr := h.Start(nil)
	l := NewLegacySSE(LegacySSEOptions{URL: bad})
	lerr := l.Start(nil)
	for _, err := range []error{herr, lerr} {
		if err == nil || !strings.Contains(err.Error(), "bad URL") || strings.Contains(err.Error(), S) {
			t.Errorf("want a bad URL error without the secret, got %v", err)
		}
	}
	if r := URLParseReason("http://h:port/mcp", errors.New("x")); r != "x" {
		t.Errorf("a URL without secrets keeps net/url's words, got %q", r)
	}
}

// Targets as journal headers, proxies and rejoin records name them are
// redacted however an older build wrote them.
func TestRedactTarget(t *testing.T) {
	const S = "CANARY-0c4"
	for _, c := range []struct{ in, want string }{
		{"http: http://user:" + S + "@h:1/mcp?api_key=" + S + "&x=1", "http: http://[redacted]@h:1/mcp?api_key=[redacted]&x=1"},
		{"http+sse: https://h/sse?token=" + S, "http+sse: https://h/sse?token=[redacted]"},
		{"https://u:" + S + "@h/mcp", "https://[redacted]@h/mcp"},
		{"stdio: env API_TOKEN=" + S + " node server.js --password=" + S + " --port 3", "stdio: env API_TOKEN=[redacted] node server.js --password=[redacted] --port 3"},
		{"stdio: node server.js", "stdio: node server.js"},
		{"http: http://127.0.0.1:3001/mcp", "http: http://127.0.0.1:3001/mcp"},
		{"", ""},
	} {
		got := RedactTarget(c.in)
		if got != c.want {
			t.Errorf("RedactTarget(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
		if again := RedactTarget(got); again != got {
			t.Errorf("redacting %q again gave %q", got, again)
		}
	}
}

// Every URL in free text is redacted, the rest kept; twice changes nothing.
func TestRedactText(t *testing.T) {
	for in, want := range map[string]string{
		"no url here":                        "no url here",
		"http: http://u:pw@h/mcp?api_key=k1": "http: http://[redacted]@h/mcp?api_key=[redacted]",
		`GET "https://h/x?token=t&a=1" then wss://u:p@h2 (3 tries)`: `GET "https://h/x?token=[redacted]&a=1" then wss://[redacted]@h2 (3 tries)`,
		"a :// alone, 1http://u:p@h":                                "a :// alone, 1http://[redacted]@h",
	} {
		got := RedactText(in)
		if got != want {
			t.Errorf("RedactText(%q) = %q, want %q", in, got, want)
		}
		if again := RedactText(got); again != got {
			t.Errorf("twice: %q, then %q", got, again)
		}
	}
}
