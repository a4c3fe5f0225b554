package connect

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"mcpscope/internal/shell"
	"mcpscope/internal/termsafe"
	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/statestore"
	"mcpscope/transport"
)

// URLSecretRef is the secret reference of a target URL that carries
// credentials (userinfo, an api_key parameter): the record keeps it
// redacted, and the full URL has to be given again.
const URLSecretRef = "flag:URL"

// EnvBearer is the environment variable a bearer token may come from (in
// place of --bearer); a record of a call made with it names it.
const EnvBearer = "MCPSCOPE_BEARER"

// rejoinEnvRefs are the environment variables mcpscope itself names in a
// record (RejoinInfo), each with the one header it goes in: the only ones
// a rejoin reads. A record is untrusted input (anyone who can write to a
// shared store can plant one), so any other env: reference is refused.
var rejoinEnvRefs = map[string]string{EnvBearer: "Authorization"}

// RejoinInfo says how to reach sp's HTTP target again, with secrets named
// by where they came from rather than stored.
func RejoinInfo(sp Spec) session.RejoinInfo {
	ri := session.RejoinInfo{Target: transport.RedactURL(sp.URL), Headers: map[string]string{}, SecretRefs: map[string]string{}}
	if ri.Target != sp.URL {
		ri.SecretRefs["URL"] = URLSecretRef
	}
	for name, val := range sp.Headers {
		if transport.IsSecretName(name) {
			ri.SecretRefs[name] = "flag:-H " + name
			continue
		}
		ri.Headers[name] = val
	}
	switch {
	case sp.Bearer != "" && sp.BearerFromEnv:
		ri.SecretRefs["Authorization"] = "env:" + EnvBearer
	case sp.Bearer != "":
		ri.SecretRefs["Authorization"] = "flag:--bearer"
	}
	return ri
}

// MissingSecretError is a credential a detached call was made with that is
// not given again: rejoin records keep where a secret came from, never its
// value.
type MissingSecretError struct{ Name, Ref string }

func (e *MissingSecretError) Error() string {
	if e.Ref == URLSecretRef {
		return "the call was made on a URL with credentials in it, which rejoin records never keep: give that full URL again"
	}
	return fmt.Sprintf("the call was made with a secret (%s) that rejoin records never keep: give it again to rejoin", e.Name)
}

// rejoinURL is the URL to reach d's target at: the one sp gives again,
// which must be the record's (once redacted), or the record's own when it
// kept all of it.
func rejoinURL(d statestore.Detached, sp Spec) (string, error) {
	switch {
	case sp.URL != "" && transport.RedactURL(sp.URL) != d.Target:
		return "", fmt.Errorf("the call was made on %s, not on %s: give the URL it was made on", d.Target, transport.RedactURL(sp.URL))
	case sp.URL != "":
		return sp.URL, nil
	case d.SecretRefs["URL"] == URLSecretRef:
		return "", &MissingSecretError{Name: "URL", Ref: URLSecretRef}
	}
	return d.Target, nil
}

// rejoinCredentials fills in the secrets the record names from what sp
// gives (its headers and bearer) and the environment. The references were
// checked (checkRecord): only the kinds RejoinInfo writes reach here.
func rejoinCredentials(d statestore.Detached, sp Spec) (map[string]string, string, error) {
	hdr := map[string]string{}
	for k, v := range d.Headers {
		hdr[k] = v
	}
	bearer := ""
	for name, ref := range d.SecretRefs {
		switch {
		case ref == URLSecretRef: // rejoinURL's
		case strings.HasPrefix(ref, "env:"):
			v := os.Getenv(strings.TrimPrefix(ref, "env:"))
			if v == "" {
				return nil, "", &MissingSecretError{name, ref}
			}
			bearer = v // rejoinEnvRefs: Authorization only
		case ref == "flag:--bearer":
			if sp.Bearer == "" {
				return nil, "", &MissingSecretError{name, ref}
			}
			bearer = sp.Bearer
		default: // flag:-H Name
			found := false
			for n, v := range sp.Headers {
				if strings.EqualFold(strings.TrimSpace(n), name) {
					hdr[name], found = v, true
				}
			}
			if !found {
				return nil, "", &MissingSecretError{name, ref}
			}
		}
	}
	return hdr, bearer, nil
}

