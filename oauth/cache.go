package oauth

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"mcpscope/transport"
)

// cached is what a flow keeps between runs for one MCP server: the client
// registration (with its redirect URI, whose port the next run listens on
// again) and the latest token, so a second command does not log in again.
type cached struct {
	Server       string    `json:"server"` // redacted: the file name tells URLs apart
	Issuer       string    `json:"issuer"`
	ClientID     string    `json:"clientId"`
	ClientSecret string    `json:"clientSecret,omitempty"`
	AuthMethod   string    `json:"authMethod"`
	RedirectURI  string    `json:"redirectUri"`
	AccessToken  string    `json:"accessToken,omitempty"`
	RefreshToken string    `json:"refreshToken,omitempty"`
	Scope        string    `json:"scope,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
}

// CachedRedirect is the redirect URI a cache file recorded, "" if none:
// a loopback authorizer listens on its port again, since the client was
// registered with it.
func CachedRedirect(file, server string) string {
	c, err := readCache(file)
	if err != nil || c.Server != transport.RedactURL(server) {
		return ""
	}
	return c.RedirectURI
}

func readCache(file string) (cached, error) {
	var c cached
	b, err := os.ReadFile(file)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, errors.New("unreadable: " + err.Error())
	}
	return c, nil
}

// loadCache restores a registration and token saved for this server; a
// cache made for another server or another pre-registered client is left
// alone.
func (f *Flow) loadCache() {
	if f.cfg.CacheFile == "" {
		return
	}
	c, err := readCache(f.cfg.CacheFile)
	if err != nil || c.Server != f.shown || (f.cfg.ClientID != "" && c.ClientID != f.cfg.ClientID) {
		return
	}
	f.issuer, f.clientID, f.secret, f.authMeth, f.redirect = c.Issuer, c.ClientID, c.ClientSecret, c.AuthMethod, c.RedirectURI
	if c.AccessToken != "" {
		f.token = &Token{AccessToken: c.AccessToken, RefreshToken: c.RefreshToken, Scope: c.Scope, Expiry: c.Expiry}
		f.scope = c.Scope
	}
	f.restored = true
}

// saveCacheLocked writes the registration and token, readable by the user
// only, replacing the file atomically.
func (f *Flow) saveCacheLocked() {
	if f.cfg.CacheFile == "" || f.clientID == "" {
		return
	}
	c := cached{Server: f.shown, Issuer: f.issuer, ClientID: f.clientID, ClientSecret: f.secret, AuthMethod: f.authMeth, RedirectURI: f.redirect}
	if f.token != nil && f.dp == nil { // a DPoP-bound token is worthless without its key, which is not kept
		c.AccessToken, c.RefreshToken, c.Scope, c.Expiry = f.token.AccessToken, f.token.RefreshToken, f.token.Scope, f.token.Expiry
	}
	b, _ := json.MarshalIndent(c, "", "  ")
	dir := filepath.Dir(f.cfg.CacheFile)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		f.note("cannot save the login (%v); the next run logs in again", err)
		return
	}
	tmp, err := os.CreateTemp(dir, ".login-*")
	if err != nil {
		f.note("cannot save the login (%v); the next run logs in again", err)
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), f.cfg.CacheFile) != nil {
		os.Remove(tmp.Name())
		f.note("cannot save the login in %s; the next run logs in again", f.cfg.CacheFile)
	}
}
