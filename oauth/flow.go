package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mcpscope/transport"
)

// Config is what the user (or the conformance suite) tells the flow.
type Config struct {
	// ClientID and ClientSecret are a pre-registered client; empty means
	// register (Client ID Metadata Document or dynamic registration).
	ClientID, ClientSecret string
	// ClientMetadataURL is an https URL serving this client's metadata
	// document (used as client_id where the server supports it).
	ClientMetadataURL string
	// Scope, when set, is requested instead of the challenge's or the
	// resource's scopes.
	Scope      string
	ClientName string
	// ProtocolVersion is sent as MCP-Protocol-Version on metadata requests.
	ProtocolVersion string
	Authorizer      Authorizer
	// HTTP carries the flow's own requests (metadata, registration, token);
	// nil = http.DefaultClient.
	HTTP *http.Client
	// Note receives each step, in words, for the journal and the user.
	Note func(string)
	// Grant forces a grant type: "client_credentials" (machine to machine),
	// or "" to pick (authorization code, unless the server offers only
	// client_credentials to a registered client).
	Grant string
	// PrivateKeyPEM and SigningAlg authenticate a client_credentials client
	// with a signed JWT (private_key_jwt) instead of a secret.
	PrivateKeyPEM, SigningAlg string
	// IDToken is the user's identity assertion from an enterprise identity
	// provider; with IdPTokenEndpoint it is exchanged there for an ID-JAG
	// that the authorization server takes as a JWT bearer grant (SEP-990,
	// enterprise-managed authorization). IdPClientID names us to the IdP.
	IDToken, IdPTokenEndpoint, IdPClientID string
	// Assertion is a JWT to present as the grant itself (RFC 7523 jwt-bearer:
	// a workload's identity token from its platform).
	Assertion string
	// CacheFile keeps the registration and token between runs (mode 0600);
	// "" keeps nothing.
	CacheFile string
	// MaxAuthorizations bounds full authorizations in a row without the
	// server accepting a token, so a server that keeps refusing cannot loop
	// us (default 3).
	MaxAuthorizations int
}

// Authorizer takes the user through the authorization endpoint: a browser
// with a loopback redirect, or (for automated checks) a plain fetch.
type Authorizer interface {
	// RedirectURI is where the authorization server sends the code; it is
	// registered before Authorize runs.
	RedirectURI(ctx context.Context) (string, error)
	// Authorize visits authURL and returns the redirect's query parameters.
	Authorize(ctx context.Context, authURL string) (url.Values, error)
}

// Token is what the token endpoint returned.
type Token struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	ExpiresIn    int64     `json:"expires_in,omitempty"`
	Scope        string    `json:"scope,omitempty"`
	Expiry       time.Time `json:"-"`
}

// Flow is the OAuth state for one MCP server: what was discovered, the
// client registration and the current token. It is safe for concurrent use;
// authorizations are serialised so parallel 401s lead to one flow.
type Flow struct {
	cfg    Config
	server string   // the MCP endpoint URL
	home   *url.URL // server parsed: its origin is where the token may go
	shown  string   // server redacted, for notes and errors

	noteMu    sync.Mutex
	waiting   func(on bool, detail string)
	mu        sync.Mutex
	rm        *ResourceMetadata
	sm        *ServerMetadata
	issuer    string
	clientID  string
	secret    string
	authMeth  string // token endpoint auth: client_secret_basic, client_secret_post or none
	redirect  string
	token     *Token
	scope     string       // scopes granted or asked for so far
	auths     atomic.Int32 // authorizations since the server last took a token
	restored  bool         // the registration came from the cache file
	dp        *dpop        // the DPoP key, when the authorization server binds tokens (RFC 9449)
	announced sync.Once
}

