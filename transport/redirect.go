package transport

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Credentials go only to the origin (scheme, host, port) they were given
// for. net/http alone keeps Authorization and Cookie on a redirect to
// another port of the same host, and custom headers (X-Api-Key) everywhere;
// so both HTTP transports follow redirects through redirectPolicy.

// maxRedirects is as many hops as net/http follows by default.
const maxRedirects = 10

// RedirectError is a redirect not followed: it leads to an origin the
// request's credentials and messages were not meant for.
type RedirectError struct {
	Status int    // the 3xx answer
	From   string // the request redirected, redacted
	To     string // where it was sent, redacted
	Origin string // the origin of To, as one would allow it (https://host[:port])
	Home   string // the origin the request was for
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("redirected (%d) to %s, an origin other than %s: not followed, so neither the message nor any credential went there "+
		"(allow that origin to follow it; credentials are never sent to another origin)", e.Status, e.To, e.Home)
}

// errTooManyRedirects ends a redirect loop.
var errTooManyRedirects = errors.New("stopped after " + strconv.Itoa(maxRedirects) + " redirects")

// redirectPolicy is the one rule both HTTP transports follow on a 3xx:
// same-origin hops are followed; a hop to another origin only when allowed,
// and then without credentials, for the rest of the chain. Every hop is
// journaled as an EvRedirect frame.
type redirectPolicy struct {
	allow map[string]bool // canonical origins, or "*"
	emit  func(Frame)
}

// withRedirectPolicy is a copy of c (a new client when nil, whose transport
// is returned as ours to close) that applies the policy: the caller's client
// is left as it was.
func withRedirectPolicy(c *http.Client, allow []string, emit func(Frame)) (*http.Client, *http.Transport) {
	var own *http.Transport
	if c == nil {
		own = http.DefaultTransport.(*http.Transport).Clone()
		c = &http.Client{Transport: own} // no Timeout: streams are long
	}
	p := redirectPolicy{allow: map[string]bool{}, emit: emit}
	for _, a := range allow {
		if o, err := ParseOrigin(a); err == nil {
			p.allow[o] = true
		}
	}
	cp := *c
	cp.CheckRedirect = p.check
	return &cp, own
}

// check is http.Client.CheckRedirect: req is the next hop, with the
// original headers already copied into it; via the requests so far.
func (p redirectPolicy) check(req *http.Request, via []*http.Request) error {
	prev, home := via[len(via)-1], origin(via[0].URL)
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	to := RedactURL(req.URL.String())
	m := Meta{Event: EvRedirect, HTTPMethod: prev.Method, URL: RedactURL(prev.URL.String()), Status: status}
	record := func(verdict string) {
		m.Detail = strconv.Itoa(status) + " to " + to + ": " + verdict
		p.emit(Frame{Dir: Local, Kind: Event, Meta: m})
	}
	dest := origin(req.URL)
	if len(via) >= maxRedirects {
		record(errTooManyRedirects.Error())
		return errTooManyRedirects
	}
	if dest != home && !p.allow["*"] && !p.allow[dest] {
		record("another origin, not followed")
		return &RedirectError{Status: status, From: m.URL, To: to, Origin: showOrigin(req.URL), Home: showOrigin(via[0].URL)}
	}
	// Referer would carry the URL we came from, query and all.
	req.Header.Del("Referer")
	if sameOrigin(append(via, req), home) {
		record("same origin, followed")
		return nil
	}
	stripCredentials(req.Header)
	record("another origin, allowed: followed without credentials")
	return nil
}

// sameOrigin reports whether every request went to origin home.
func sameOrigin(reqs []*http.Request, home string) bool {
	for _, r := range reqs {
		if origin(r.URL) != home {
			return false
		}
	}
	return true
}

// StaysOnOrigin reports whether req, and every request of the redirect
// chain that led to it, went to the origin of home: only then may
// credentials given for home go with req.
func StaysOnOrigin(req *http.Request, home *url.URL) bool {
	want := origin(home)
	for r := req; r != nil; r = r.Response.Request {
		if origin(r.URL) != want {
			return false
		}
		if r.Response == nil {
			break
		}
	}
	return true
}

// stripCredentials removes every header that may carry a credential: the
// ones IsSecretName recognises (Authorization, Cookie, X-Api-Key, any
// "…Token" or "…Secret"), whoever set them.
func stripCredentials(h http.Header) {
	for name := range h {
		if IsSecretName(name) {
			delete(h, name)
		}
	}
}

// origin is u's origin, comparable: scheme://host:port in lower case with
// the scheme's default port written out.
func origin(u *url.URL) string {
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// showOrigin is u's origin as people write it (no default port).
func showOrigin(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

// ParseOrigin checks an origin a redirect may go to, "scheme://host[:port]"
// or "*" for any, and returns it in the form redirects are matched against.
func ParseOrigin(s string) (string, error) {
	if s == "*" {
		return s, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%q is not an origin: want scheme://host[:port], such as https://auth.example.com, or * for any", RedactURL(s))
	}
	return origin(u), nil
}