// maxRecordTarget bounds a record's target: longer is no URL mcpscope wrote.
const maxRecordTarget = 4096

// RecordTrust is how far a rejoin trusts a record of a detached call.
// Credentials (--bearer, -H, OAuth) go to its target only when the user
// named that origin: the record is sealed with the user's own state key
// (statestore.SealRecord), or --url on this command line names it.
type RecordTrust struct {
	Sealed bool   // tagged with this user's state key
	Named  bool   // --url names the record's origin
	Target string // the record's target, redacted (not yet made inert for a terminal)
}

// Credentials reports whether credentials may go to the record's target.
func (t RecordTrust) Credentials() bool { return t.Sealed || t.Named }

// CheckRecord reads a record of a detached call as the untrusted input it
// is (anyone who can write to a shared store can plant one): it refuses a
// record that is not one mcpscope could have written (a target that is not
// an http(s) URL, a transport other than HTTP: a record never makes
// mcpscope run a program; credentials kept in its headers; a secret
// reference of a kind mcpscope does not write, or an environment variable
// other than the ones it names itself), and says how far the record is
// trusted. A foreign record comes back without its journal path (a file
// of this machine it would have rejoin read) and stays foreign when this
// process writes it back.
func CheckRecord(sp Spec, d statestore.Detached) (statestore.Detached, RecordTrust, error) {
	refuse := func(format string, a ...any) (statestore.Detached, RecordTrust, error) {
		return d, RecordTrust{}, &SpecError{Msg: "the record of call " + d.Handle + " " + fmt.Sprintf(format, a...) + ": refused (records are read as untrusted input)"}
	}
	if d.Transport != "" && d.Transport != "http" {
		return refuse("names transport %q: rejoin reaches HTTP servers only, and a record never makes mcpscope run a program", termsafe.Cut(d.Transport, 40))
	}
	if len(d.Target) > maxRecordTarget {
		return refuse("has a target of %d bytes, longer than any URL mcpscope records", len(d.Target))
	}
	u, err := url.Parse(strings.ReplaceAll(d.Target, "[redacted]", "redacted")) // a redacted URL's marks parse as text
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return refuse("has target %s, not an http(s) URL: rejoin reaches HTTP servers only, and a record never makes mcpscope run a program",
			shell.Quote(termsafe.Cut(transport.RedactTarget(d.Target), 200)))
	}
	for name := range d.Headers {
		if transport.IsSecretName(name) || strings.EqualFold(strings.TrimSpace(name), "Authorization") {
			return refuse("keeps a credential header (%s) by value, which mcpscope never records", shell.Quote(termsafe.Cut(name, 80)))
		}
	}
	for name, ref := range d.SecretRefs {
		qname, qref := shell.Quote(termsafe.Cut(name, 80)), shell.Quote(termsafe.Cut(ref, 120))
		switch {
		case ref == URLSecretRef && name == "URL":
		case strings.HasPrefix(ref, "env:"):
			env := strings.TrimPrefix(ref, "env:")
			header, ok := rejoinEnvRefs[env]
			if !ok {
				return refuse("asks for the environment variable %s (for %s); rejoin reads only the ones mcpscope records itself (%s)",
					shell.Quote(termsafe.Cut(env, 80)), qname, EnvBearer)
			}
			if !strings.EqualFold(name, header) {
				return refuse("puts the environment variable %s in %s; mcpscope records it for %s only", env, qname, header)
			}
		case ref == "flag:--bearer":
			if !strings.EqualFold(name, "Authorization") {
				return refuse("puts --bearer in %s; mcpscope records it for Authorization only", qname)
			}
		case strings.HasPrefix(ref, "flag:-H "):
			if !strings.EqualFold(strings.TrimPrefix(ref, "flag:-H "), name) {
				return refuse("puts the -H header %s in %s", shell.Quote(termsafe.Cut(strings.TrimPrefix(ref, "flag:-H "), 80)), qname)
			}
		default:
			return refuse("names a secret %s by %s, a reference mcpscope does not write", qname, qref)
		}
	}
	tr := RecordTrust{Sealed: statestore.RecordSealed(d), Target: transport.RedactURL(d.Target)}
	if sp.URL != "" {
		if v, err := url.Parse(sp.URL); err == nil {
			tr.Named = sameOrigin(u, v)
		}
	}
	if !tr.Sealed {
		d.Journal = "" // someone else's path: a foreign record names no file here to read
		statestore.KeepForeign(d.Handle)
		if d.TaskID != "" {
			statestore.KeepForeign(protocol.TaskHandle(d.TaskID))
		}
	}
	return d, tr, nil
}