// NewFlow prepares OAuth for the MCP server at server. It does no I/O.
func NewFlow(server string, cfg Config) *Flow {
	if cfg.MaxAuthorizations == 0 {
		cfg.MaxAuthorizations = 3
	}
	if cfg.ClientName == "" {
		cfg.ClientName = "mcpscope"
	}
	f := &Flow{cfg: cfg, server: server, shown: transport.RedactURL(server)}
	f.home, _ = url.Parse(server)
	f.loadCache()
	return f
}

func (f *Flow) client() *http.Client {
	if f.cfg.HTTP != nil {
		return f.cfg.HTTP
	}
	return http.DefaultClient
}

func (f *Flow) note(format string, a ...any) {
	f.noteMu.Lock()
	n := f.cfg.Note
	f.noteMu.Unlock()
	if n != nil {
		n("oauth: " + fmt.Sprintf(format, a...))
	}
}

// SetNote sets where the flow's steps go (the transport that carries it
// exists only after the flow).
func (f *Flow) SetNote(n func(string)) {
	f.noteMu.Lock()
	f.cfg.Note = n
	f.noteMu.Unlock()
}

// SetWaiting sets where the flow reports that it waits for a person (and
// when the wait is over), so the session can hold its clocks.
func (f *Flow) SetWaiting(w func(on bool, detail string)) {
	f.noteMu.Lock()
	f.waiting = w
	f.noteMu.Unlock()
}

// Waiting reports the start (on) or the end of a wait for a person, for
// the Authorizer that does the waiting; it is a note as well.
func (f *Flow) Waiting(on bool, detail string) {
	f.noteMu.Lock()
	w := f.waiting
	f.noteMu.Unlock()
	if w != nil {
		w(on, detail)
	} else {
		f.note("%s", detail)
	}
}

// announce says, once, where a restored login came from; it runs with the
// first request, when whoever listens to notes is listening.
func (f *Flow) announce() {
	f.announced.Do(func() {
		if f.restored {
			f.note("using the registration and token saved in %s (delete it to log in afresh)", f.cfg.CacheFile)
		}
	})
}

// owns reports whether req is for the flow's server: its origin, reached
// without leaving it on the way (redirects).
func (f *Flow) owns(req *http.Request) bool {
	return f.home != nil && transport.StaysOnOrigin(req, f.home)
}

// accepted notes that the server took a token: the authorizations before
// it no longer count against the limit.
func (f *Flow) accepted() { f.auths.Store(0) }

// sign puts the current token on a request to the MCP server: Bearer, or
// DPoP with a fresh proof bound to the token (RFC 9449 §7). It returns the
// token sent, "" if none.
func (f *Flow) sign(r *http.Request) string {
	f.mu.Lock()
	tok, dp := f.token, f.dp
	f.mu.Unlock()
	if tok == nil {
		return ""
	}
	if dp != nil && strings.EqualFold(tok.TokenType, "DPoP") {
		r.Header.Set("Authorization", "DPoP "+tok.AccessToken)
		r.Header.Set("DPoP", dp.proof(r.Method, r.URL.String(), tok.AccessToken))
	} else {
		r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	}
	return tok.AccessToken
}

// nonceRefused reports a 401 that asks for a DPoP nonce the flow has now
// noted: the request is to be sent again with it, no new login needed.
func (f *Flow) nonceRefused(target string, resp *http.Response) bool {
	f.mu.Lock()
	dp := f.dp
	f.mu.Unlock()
	if dp == nil {
		return false
	}
	fresh := dp.noteNonce(target, resp.Header)
	ch, _ := ParseChallenges(resp.Header.Values("WWW-Authenticate"))
	return resp.StatusCode == http.StatusUnauthorized && ch.Error == "use_dpop_nonce" && fresh
}

// Error is an authorization that could not be done, with what to try.
type Error struct {
	Step string // discovery, registration, authorization, token
	Msg  string
	Hint string
}

