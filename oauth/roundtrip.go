package oauth

import (
	"context"
	"io"
	"net/http"
	"time"
)

// LoginTimeout bounds one authorization when a person logs in through a
// browser on an interactive terminal.
const LoginTimeout = 10 * time.Minute

// RoundTripper puts the flow's token on every request to the MCP server
// and, when the server answers 401 (or 403 insufficient_scope), authorizes
// and sends the request again, at most twice. A request whose body cannot
// be replayed gets the server's answer as it is. A request to another
// origin (a redirect the client chose to follow) goes out as it came: the
// token is for the server's origin only, and another origin's 401 is not
// the flow's to answer.
type RoundTripper struct {
	Base http.RoundTripper
	Flow *Flow
	// LoginLimit bounds one authorization (a person's wait in the browser
	// included); 0 = LoginTimeout. Without a person at an interactive
	// terminal it should be the user's own timeout.
	LoginLimit time.Duration
}

func (rt *RoundTripper) base() http.RoundTripper {
	if rt.Base != nil {
		return rt.Base
	}
	return http.DefaultTransport
}

// RoundTrip implements http.RoundTripper.
func (rt *RoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if !rt.Flow.owns(req) {
		return rt.base().RoundTrip(req)
	}
	rt.Flow.announce()
	nonceRetried := false
	for attempt, sent := 0, 0; ; attempt, sent = attempt+1, sent+1 {
		r := req.Clone(req.Context())
		if sent > 0 && req.Body != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		tok := rt.Flow.sign(r)
		resp, err := rt.base().RoundTrip(r)
		if err == nil && !nonceRetried && (req.Body == nil || req.GetBody != nil) && rt.Flow.nonceRefused(req.URL.String(), resp) {
			nonceRetried = true // RFC 9449 §9: once, with the server's nonce
			discard(resp)
			attempt--
			continue
		}
		if err == nil && tok != "" && resp.StatusCode >= 200 && resp.StatusCode < 300 {
			rt.Flow.accepted()
		}
		if err != nil || attempt >= 2 || !challenge(resp) || (req.Body != nil && req.GetBody == nil) {
			return resp, err
		}
		// A login outlives the request that needed it (a person may take
		// longer than the call's timeout): the token is kept for the next one.
		limit := rt.LoginLimit
		if limit <= 0 {
			limit = LoginTimeout
		}
		actx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), limit)
		retry, aerr := rt.Flow.Challenged(actx, resp.StatusCode, resp.Header, tok)
		cancel()
		if aerr != nil || !retry {
			if aerr != nil {
				discard(resp)
				return nil, aerr
			}
			return resp, nil
		}
		discard(resp)
	}
}

// discard reads a little of an answer not passed on (so the connection can
// be reused) and closes it.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
}

// challenge reports an answer the flow may fix: 401, or 403 with an
// insufficient_scope Bearer challenge.
func challenge(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return true
	case http.StatusForbidden:
		ch, ok := ParseChallenges(resp.Header.Values("WWW-Authenticate"))
		return ok && ch.Error == "insufficient_scope"
	}
	return false
}
