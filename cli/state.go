package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"mcpscope/internal/termsafe"
	"mcpscope/internal/xdg"
	"mcpscope/statestore"
	"mcpscope/statestore/redisstore"
	"mcpscope/transport"
)

// EnvState names the state store when --state is not given.
const EnvState = "MCPSCOPE_STATE"

// stateFlags choose where detached calls and their leases live: the
// embedded file store (default, this machine), or Redis (any machine that
// reaches it).
type stateFlags struct {
	url      string
	leaseTTL time.Duration
	stateTTL time.Duration
	tls      redisstore.TLSFiles
	added    bool // the command takes these flags (open and journal read a recording and do not)
	// warn is where the password warning goes (nil: os.Stderr); warned: said once.
	warn   io.Writer
	warned bool
}

func (f *stateFlags) add(fs *pflag.FlagSet) {
	f.added = true
	fs.StringVar(&f.url, "state", "", "keep detached calls in Redis, redis://[user@]host:port/db (rediss:// for TLS, see --state-ca; the password from REDISCLI_AUTH, not the URL), so any machine that reaches it can rejoin them; default: files under $XDG_STATE_HOME/mcpscope/calls (or set "+EnvState+")")
	fs.StringVar(&f.tls.CA, "state-ca", "", "with --state rediss://…, the CA file (PEM) that signed the Redis server's certificate (else the system's roots; or ?ca=FILE in the URL)")
	fs.StringVar(&f.tls.Cert, "state-cert", "", "with --state rediss://…, a client certificate (PEM) for a Redis that asks for one (or ?cert=FILE in the URL), with --state-cert-key")
	fs.StringVar(&f.tls.CertKey, "state-cert-key", "", "the key (PEM) of --state-cert (or ?cert_key=FILE in the URL)")
	fs.DurationVar(&f.leaseTTL, "lease-ttl", statestore.DefaultLeaseTTL, "how long a claim on a call or session lives unless its holder renews it (every third of it): a killed mcpscope loses its calls within it")
	fs.DurationVar(&f.stateTTL, "state-ttl", redisstore.DefaultStateTTL, "with --state redis://…, how long the record of a call nobody rejoins stays")
}

// open makes the store the flags name; a bad URL is a usage error. Redis
// is reached on first use, within bounded timeouts.
func (f *stateFlags) open(cmd string) (statestore.Store, error) {
	if !f.added {
		f.leaseTTL, f.stateTTL = statestore.DefaultLeaseTTL, redisstore.DefaultStateTTL
	}
	if f.leaseTTL <= 0 {
		return nil, usagef(cmd, "--lease-ttl must be a positive duration, got %v", f.leaseTTL)
	}
	if f.stateTTL <= 0 {
		return nil, usagef(cmd, "--state-ttl must be a positive duration, got %v", f.stateTTL)
	}
	url := f.url
	if url == "" {
		url = os.Getenv(EnvState)
	} else if redisstore.HasPassword(url) && !f.warned {
		// A command line is visible to anyone who lists processes.
		f.warned = true
		w := f.warn
		if w == nil {
			w = os.Stderr
		}
		fmt.Fprintf(w, "warning: the --state URL %s has a password in it, which anyone on this machine can read in the process list; leave it out and set REDISCLI_AUTH instead\n",
			termsafe.Line(transport.RedactURL(url)))
	}
	switch {
	case url == "" || url == "file":
		local := statestore.Default()
		local.LeaseTTL = f.leaseTTL
		return local, nil
	case strings.HasPrefix(url, "redis://"), strings.HasPrefix(url, "rediss://"):
		// A record Redis cannot take goes to a folder of that Redis's own,
		// not the default file store: it is listed, and rejoined, under
		// the same --state only, labelled as a local copy.
		s, err := redisstore.Open(redisstore.Options{URL: url, LeaseTTL: f.leaseTTL, StateTTL: f.stateTTL,
			FallbackRoot: filepath.Join(xdg.StateDir(), "fallback"), TLS: f.tls})
		if err != nil {
			return nil, usagef(cmd, "%v", err)
		}
		return s, nil
	}
	return nil, usagef(cmd, "--state takes redis://host:port/db or rediss://…, got %s", transport.RedactURL(url))
}
