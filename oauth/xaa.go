package oauth

import (
	"context"
	"net/url"
)

// Token types and grants of enterprise-managed authorization (SEP-990:
// RFC 8693 token exchange at the identity provider, then an RFC 7523 JWT
// bearer grant at the MCP server's authorization server).
const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	grantJWTBearer     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	tokenTypeIDToken   = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeIDJAG     = "urn:ietf:params:oauth:token-type:id-jag"
)

// crossAppLocked trades the user's identity token for an identity
// assertion grant (ID-JAG) at the identity provider, then the ID-JAG for
// an access token at the authorization server, as the registered client.
func (f *Flow) crossAppLocked(ctx context.Context, scope string) error {
	f.clientID, f.secret = f.cfg.ClientID, f.cfg.ClientSecret
	aud := f.sm.Issuer
	if aud == "" {
		aud = f.issuer
	}
	ex := url.Values{
		"grant_type":           {grantTokenExchange},
		"requested_token_type": {tokenTypeIDJAG},
		"subject_token":        {f.cfg.IDToken},
		"subject_token_type":   {tokenTypeIDToken},
		"audience":             {aud},
		"resource":             {f.resource()},
	}
	if f.cfg.IdPClientID != "" {
		ex.Set("client_id", f.cfg.IdPClientID)
	}
	if scope != "" {
		ex.Set("scope", scope)
	}
	f.note("exchanging the identity token at %s for an ID-JAG for %s (SEP-990)", f.cfg.IdPTokenEndpoint, aud)
	jag, err := f.postToken(ctx, f.cfg.IdPTokenEndpoint, ex, "")
	if err != nil {
		return err
	}
	return f.jwtBearerLocked(ctx, jag.AccessToken, scope)
}

// jwtBearerLocked presents a JWT as an authorization grant (RFC 7523 §2.1):
// an ID-JAG from the identity provider, or a workload's own identity token
// (workload identity federation).
func (f *Flow) jwtBearerLocked(ctx context.Context, assertion, scope string) error {
	f.clientID, f.secret = f.cfg.ClientID, f.cfg.ClientSecret
	grant := url.Values{"grant_type": {grantJWTBearer}, "assertion": {assertion}, "resource": {f.resource()}}
	if scope != "" {
		grant.Set("scope", scope)
	}
	f.authMeth = f.pickAuthMethod("")
	return f.grantLocked(ctx, grant, scope)
}
