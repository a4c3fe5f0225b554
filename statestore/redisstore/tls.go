package redisstore

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
)

// TLSFiles name the files of a TLS connection to Redis (rediss://): the CA
// that signed the server's certificate (else the system's roots), and a
// client certificate with its key for a server that asks for one. They
// come from flags (Options.TLS) or from the URL's own parameters
// (rediss://host:6380/0?ca=FILE&cert=FILE&cert_key=FILE), which are taken
// out before go-redis reads the URL (it refuses parameters it does not
// know).
type TLSFiles struct {
	CA      string
	Cert    string
	CertKey string
}

// The URL parameters that name TLSFiles.
const (
	paramCA      = "ca"
	paramCert    = "cert"
	paramCertKey = "cert_key"
)

func (f TLSFiles) empty() bool { return f == TLSFiles{} }

// splitTLS takes the TLSFiles parameters out of raw and merges them with
// given (a file named both ways must be the same file). It returns the URL
// for go-redis, the files, and the URL another process reaches the store
// by (the files' parameters in it, as absolute paths).
func splitTLS(raw string, given TLSFiles) (clean string, files TLSFiles, public string, err error) {
	u, perr := url.Parse(raw)
	if perr != nil {
		return raw, given, raw, nil // go-redis says what is wrong with it
	}
	q := u.Query()
	files = given
	for _, p := range []struct {
		param, flag string
		to          *string
	}{{paramCA, "--state-ca", &files.CA}, {paramCert, "--state-cert", &files.Cert}, {paramCertKey, "--state-cert-key", &files.CertKey}} {
		v := q.Get(p.param)
		q.Del(p.param)
		switch {
		case v == "":
		case *p.to != "" && *p.to != v:
			return "", files, "", fmt.Errorf("the URL's %s=%s and %s %s name two files: give one", p.param, v, p.flag, *p.to)
		default:
			*p.to = v
		}
		if *p.to != "" {
			if abs, err := filepath.Abs(*p.to); err == nil {
				*p.to = abs
			}
		}
	}
	if !files.empty() && u.Scheme != "rediss" {
		return "", files, "", fmt.Errorf("a CA or client certificate needs TLS: write rediss:// instead of %s://", u.Scheme)
	}
	if (files.Cert == "") != (files.CertKey == "") {
		return "", files, "", fmt.Errorf("a client certificate needs both its file (--state-cert, cert=) and its key (--state-cert-key, cert_key=)")
	}
	u.RawQuery = q.Encode()
	clean = u.String()
	if files.CA != "" {
		q.Set(paramCA, files.CA)
	}
	if files.Cert != "" {
		q.Set(paramCert, files.Cert)
		q.Set(paramCertKey, files.CertKey)
	}
	u.RawQuery = q.Encode()
	return clean, files, u.String(), nil
}

// apply loads the files into cfg (go-redis made it for rediss://).
func (f TLSFiles) apply(cfg *tls.Config) error {
	if f.empty() {
		return nil
	}
	if cfg == nil {
		return fmt.Errorf("a CA or client certificate needs TLS: write rediss://")
	}
	if f.CA != "" {
		b, err := os.ReadFile(f.CA)
		if err != nil {
			return fmt.Errorf("the CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return fmt.Errorf("the CA file %s holds no PEM certificate", f.CA)
		}
		cfg.RootCAs = pool
	}
	if f.Cert != "" {
		c, err := tls.LoadX509KeyPair(f.Cert, f.CertKey)
		if err != nil {
			return fmt.Errorf("the client certificate %s with key %s: %w", f.Cert, f.CertKey, err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return nil
}

// HasPassword reports whether raw carries a password in its user info
// (visible to anyone who lists processes when given on a command line).
func HasPassword(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return false
	}
	_, set := u.User.Password()
	return set
}
