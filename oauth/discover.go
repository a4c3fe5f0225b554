package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// ResourceMetadata is OAuth 2.0 Protected Resource Metadata (RFC 9728).
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// ServerMetadata is OAuth 2.0 Authorization Server Metadata (RFC 8414), or
// the same fields of OpenID Connect Discovery.
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	// IssParameterSupported: authorization responses carry iss (RFC 9207).
	IssParameterSupported bool `json:"authorization_response_iss_parameter_supported"`
	// DPoPSigningAlgs: the server binds tokens to a client key (RFC 9449).
	DPoPSigningAlgs []string `json:"dpop_signing_alg_values_supported"`
}

// resourceMetadataURLs is where to look for the protected resource
// metadata: the challenge's resource_metadata when given, else the
// well-known URI with the endpoint's path inserted, then at the root.
func resourceMetadataURLs(server string, ch Challenge) []string {
	if ch.ResourceMetadata != "" {
		return []string{ch.ResourceMetadata}
	}
	u, err := url.Parse(server)
	if err != nil {
		return nil
	}
	origin := u.Scheme + "://" + u.Host
	var out []string
	if p := strings.TrimSuffix(u.Path, "/"); p != "" {
		out = append(out, origin+"/.well-known/oauth-protected-resource"+p)
	}
	return append(out, origin+"/.well-known/oauth-protected-resource")
}

// serverMetadataURLs is where to look for an authorization server's
// metadata, in the order the MCP spec gives: RFC 8414 and OpenID Connect
// with the issuer's path inserted, then OpenID Connect with it appended.
func serverMetadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	origin := u.Scheme + "://" + u.Host
	p := strings.TrimSuffix(u.Path, "/")
	if p == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
		origin + p + "/.well-known/openid-configuration",
	}
}

// getJSON fetches a metadata document. A non-2xx answer is an error that
// names the status; the caller decides whether to try the next URL.
func (f *Flow) getJSON(ctx context.Context, u string, into any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	if f.cfg.ProtocolVersion != "" {
		req.Header.Set("MCP-Protocol-Version", f.cfg.ProtocolVersion)
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDoc))
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("GET %s: %d %s", u, resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	if err := json.Unmarshal(body, into); err != nil {
		return resp.StatusCode, fmt.Errorf("GET %s: the answer is not a JSON metadata document: %v", u, err)
	}
	return resp.StatusCode, nil
}

// maxDoc bounds a metadata or token document.
const maxDoc = 1 << 20
