package connect

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"mcpscope/internal/xdg"
	"mcpscope/oauth"
	"mcpscope/transport"
)

// oauthFor prepares OAuth for an HTTP target: the flow, and the HTTP client
// that puts its token on every request and authorizes when the server
// answers 401. Nil when the user brought credentials or turned OAuth off.
func oauthFor(sp Spec) (*oauth.Flow, *http.Client) {
	a := sp.Auth
	if sp.URL == "" || a.Disabled || sp.Bearer != "" || hasAuthHeader(sp.Headers) {
		return nil, nil
	}
	var flow *oauth.Flow
	cache := ""
	authorizer := a.Authorizer
	if authorizer == nil && !sp.NoState {
		cache = loginCacheFile(sp.URL)
	}
	loginLimit := time.Duration(0) // oauth.LoginTimeout: a person at an interactive terminal
	if authorizer == nil {
		authorizer = &oauth.Loopback{Port: a.Port, PreferPort: cachedPort(cache, sp.URL), NoBrowser: a.NoBrowser,
			Show: func(u string) {
				sp.note("%s wants authorization; open this URL to grant it:\n  %s", transport.RedactURL(sp.URL), u)
				flow.Waiting(true, "waiting for you to log in; the URL to open: "+u)
			},
			Done: func(err error) {
				if err != nil {
					flow.Waiting(false, "the login did not come back: "+err.Error())
				} else {
					flow.Waiting(false, "the login came back")
				}
			}}
		if !a.Interactive {
			loginLimit = sp.HandshakeTimeout() // nobody to wait for: the user's own bound
		}
	}
	flow = oauth.NewFlow(sp.URL, oauth.Config{ClientID: a.ClientID, ClientSecret: a.ClientSecret, Scope: a.Scope,
		ClientMetadataURL: a.ClientMetadataURL, Grant: a.Grant, PrivateKeyPEM: a.ClientKeyPEM, SigningAlg: a.SigningAlg,
		IDToken: a.IDToken, IdPTokenEndpoint: a.IdPTokenEndpoint, IdPClientID: a.IdPClientID, Assertion: a.Assertion,
		CacheFile: cache, Authorizer: authorizer})
	base := http.DefaultTransport.(*http.Transport).Clone()
	return flow, &http.Client{Transport: &oauth.RoundTripper{Base: base, Flow: flow, LoginLimit: loginLimit}}
}

func hasAuthHeader(headers map[string]string) bool {
	for name := range headers {
		if strings.EqualFold(strings.TrimSpace(name), "Authorization") {
			return true
		}
	}
	return false
}

// loginCacheFile is where a login to server is kept between runs:
// $XDG_STATE_HOME/mcpscope/oauth/<hash of the URL>.json, mode 0600.
func loginCacheFile(server string) string {
	sum := sha256.Sum256([]byte(server))
	return filepath.Join(xdg.StateDir(), "oauth", hex.EncodeToString(sum[:8])+".json")
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
