package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"mcpscope/oauth"
	"mcpscope/session"
)

// oauthFor prepares OAuth for an HTTP target: the flow, and the HTTP client
// that puts its token on every request and authorizes when the server
// answers 401. Nil when the user brought credentials or said --no-oauth.
func oauthFor(o *options, authorizer oauth.Authorizer) (*oauth.Flow, *http.Client) {
	if o.url == "" || o.noOAuth || o.bearer != "" || hasAuthHeader(o.headers) {
		return nil, nil
	}
	var flow *oauth.Flow
	cache := ""
	if authorizer == nil && !o.noState {
		cache = loginCacheFile(o.url)
	}
	if authorizer == nil {
		authorizer = &oauth.Loopback{Port: o.oauthPort, PreferPort: cachedPort(cache, o.url), NoBrowser: o.noBrowser, Show: func(u string) {
			if !screenOwned.Load() {
				fmt.Fprintf(os.Stderr, "mcpscope: %s wants authorization; open this URL to grant it:\n  %s\n", o.url, u)
			}
			flow.Note("waiting for the authorization redirect; the URL to open: " + u)
		}}
	}
	flow = oauth.NewFlow(o.url, oauth.Config{ClientID: o.clientID, ClientSecret: o.clientSecret, Scope: o.scope,
		ClientMetadataURL: o.clientMetadataURL, Grant: o.grant, PrivateKeyPEM: o.clientKeyPEM, SigningAlg: o.signingAlg,
		IDToken: o.idToken, IdPTokenEndpoint: o.idpTokenEndpoint, IdPClientID: o.idpClientID, Assertion: o.assertion,
		CacheFile: cache, Authorizer: authorizer})
	base := http.DefaultTransport.(*http.Transport).Clone()
	o.oauthFlow = flow
	return flow, &http.Client{Transport: &oauth.RoundTripper{Base: base, Flow: flow}}
}

// screenOwned is set while the inspector draws the terminal: nothing else
// may print to it then.
var screenOwned atomic.Bool

func hasAuthHeader(headers []string) bool {
	for _, h := range headers {
		if name, _, _ := strings.Cut(h, ":"); strings.EqualFold(strings.TrimSpace(name), "Authorization") {
			return true
		}
	}
	return false
}

// noteTo sends the flow's steps to the transport's journal.
func noteTo(flow *oauth.Flow, t interface{ Note(string) }) {
	if flow != nil {
		flow.SetNote(t.Note)
	}
}

// preflightLogin lets a person log in before the handshake starts its
// timeouts (interactive OAuth only; automated runs authorize on the 401).
func preflightLogin(ctx context.Context, o *options) error {
	if o.oauthFlow == nil || o.authorizer != nil {
		return nil
	}
	lctx, cancel := context.WithTimeout(ctx, oauth.LoginTimeout)
	defer cancel()
	return o.oauthFlow.Preflight(lctx)
}

// loginCacheFile is where a login to server is kept between runs:
// $XDG_STATE_HOME/mcpscope/oauth/<hash of the URL>.json, mode 0600.
func loginCacheFile(server string) string {
	sum := sha256.Sum256([]byte(server))
	return filepath.Join(session.StateDir(), "oauth", hex.EncodeToString(sum[:8])+".json")
}

// cachedPort is the loopback port a saved registration was made with.
func cachedPort(cache, server string) int {
	if cache == "" {
		return 0
	}
	u, err := url.Parse(oauth.CachedRedirect(cache, server))
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(u.Port())
	return p
}