func (e *Error) Error() string {
	s := "oauth " + e.Step + ": " + e.Msg
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Challenged handles a 401 or 403 the MCP server answered with the token
// sent (stale = the token that request carried). It refreshes or authorizes
// anew and reports whether the request should be retried. A newer token
// than stale means another request already did the work.
func (f *Flow) Challenged(ctx context.Context, status int, header http.Header, stale string) (bool, error) {
	ch, _ := ParseChallenges(header.Values("WWW-Authenticate"))
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.token != nil && f.token.AccessToken != stale {
		return true, nil
	}
	switch {
	case status == http.StatusForbidden && ch.Error != "insufficient_scope":
		return false, nil // forbidden for another reason: not ours to fix
	case status == http.StatusForbidden:
		f.note("403 insufficient_scope: the server wants scope %q; authorizing again with it", ch.Scope)
		return true, f.authorizeLocked(ctx, ch, unionScopes(f.scope, ch.Scope))
	}
	if f.token != nil && f.token.RefreshToken != "" && stale != "" {
		if f.sm == nil { // a token restored from the cache: find its token endpoint
			if err := f.discoverLocked(ctx, ch); err != nil {
				return false, err
			}
		}
		if err := f.refreshLocked(ctx); err == nil {
			return true, nil
		} else {
			f.note("refresh failed (%v); authorizing again", err)
		}
	}
	scope := ch.Scope
	if status == http.StatusUnauthorized {
		f.note("401 from %s: %s", f.shown, describeChallenge(ch))
	}
	return true, f.authorizeLocked(ctx, ch, scope)
}

func describeChallenge(ch Challenge) string {
	var parts []string
	if ch.ResourceMetadata != "" {
		parts = append(parts, "resource_metadata "+ch.ResourceMetadata)
	}
	if ch.Scope != "" {
		parts = append(parts, "scope "+strconv.Quote(ch.Scope))
	}
	if ch.Error != "" {
		parts = append(parts, "error "+ch.Error)
	}
	if len(parts) == 0 {
		return "no Bearer challenge details"
	}
	return strings.Join(parts, ", ")
}

// unionScopes joins two space-separated scope lists without repeats.
func unionScopes(a, b string) string {
	out := strings.Fields(a)
	for _, s := range strings.Fields(b) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

// authorizeLocked runs discovery (once), registration (once) and the
// authorization code flow with PKCE.
func (f *Flow) authorizeLocked(ctx context.Context, ch Challenge, scope string) error {
	if n := f.auths.Load(); int(n) >= f.cfg.MaxAuthorizations {
		return &Error{Step: "authorization", Msg: fmt.Sprintf("gave up after %d authorizations: the server keeps refusing the tokens it gets", n),
			Hint: "check the scopes the server asks for and the authorization server's grants"}
	}
	f.auths.Add(1)
	if err := f.discoverLocked(ctx, ch); err != nil {
		return err
	}
	scope = f.scopeFor(scope)
	if f.cfg.IDToken != "" && f.cfg.IdPTokenEndpoint != "" {
		return f.crossAppLocked(ctx, scope)
	}
	if f.cfg.Assertion != "" {
		f.note("presenting the given JWT as a jwt-bearer grant at %s (client %s)", f.sm.TokenEndpoint, orNone(f.cfg.ClientID))
		return f.jwtBearerLocked(ctx, f.cfg.Assertion, scope)
	}
	if f.useClientCredentials() {
		return f.clientCredentialsLocked(ctx, scope)
	}
	if scope != "" && f.sm != nil && slices.Contains(f.sm.ScopesSupported, "offline_access") && !slices.Contains(strings.Fields(scope), "offline_access") {
		scope += " offline_access" // ask for a refresh token where the server offers one
	}
	if f.cfg.Authorizer == nil {
		return &Error{Step: "authorization", Msg: "no way to reach the authorization endpoint", Hint: "give a token instead"}
	}
	if err := f.registerLocked(ctx); err != nil {
		return err
	}
	verifier := randomString(48)
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	state := randomString(24)
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {f.clientID},
		"redirect_uri":          {f.redirect},
		"code_challenge":        {challenge},
		"code_challenge_method": {"S256"},
		"state":                 {state},
		"resource":              {f.resource()},
	}
	if scope != "" {
		q.Set("scope", scope)
	}
	authURL := f.sm.AuthorizationEndpoint
	sep := "?"
	if strings.Contains(authURL, "?") {
		sep = "&"
	}
	f.note("authorizing at %s (client %s, scope %s, resource %s)", f.sm.AuthorizationEndpoint, f.clientID, orNone(scope), f.resource())
	back, err := f.cfg.Authorizer.Authorize(ctx, authURL+sep+q.Encode())
	if err != nil {
		return &Error{Step: "authorization", Msg: err.Error()}
	}
	if e := back.Get("error"); e != "" {
		return &Error{Step: "authorization", Msg: "the authorization server refused: " + e + " " + back.Get("error_description")}
	}
	// RFC 9207: a present iss must be the issuer whose metadata we used; an
	// absent one is refused only where the server promised to send it. On a
	// mismatch nothing of the response is acted on or shown.
	if iss, ok := back["iss"]; ok || f.sm.IssParameterSupported {
		if !ok || len(iss) != 1 || iss[0] != f.sm.Issuer {
			got := "no iss"
			if ok {
				got = "iss " + strconv.Quote(strings.Join(iss, ","))
			}
			return &Error{Step: "authorization", Msg: fmt.Sprintf("the authorization response has %s, expected issuer %s (RFC 9207): a mix-up or a forged redirect; not using it",
				got, strconv.Quote(f.sm.Issuer))}
		}
	}
	if back.Get("state") != state {
		return &Error{Step: "authorization", Msg: "the redirect's state does not match the one sent (a forged or crossed redirect); not using its code"}
	}
	code := back.Get("code")
	if code == "" {
		return &Error{Step: "authorization", Msg: "the redirect carries no code"}
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {f.redirect},
		"code_verifier": {verifier}, "resource": {f.resource()}}
	return f.grantLocked(ctx, form, scope)
}

// grantLocked sends a grant to the token endpoint and keeps the token; a
// token that names no scope has the scope that was asked for.
func (f *Flow) grantLocked(ctx context.Context, form url.Values, scope string) error {
	tok, err := f.tokenRequestLocked(ctx, form)
	if err != nil {
		return err
	}
	if tok.Scope == "" {
		tok.Scope = scope
	}
	f.token, f.scope = tok, tok.Scope
	f.saveCacheLocked()
	return nil
}

// oauthError is the error code of an OAuth error answer, "" if none.
func oauthError(raw []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	return e.Error
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return strconv.Quote(s)
}

// resource is the RFC 8707 resource indicator: the protected resource's
// identifier as its metadata gives it, else the MCP endpoint itself.
func (f *Flow) resource() string {
	if f.rm != nil && f.rm.Resource != "" {
		return f.rm.Resource
	}
	return canonicalResource(f.server)
}

// canonicalResource is the MCP server's canonical URI (RFC 8707 §2): lower
// case scheme and host, no fragment, no query, and no userinfo (it goes to
// the authorization server, and is shown in the authorization URL).
func canonicalResource(server string) string {
	u, err := url.Parse(server)
	if err != nil {
		return server
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	u.User, u.Fragment, u.RawQuery, u.RawFragment = nil, "", "", ""
	return u.String()
}

func (f *Flow) discoverLocked(ctx context.Context, ch Challenge) error {
	if f.sm != nil && ch.ResourceMetadata == "" {
		return nil
	}
	var rm ResourceMetadata
	found := false
	for _, u := range resourceMetadataURLs(f.server, ch) {
		status, err := f.getJSON(ctx, u, &rm)
		if err == nil {
			f.note("protected resource metadata from %s: authorization servers %v, scopes %v", u, rm.AuthorizationServers, rm.ScopesSupported)
			found = true
			break
		}
		f.note("no protected resource metadata at %s (%v)", u, errOrStatus(err, status))
	}
	issuer := ""
	if found {
		if rm.Resource != "" && !sameResource(rm.Resource, f.server) {
			return &Error{Step: "discovery", Msg: fmt.Sprintf("the protected resource metadata names resource %s, but the server is %s", transport.RedactURL(rm.Resource), f.shown),
				Hint: "a token for another resource must not be sent here; the server's metadata is misconfigured"}
		}
		if len(rm.AuthorizationServers) == 0 {
			return &Error{Step: "discovery", Msg: "the protected resource metadata lists no authorization_servers"}
		}
		f.rm, issuer = &rm, rm.AuthorizationServers[0]
	} else {
		// 2025-03-26 servers have no resource metadata: the MCP server's
		// origin is the authorization server.
		u, err := url.Parse(f.server)
		if err != nil {
			return &Error{Step: "discovery", Msg: "the server URL " + f.shown + " does not parse"}
		}
		issuer = u.Scheme + "://" + u.Host
		f.note("no protected resource metadata: treating %s as the authorization server (2025-03-26 servers)", issuer)
	}
	var sm ServerMetadata
	got := false
	for _, u := range serverMetadataURLs(issuer) {
		sm = ServerMetadata{}
		status, err := f.getJSON(ctx, u, &sm)
		if err != nil {
			f.note("no authorization server metadata at %s (%v)", u, errOrStatus(err, status))
			continue
		}
		// RFC 8414 §3.3: the document must name the issuer it was fetched
		// for. (Without resource metadata the issuer was only our guess.)
		if found && sm.Issuer != issuer {
			return &Error{Step: "discovery", Msg: fmt.Sprintf("the metadata at %s names issuer %s, not %s; refusing to use it (RFC 8414 §3.3)",
				u, strconv.Quote(sm.Issuer), strconv.Quote(issuer))}
		}
		f.note("authorization server metadata from %s", u)
		got = true
		break
	}
	if !got {
		if found {
			return &Error{Step: "discovery", Msg: "no authorization server metadata for " + issuer, Hint: "the server's authorization_servers entry may be wrong"}
		}
		// 2025-03-26 fallback: default endpoints at the origin.
		sm = ServerMetadata{Issuer: issuer, AuthorizationEndpoint: issuer + "/authorize", TokenEndpoint: issuer + "/token",
			RegistrationEndpoint: issuer + "/register", CodeChallengeMethodsSupported: []string{"S256"}}
		f.note("no authorization server metadata: using the default endpoints %s/authorize, /token, /register", issuer)
	}
	if sm.AuthorizationEndpoint == "" || sm.TokenEndpoint == "" {
		return &Error{Step: "discovery", Msg: "the authorization server metadata lacks authorization_endpoint or token_endpoint"}
	}
	if !slices.Contains(sm.CodeChallengeMethodsSupported, "S256") {
		return &Error{Step: "discovery", Msg: "the authorization server does not list S256 in code_challenge_methods_supported",
			Hint: "MCP clients must refuse authorization servers without PKCE"}
	}
	if !found && sm.Issuer != "" {
		issuer = sm.Issuer
	}
	if f.issuer != "" && f.issuer != issuer {
		// The resource moved to another authorization server: what the old
		// one issued (a registration, tokens) means nothing to the new one.
		f.note("the authorization server changed from %s to %s: registering and authorizing there afresh", f.issuer, issuer)
		f.clientID, f.secret, f.token = "", "", nil
	}
	f.sm, f.issuer = &sm, issuer
	if wantsDPoP(f.sm) && f.dp == nil {
		dp, err := newDPoP()
		if err != nil {
			return &Error{Step: "discovery", Msg: "cannot make a DPoP key: " + err.Error()}
		}
		f.dp = dp
		f.note("the authorization server binds tokens with DPoP: every request carries a proof signed with a fresh P-256 key")
	}
	return nil
}

func errOrStatus(err error, status int) string {
	if status != 0 {
		return fmt.Sprint(status)
	}
	return err.Error()
}

// sameResource reports whether the resource a metadata document names is
// the server's (equal, or a prefix of it at a path boundary: RFC 9728
// lets one resource cover endpoints below it).
func sameResource(resource, server string) bool {
	r, s := strings.TrimSuffix(canonicalResource(resource), "/"), strings.TrimSuffix(canonicalResource(server), "/")
	return r == s || strings.HasPrefix(s, r+"/")
}

// registerLocked settles the client id: pre-registered, a metadata
// document URL, or dynamic registration (RFC 7591).
func (f *Flow) registerLocked(ctx context.Context) error {
	ru, err := f.cfg.Authorizer.RedirectURI(ctx)
	if err != nil {
		return &Error{Step: "registration", Msg: "no redirect URI: " + err.Error()}
	}
	if f.clientID != "" {
		// A dynamic registration is bound to its redirect URI: one saved
		// for another (its port was taken) is replaced.
		if f.redirect == ru || f.cfg.ClientID != "" || f.clientID == f.cfg.ClientMetadataURL {
			f.redirect = ru
			return nil
		}
		f.note("the saved registration is for redirect %s, this run listens on %s: registering again", f.redirect, ru)
		f.clientID, f.secret = "", ""
	}
	f.redirect = ru
	switch {
	case f.cfg.ClientID != "":
		f.clientID, f.secret = f.cfg.ClientID, f.cfg.ClientSecret
		f.authMeth = f.pickAuthMethod("")
		f.note("using the pre-registered client %s", f.clientID)
		return nil
	case f.cfg.ClientMetadataURL != "" && f.sm.ClientIDMetadataDocumentSupported:
		f.clientID, f.authMeth = f.cfg.ClientMetadataURL, "none"
		f.note("using the client metadata document %s as client_id", f.clientID)
		return nil
	case f.sm.RegistrationEndpoint == "":
		return &Error{Step: "registration", Msg: "the authorization server offers no dynamic registration and no client id was given",
			Hint: "register mcpscope with it and give its client id (and secret)"}
	}
	meta := map[string]any{
		// A CLI with a loopback redirect is a native application (SEP-837).
		"application_type": "native",
		"client_name":      f.cfg.ClientName,
		"redirect_uris":    []string{ru},
		"grant_types":      []string{"authorization_code", "refresh_token"},
		"response_types":   []string{"code"},
	}
	if m := f.pickAuthMethod(""); m != "" {
		meta["token_endpoint_auth_method"] = m
	}
	body, _ := json.Marshal(meta)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.sm.RegistrationEndpoint, strings.NewReader(string(body)))
	if err != nil {
		return &Error{Step: "registration", Msg: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := f.client().Do(req)
	if err != nil {
		return &Error{Step: "registration", Msg: err.Error()}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxDoc))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &Error{Step: "registration", Msg: fmt.Sprintf("POST %s: %d %s", f.sm.RegistrationEndpoint, resp.StatusCode, excerpt(raw)),
			Hint: "register mcpscope by hand and give its client id"}
	}
	var r struct {
		ClientID                string `json:"client_id"`
		ClientSecret            string `json:"client_secret"`
		TokenEndpointAuthMethod string `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.ClientID == "" {
		return &Error{Step: "registration", Msg: "the registration answer has no client_id: " + excerpt(raw)}
	}
	f.clientID, f.secret = r.ClientID, r.ClientSecret
	f.authMeth = f.pickAuthMethod(r.TokenEndpointAuthMethod)
	f.note("registered as client %s (dynamic registration at %s; token endpoint auth %s)", f.clientID, f.sm.RegistrationEndpoint, f.authMeth)
	return nil
}

// pickAuthMethod chooses how to authenticate at the token endpoint: what
// registration said, else what the server supports that fits a secret.
func (f *Flow) pickAuthMethod(registered string) string {
	if registered != "" {
		return registered
	}
	supported := f.sm.TokenEndpointAuthMethodsSupported
	secret := f.secret != "" || f.cfg.ClientSecret != ""
	if len(supported) == 0 {
		if secret {
			return "client_secret_basic" // RFC 8414's default
		}
		return "none"
	}
	for _, m := range []string{"client_secret_basic", "client_secret_post", "none"} {
		if slices.Contains(supported, m) && (m == "none") != secret {
			return m
		}
	}
	return supported[0]
}

// tokenRequestLocked posts a grant to the token endpoint with the client's
// authentication.
func (f *Flow) tokenRequestLocked(ctx context.Context, form url.Values) (*Token, error) {
	return f.postToken(ctx, f.sm.TokenEndpoint, form, f.authMeth)
}

// postToken posts a grant to a token endpoint, authenticating the client
// with meth ("" = no client authentication: the form says who is asking).
func (f *Flow) postToken(ctx context.Context, endpoint string, form url.Values, meth string) (*Token, error) {
	basic := false
	switch meth {
	case "":
	case "private_key_jwt": // the assertion is in the form already
	case "client_secret_basic":
		basic = true
	case "client_secret_post":
		form.Set("client_id", f.clientID)
		form.Set("client_secret", f.secret)
	default:
		form.Set("client_id", f.clientID)
	}
	enc := form.Encode()
	var raw []byte
	for try := 0; ; try++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(enc))
		if err != nil {
			return nil, &Error{Step: "token", Msg: err.Error()}
		}
		if basic {
			req.SetBasicAuth(url.QueryEscape(f.clientID), url.QueryEscape(f.secret))
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "application/json")
		if f.dp != nil {
			req.Header.Set("DPoP", f.dp.proof(http.MethodPost, endpoint, ""))
		}
		resp, err := f.client().Do(req)
		if err != nil {
			return nil, &Error{Step: "token", Msg: err.Error()}
		}
		raw, _ = io.ReadAll(io.LimitReader(resp.Body, maxDoc))
		resp.Body.Close()
		if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
			break
		}
		// RFC 9449 §8: the server wants its nonce in the proof; once.
		if f.dp != nil && try == 0 && oauthError(raw) == "use_dpop_nonce" && f.dp.noteNonce(endpoint, resp.Header) {
			f.note("the token endpoint wants a DPoP nonce: sending the request again with it")
			continue
		}
		return nil, &Error{Step: "token", Msg: fmt.Sprintf("POST %s (%s): %d %s", endpoint, form.Get("grant_type"), resp.StatusCode, excerpt(raw))}
	}
	var t Token
	if err := json.Unmarshal(raw, &t); err != nil || t.AccessToken == "" {
		return nil, &Error{Step: "token", Msg: "the token answer has no access_token"}
	}
	if t.ExpiresIn > 0 {
		t.Expiry = time.Now().Add(time.Duration(t.ExpiresIn) * time.Second)
	}
	refresh := "no refresh token"
	if t.RefreshToken != "" {
		refresh = "a refresh token"
	}
	f.note("token from %s (%s grant, %s type, expires in %ds, scope %s, %s)", endpoint, form.Get("grant_type"),
		orNone(t.TokenType), t.ExpiresIn, orNone(t.Scope), refresh)
	return &t, nil
}

func (f *Flow) refreshLocked(ctx context.Context) error {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {f.token.RefreshToken}, "resource": {f.resource()}}
	t, err := f.tokenRequestLocked(ctx, form)
	if err != nil {
		return err
	}
	if t.RefreshToken == "" {
		t.RefreshToken = f.token.RefreshToken
	}
	if t.Scope == "" {
		t.Scope = f.token.Scope
	}
	f.token = t
	f.saveCacheLocked()
	return nil
}

func excerpt(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(errors.New("oauth: no randomness: " + err.Error()))
	}
	return base64.RawURLEncoding.EncodeToString(b)[:n]
}

// Note records a line in the flow's notes (for callers that act for it,
// such as an Authorizer showing the URL).
func (f *Flow) Note(s string) { f.note("%s", s) }
