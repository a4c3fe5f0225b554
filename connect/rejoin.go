package connect

import (
	"fmt"
	"os"
	"strings"

	"mcpscope/session"
	"mcpscope/transport"
)

// URLSecretRef is the secret reference of a target URL that carries
// credentials (userinfo, an api_key parameter): the record keeps it
// redacted, and the full URL has to be given again.
const URLSecretRef = "flag:URL"

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
		ri.SecretRefs["Authorization"] = "env:MCPSCOPE_BEARER"
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
func rejoinURL(d session.Detached, sp Spec) (string, error) {
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
// gives (its headers and bearer) and the environment.
func rejoinCredentials(d session.Detached, sp Spec) (map[string]string, string, error) {
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
			if strings.EqualFold(name, "Authorization") {
				bearer = v
			} else {
				hdr[name] = v
			}
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

// Rejoin starts a session on the target of a detached call, with the
// credentials it was made with (given again in sp), ready for
// session.Rejoin or RejoinTask. OAuth applies as for a new session unless a
// bearer or an Authorization header came back.
func Rejoin(sp Spec, d session.Detached, store session.StateStore) (*session.Session, error) {
	target, err := rejoinURL(d, sp)
	if err != nil {
		return nil, err
	}
	hdr, bearer, err := rejoinCredentials(d, sp)
	if err != nil {
		return nil, err
	}
	rs := sp
	rs.URL, rs.Command, rs.Bearer, rs.Headers = target, nil, bearer, hdr
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
