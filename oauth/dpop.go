package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"
)

// dpop holds the key that binds tokens to this client (RFC 9449) and the
// nonces the servers asked for. Proofs are ES256 JWTs with the public key
// in their header, fresh for every request.
type dpop struct {
	key *ecdsa.PrivateKey

	mu     sync.Mutex
	nonces map[string]string // origin → the last DPoP-Nonce it sent
}

func newDPoP() (*dpop, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return &dpop{key: k, nonces: map[string]string{}}, nil
}

// wantsDPoP reports whether the authorization server binds tokens with
// DPoP using an algorithm we sign with.
func wantsDPoP(sm *ServerMetadata) bool {
	return sm != nil && slices.Contains(sm.DPoPSigningAlgs, "ES256")
}

func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Scheme + "://" + p.Host
}

// proof signs a DPoP proof for one request: method and URL (without query
// and fragment), the server's nonce if it sent one, and the hash of the
// access token it goes with ("" at the token endpoint).
func (d *dpop) proof(method, target, accessToken string) string {
	u, err := url.Parse(target)
	if err == nil {
		u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
		target = u.String()
	}
	size := 32
	jwk, err := d.jwk()
	if err != nil {
		return ""
	}
	head, _ := json.Marshal(map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk})
	claims := map[string]any{"jti": randomString(24), "htm": method, "htu": target, "iat": time.Now().Unix()}
	d.mu.Lock()
	if n := d.nonces[origin(target)]; n != "" {
		claims["nonce"] = n
	}
	d.mu.Unlock()
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	body, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString(head) + "." + enc.EncodeToString(body)
	sum := sha256.Sum256([]byte(signing))
	r, s, err := ecdsa.Sign(rand.Reader, d.key, sum[:])
	if err != nil {
		return ""
	}
	return signing + "." + enc.EncodeToString(append(pad(r, size), pad(s, size)...))
}

// jwk is the public key as a JWK (RFC 7518 6.2.1): x and y are the
// fixed-width (32-byte) coordinates of the uncompressed point 04 || x || y.
func (d *dpop) jwk() (map[string]string, error) {
	pt, err := d.key.PublicKey.Bytes()
	if err != nil {
		return nil, err
	}
	if len(pt) != 65 {
		return nil, fmt.Errorf("a P-256 point is 65 bytes, not %d", len(pt))
	}
	enc := base64.RawURLEncoding
	return map[string]string{"kty": "EC", "crv": "P-256", "x": enc.EncodeToString(pt[1:33]), "y": enc.EncodeToString(pt[33:])}, nil
}

// noteNonce keeps a DPoP-Nonce a server sent; it reports whether it is
// new (a request refused for want of it is worth sending again).
func (d *dpop) noteNonce(target string, h http.Header) bool {
	n := h.Get("DPoP-Nonce")
	if n == "" {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	o := origin(target)
	if d.nonces[o] == n {
		return false
	}
	d.nonces[o] = n
	return true
}