// sameOrigin reports whether a and b have one scheme, host and port.
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// foreignRecordError is a rejoin that would send credentials to the
// target of a record the user did not name: not sealed with their state
// key, and no --url for its origin. why says what would have been sent.
func foreignRecordError(handle, target, why string) error {
	return &SpecError{Msg: fmt.Sprintf("the record of call %s is foreign (not sealed with your state key), and %s: mcpscope sends no credential to %s "+
		"unless you name it; if that is the server you mean, add %s (or share the state key between your machines: see mcpscope rejoin --help)",
		handle, why, termsafe.Cut(target, 200), shell.Join([]string{"--url", target}))}
}

// foreignCredentials is what the user's credentials would be used for on
// an untrusted record ("": nothing).
func foreignCredentials(d statestore.Detached, sp Spec) string {
	for name, ref := range d.SecretRefs {
		if ref != URLSecretRef {
			return "it asks for a secret (" + termsafe.Cut(name, 80) + ")"
		}
	}
	if sp.Bearer != "" && !sp.BearerFromEnv {
		return "--bearer is given"
	}
	for name := range sp.Headers {
		if transport.IsSecretName(strings.TrimSpace(name)) {
			return "a credential header is given (-H " + termsafe.Cut(name, 80) + ")"
		}
	}
	return ""
}

// Rejoin starts a session on the target of a detached call, with the
// credentials it was made with (given again in sp), ready for
// session.Rejoin or RejoinTask. OAuth applies as for a new session unless a
// bearer or an Authorization header came back.
func Rejoin(sp Spec, d statestore.Detached, store statestore.Store) (*session.Session, error) {
	d, trust, err := CheckRecord(sp, d)
	if err != nil {
		return nil, err
	}
	target, err := rejoinURL(d, sp)
	if err != nil {
		return nil, err
	}
	if !trust.Credentials() {
		if why := foreignCredentials(d, sp); why != "" {
			return nil, foreignRecordError(d.Handle, trust.Target, why)
		}
	}
	hdr, bearer, err := rejoinCredentials(d, sp)
	if err != nil {
		return nil, err
	}
	rs := sp
	rs.URL, rs.Command, rs.Shell, rs.Self, rs.Bearer, rs.Headers = target, nil, false, nil, bearer, hdr
	if !trust.Credentials() {
		// No login, no cached token, no browser for an origin the user
		// did not name: a 401 there is an error.
		rs.Auth = Auth{Disabled: true}
	}
	flow, client := oauthFor(rs)
	t := transport.NewHTTP(rs.httpOptions(client))
	if flow != nil {
		flow.SetNote(t.Note)
		flow.SetWaiting(t.Waiting)
	}
	j, err := openJournal(rs, t.Describe()+" (rejoin "+d.Handle+")")
	if err != nil {
		return nil, err
	}
	r := sp.Responder
	if r == nil {
		r = newAnswers(sp.Answers, sp.Roots) // a rejoined task may ask for input
	}
	s := session.New(t, session.Options{Responder: r, Journal: j, Timeout: sp.Timeout, MaxTimeout: sp.MaxTimeout, StateStore: store,
		Observe: sp.Observe, Rejoin: session.RejoinInfo{Target: d.Target, Headers: d.Headers, SecretRefs: d.SecretRefs}})
	if err := s.Start(); err != nil {
		if j != nil {
			j.Close()
		}
		return nil, err
	}
	return s, nil
}
