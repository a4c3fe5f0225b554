package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"maps"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDiscoveryURLs(t *testing.T) {
	got := resourceMetadataURLs("https://Example.com/public/mcp", Challenge{})
	want := []string{"https://Example.com/.well-known/oauth-protected-resource/public/mcp", "https://Example.com/.well-known/oauth-protected-resource"}
	if !slices.Equal(got, want) {
		t.Errorf("resource metadata URLs %v", got)
	}
	if got := resourceMetadataURLs("https://e.com/mcp", Challenge{ResourceMetadata: "https://e.com/prm"}); !slices.Equal(got, []string{"https://e.com/prm"}) {
		t.Errorf("the challenge's URL must be the only one tried: %v", got)
	}
	if got := resourceMetadataURLs("https://e.com/", Challenge{}); !slices.Equal(got, []string{"https://e.com/.well-known/oauth-protected-resource"}) {
		t.Errorf("root endpoint: %v", got)
	}
	got = serverMetadataURLs("https://auth.example.com/tenant1")
	want = []string{"https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
		"https://auth.example.com/.well-known/openid-configuration/tenant1", "https://auth.example.com/tenant1/.well-known/openid-configuration"}
	if !slices.Equal(got, want) {
		t.Errorf("issuer with a path: %v", got)
	}
	got = serverMetadataURLs("https://auth.example.com")
	want = []string{"https://auth.example.com/.well-known/oauth-authorization-server", "https://auth.example.com/.well-known/openid-configuration"}
	if !slices.Equal(got, want) {
		t.Errorf("issuer without a path: %v", got)
	}
}

func TestResourceMatching(t *testing.T) {
	if c := canonicalResource("HTTPS://Mcp.Example.COM/mcp?x=1#f"); c != "https://mcp.example.com/mcp" {
		t.Errorf("canonical %s", c)
	}
	for _, c := range []struct {
		resource, server string
		same             bool
	}{
		{"https://e.com/mcp", "https://e.com/mcp", true},
		{"https://e.com/", "https://e.com/mcp", true},
		{"https://E.com/mcp/", "https://e.com/mcp", true},
		{"https://e.com/mc", "https://e.com/mcp", false},
		{"https://other.com/mcp", "https://e.com/mcp", false},
	} {
		if got := sameResource(c.resource, c.server); got != c.same {
			t.Errorf("sameResource(%s, %s) = %v", c.resource, c.server, got)
		}
	}
	if u := unionScopes("a b", "b c"); u != "a b c" {
		t.Errorf("union %q", u)
	}
}

// A client assertion verifies with the public half of the key it was
// signed with, and carries the claims RFC 7523 asks for.
func TestClientAssertion(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	for _, c := range []struct {
		key    any
		alg    string
		verify func(signing, sig []byte) bool
	}{
		{ec, "ES256", func(signing, sig []byte) bool {
			sum := sha256.Sum256(signing)
			r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
			return len(sig) == 64 && ecdsa.Verify(&ec.PublicKey, sum[:], r, s)
		}},
		{rk, "RS256", func(signing, sig []byte) bool {
			sum := sha256.Sum256(signing)
			return rsa.VerifyPKCS1v15(&rk.PublicKey, crypto.SHA256, sum[:], sig) == nil
		}},
	} {
		der, _ := x509.MarshalPKCS8PrivateKey(c.key)
		keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
		jwt, err := clientAssertion(keyPEM, "", "client-1", "https://as.example.com")
		if err != nil {
			t.Fatalf("%s: %v", c.alg, err)
		}
		var head map[string]string
		claims, signing, sig := splitJWT(t, jwt, &head)
		if head["alg"] != c.alg || claims["iss"] != "client-1" || claims["sub"] != "client-1" || claims["aud"] != "https://as.example.com" ||
			claims["jti"] == "" || claims["exp"].(float64) <= float64(time.Now().Unix()) {
			t.Errorf("%s: header %v claims %v", c.alg, head, claims)
		}
		if !c.verify(signing, sig) {
			t.Errorf("%s: the signature does not verify", c.alg)
		}
	}
	if _, err := clientAssertion("not a key", "", "c", "a"); err == nil {
		t.Error("a non-PEM key must be refused")
	}
}

