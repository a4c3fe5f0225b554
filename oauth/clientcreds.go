package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"slices"
	"strings"
	"time"
)

// useClientCredentials reports whether to get tokens with the
// client_credentials grant (machine to machine, no person): asked for, or
// the only grant the server offers that fits a registered client.
func (f *Flow) useClientCredentials() bool {
	if f.cfg.Grant != "" {
		return f.cfg.Grant == "client_credentials"
	}
	g := f.sm.GrantTypesSupported
	return f.cfg.ClientID != "" && (f.cfg.ClientSecret != "" || f.cfg.PrivateKeyPEM != "") &&
		slices.Contains(g, "client_credentials") && !slices.Contains(g, "authorization_code")
}

// clientCredentialsLocked gets a token with the client_credentials grant,
// authenticating with a signed JWT (private_key_jwt) or the secret.
func (f *Flow) clientCredentialsLocked(ctx context.Context, scope string) error {
	f.clientID, f.secret = f.cfg.ClientID, f.cfg.ClientSecret
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {f.resource()}}
	if scope != "" {
		form.Set("scope", scope)
	}
	if f.cfg.PrivateKeyPEM != "" {
		aud := f.sm.Issuer
		if aud == "" {
			aud = f.issuer
		}
		jwt, err := clientAssertion(f.cfg.PrivateKeyPEM, f.cfg.SigningAlg, f.clientID, aud)
		if err != nil {
			return &Error{Step: "token", Msg: "cannot sign the client assertion: " + err.Error(), Hint: "give a PKCS#8 PEM EC (ES256) or RSA (RS256) private key"}
		}
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", jwt)
		f.authMeth = "private_key_jwt"
	} else {
		f.authMeth = f.pickAuthMethod("")
	}
	f.note("client_credentials grant at %s (client %s, %s)", f.sm.TokenEndpoint, f.clientID, f.authMeth)
	return f.grantLocked(ctx, form, scope)
}

// clientAssertion signs an RFC 7523 client authentication JWT: iss and sub
// the client id, aud the authorization server's issuer, valid five minutes.
func clientAssertion(keyPEM, alg, clientID, audience string) (string, error) {
	block, _ := pem.Decode([]byte(keyPEM))
	if block == nil {
		return "", errors.New("no PEM block in the private key")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		if k, err2 := x509.ParseECPrivateKey(block.Bytes); err2 == nil {
			key = k
		} else if k, err3 := x509.ParsePKCS1PrivateKey(block.Bytes); err3 == nil {
			key = k
		} else {
			return "", err
		}
	}
	switch key.(type) {
	case *ecdsa.PrivateKey:
		if alg == "" {
			alg = "ES256"
		}
	case *rsa.PrivateKey:
		if alg == "" {
			alg = "RS256"
		}
	default:
		return "", fmt.Errorf("unsupported key type %T", key)
	}
	if alg != "ES256" && alg != "RS256" {
		return "", fmt.Errorf("signing algorithm %s is not supported (ES256 and RS256 are)", alg)
	}
	now := time.Now()
	head, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{"iss": clientID, "sub": clientID, "aud": audience,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": randomString(24)})
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString(head) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signing))
	var sig []byte
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if alg != "ES256" {
			return "", fmt.Errorf("an EC key signs ES256, not %s", alg)
		}
		r, s, err := ecdsa.Sign(rand.Reader, k, sum[:])
		if err != nil {
			return "", err
		}
		size := (k.Curve.Params().BitSize + 7) / 8
		sig = append(pad(r, size), pad(s, size)...)
	case *rsa.PrivateKey:
		if alg != "RS256" {
			return "", fmt.Errorf("an RSA key signs RS256, not %s", alg)
		}
		if sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:]); err != nil {
			return "", err
		}
	}
	return signing + "." + enc.EncodeToString(sig), nil
}

func pad(n *big.Int, size int) []byte {
	b := n.Bytes()
	if len(b) >= size {
		return b
	}
	return append(make([]byte, size-len(b)), b...)
}

// scopeFor applies the scope selection strategy: the user's (with what the
// server challenged for, which the request needs), the challenge's, else the
// resource's scopes_supported, else none.
func (f *Flow) scopeFor(challenged string) string {
	switch {
	case f.cfg.Scope != "":
		return unionScopes(f.cfg.Scope, challenged)
	case challenged != "":
		return challenged
	case f.rm != nil && len(f.rm.ScopesSupported) > 0:
		return strings.Join(f.rm.ScopesSupported, " ")
	}
	return ""
}