// The loopback listener takes the browser's redirect, answers it with a
// page, and hands the query back; the URL goes to Show first.
func TestLoopbackAuthorizer(t *testing.T) {
	shown := make(chan string, 1)
	a := &Loopback{NoBrowser: true, Show: func(u string) { shown <- u }}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	ru, err := a.RedirectURI(ctx)
	if err != nil || !strings.HasPrefix(ru, "http://127.0.0.1:") || !strings.HasSuffix(ru, "/callback") {
		t.Fatalf("redirect URI %q %v", ru, err)
	}
	page := make(chan string, 1)
	go func() {
		u := <-shown
		if u != "https://as.example.com/authorize?x=1" {
			page <- "wrong URL shown: " + u
			return
		}
		resp, err := http.Get(ru + "?code=abc&state=s1")
		if err != nil {
			page <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page <- string(b)
	}()
	q, err := a.Authorize(ctx, "https://as.example.com/authorize?x=1")
	if err != nil || q.Get("code") != "abc" || q.Get("state") != "s1" {
		t.Fatalf("authorize: %v %v", q, err)
	}
	if p := <-page; !strings.Contains(p, "mcpscope is authorized") {
		t.Fatalf("the browser got %q", p)
	}
}

// Fetch reads the code from the authorization endpoint's redirect without
// following it, and says so when there is no redirect.
func TestFetchAuthorizer(t *testing.T) {
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		status := http.StatusOK
		if r.URL.Query().Get("ok") == "1" {
			status = http.StatusFound
			h.Set("Location", "http://127.0.0.1:1/callback?code=c1&state=s1&iss="+url.QueryEscape("https://as"))
		}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})
	a := &Fetch{HTTP: &http.Client{Transport: rt}}
	q, err := a.Authorize(context.Background(), "https://as/authorize?ok=1")
	if err != nil || q.Get("code") != "c1" || q.Get("iss") != "https://as" {
		t.Fatalf("%v %v", q, err)
	}
	if _, err := a.Authorize(context.Background(), "https://as/authorize?ok=0"); err == nil || !strings.Contains(err.Error(), "without a redirect") {
		t.Fatalf("a page instead of a redirect: %v", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A login saved by one flow is what the next flow for the same server
// starts with; another server's or another client's is not, and the file
// is the user's alone.
func TestLoginCache(t *testing.T) {
	file := filepath.Join(t.TempDir(), "oauth", "login.json")
	f := NewFlow("https://mcp.example.com/mcp", Config{CacheFile: file})
	f.mu.Lock()
	f.issuer, f.clientID, f.authMeth, f.redirect = "https://as.example.com", "dyn-1", "none", "http://127.0.0.1:4567/callback"
	f.token = &Token{AccessToken: "at-1", RefreshToken: "rt-1", Scope: "read"}
	f.saveCacheLocked()
	f.mu.Unlock()
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("cache file: %v %v", st, err)
	}
	if g := NewFlow("https://mcp.example.com/mcp", Config{CacheFile: file}); sent(g) != "at-1" || g.clientID != "dyn-1" || g.token.RefreshToken != "rt-1" {
		t.Fatalf("not restored: token %q client %q", sent(g), g.clientID)
	}
	if g := NewFlow("https://other.example.com/mcp", Config{CacheFile: file}); sent(g) != "" {
		t.Fatal("another server's login was used")
	}
	if g := NewFlow("https://mcp.example.com/mcp", Config{CacheFile: file, ClientID: "pre-2"}); sent(g) != "" {
		t.Fatal("another client's login was used")
	}
	if CachedRedirect(file, "https://mcp.example.com/mcp") != "http://127.0.0.1:4567/callback" || CachedRedirect(file, "https://x/mcp") != "" {
		t.Fatal("CachedRedirect")
	}
}

// A DPoP proof carries its public key, verifies with it, names the request
// (without its query) and the token it goes with, and picks up the nonce
// the server sent; a nonce counts as new only once.
func TestDPoPProof(t *testing.T) {
	d, err := newDPoP()
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("DPoP-Nonce", "n-1")
	if !d.noteNonce("https://mcp.example.com/mcp", h) || d.noteNonce("https://mcp.example.com/other", h) {
		t.Fatal("noteNonce: a nonce is new once per origin")
	}
	p := d.proof("POST", "https://mcp.example.com/mcp?x=1#f", "tok-1")
	var head struct {
		Typ, Alg string
		JWK      struct{ Kty, Crv, X, Y string }
	}
	claims, signing, sig := splitJWT(t, p, &head)
	sum := sha256.Sum256([]byte("tok-1"))
	if head.Typ != "dpop+jwt" || head.Alg != "ES256" || head.JWK.Crv != "P-256" || claims["htm"] != "POST" ||
		claims["htu"] != "https://mcp.example.com/mcp" || claims["nonce"] != "n-1" || claims["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]) {
		t.Fatalf("header %+v claims %v", head, claims)
	}
	xb, _ := base64.RawURLEncoding.DecodeString(head.JWK.X)
	yb, _ := base64.RawURLEncoding.DecodeString(head.JWK.Y)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, xb...), yb...))
	if err != nil {
		t.Fatalf("the key in the proof's header: %v", err)
	}
	signed := sha256.Sum256(signing)
	if len(sig) != 64 || !ecdsa.Verify(pub, signed[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("the proof does not verify with the key in its header")
	}
	if q := d.proof("POST", "https://mcp.example.com/mcp", "tok-1"); strings.Split(q, ".")[1] == strings.Split(p, ".")[1] {
		t.Fatal("two proofs share a jti")
	}
}

// The JWK in a proof is the key's coordinates, fixed-width: for the P-256
// key of RFC 7517 A.2 it is the x and y the RFC prints, and its RFC 7638
// thumbprint (what a server binds the token to, cnf.jkt) stays the one
// mcpscope has always sent. A key whose x starts with a zero byte still
// gets 32 bytes of x.
func TestDPoPJWK(t *testing.T) {
	db, _ := base64.RawURLEncoding.DecodeString("870MB6gfuTJ4HtUnUvYMyJpr5eUZNP4Bk43bVdj3eAE")
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), db)
	if err != nil {
		t.Fatal(err)
	}
	d := &dpop{key: k, nonces: map[string]string{}}
	var head struct{ JWK map[string]string }
	splitJWT(t, d.proof("POST", "https://mcp.example.com/mcp", ""), &head)
	want := map[string]string{"kty": "EC", "crv": "P-256",
		"x": "MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4", "y": "4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM"}
	if !maps.Equal(head.JWK, want) {
		t.Fatalf("jwk %v, want %v", head.JWK, want)
	}
	canon, _ := json.Marshal(head.JWK) // RFC 7638: the required members, sorted, no spaces (Marshal sorts map keys)
	if sum := sha256.Sum256(canon); base64.RawURLEncoding.EncodeToString(sum[:]) != "cn-I_WNMClehiVp51i_0VpOENW1upEerA8sEam5hn-s" {
		t.Fatalf("thumbprint of %s changed: %s", canon, base64.RawURLEncoding.EncodeToString(sum[:]))
	}

	for i := 0; ; i++ { // one key in 256 has a leading zero byte in x
		if i == 100000 {
			t.Fatal("no key with a short x in 100000 tries")
		}
		if d, err = newDPoP(); err != nil {
			t.Fatal(err)
		}
		if pt, _ := d.key.PublicKey.Bytes(); pt[1] == 0 {
			break
		}
	}
	splitJWT(t, d.proof("POST", "https://mcp.example.com/mcp", ""), &head)
	if xb, _ := base64.RawURLEncoding.DecodeString(head.JWK["x"]); len(xb) != 32 || xb[0] != 0 {
		t.Fatalf("x of a key with a leading zero: %x", xb)
	}
}

// splitJWT decodes a compact JWT: its header into head, its claims, the
// signed part and the signature.
func splitJWT(t *testing.T, jwt string, head any) (claims map[string]any, signing, sig []byte) {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("%q is not a JWT", jwt)
	}
	hb, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	cb, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || json.Unmarshal(hb, head) != nil || json.Unmarshal(cb, &claims) != nil {
		t.Fatalf("%q does not decode", jwt)
	}
	return claims, []byte(parts[0] + "." + parts[1]), sig
}

// sent is the token a flow puts on a request to its server, "" if none.
func sent(f *Flow) string {
	r, _ := http.NewRequest(http.MethodPost, f.server, nil)
	return f.sign(r)
}
