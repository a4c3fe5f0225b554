package oauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
)

// Fetch is the Authorizer for automated runs (the conformance suite, whose
// authorization endpoint approves at once): it GETs the authorization URL
// without following the redirect and reads the code from its Location.
type Fetch struct {
	Redirect string       // the registered redirect URI (nothing listens there)
	HTTP     *http.Client // nil = a default client
}

// RedirectURI implements Authorizer.
func (a *Fetch) RedirectURI(context.Context) (string, error) {
	if a.Redirect == "" {
		return "http://127.0.0.1:33418/callback", nil
	}
	return a.Redirect, nil
}

// Authorize implements Authorizer.
func (a *Fetch) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	c := http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if a.HTTP != nil {
		c.Transport = a.HTTP.Transport
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	discard(resp)
	loc := resp.Header.Get("Location")
	if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
		return nil, fmt.Errorf("GET the authorization endpoint: %d without a redirect (it wants a person in a browser)", resp.StatusCode)
	}
	u, err := url.Parse(loc)
	if err != nil {
		return nil, fmt.Errorf("the authorization redirect %q is not a URL: %v", loc, err)
	}
	return u.Query(), nil
}

// Loopback is the Authorizer for people: it listens on 127.0.0.1, shows
// the authorization URL (and opens a browser unless NoBrowser), and waits
// for the redirect to come back with the code.
type Loopback struct {
	Port int // 0 = any free port
	// PreferPort is tried when Port is 0 (the port a saved registration was
	// made with); if it is taken, any free port will do.
	PreferPort int
	NoBrowser  bool
	// Show tells the user where to go; it is called with the URL when the
	// wait for the person begins, and Done when it ends (either may be nil).
	Show func(authURL string)
	Done func(err error)

	mu   sync.Mutex
	ln   net.Listener
	back chan url.Values
}

// RedirectURI implements Authorizer: it starts the listener.
func (a *Loopback) RedirectURI(context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ln == nil {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", a.Port))
		if a.Port == 0 && a.PreferPort > 0 {
			if pl, perr := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", a.PreferPort)); perr == nil {
				if err == nil {
					ln.Close()
				}
				ln, err = pl, nil
			}
		}
		if err != nil {
			return "", fmt.Errorf("listen for the authorization redirect on 127.0.0.1:%d: %v", a.Port, err)
		}
		a.ln, a.back = ln, make(chan url.Values, 1)
		srv := &http.Server{Handler: http.HandlerFunc(a.callback)}
		go func() { _ = srv.Serve(ln) }()
	}
	return "http://" + a.ln.Addr().String() + "/callback", nil
}

func (a *Loopback) callback(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/callback" {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	msg := "mcpscope is authorized; you can close this tab."
	if e := q.Get("error"); e != "" {
		msg = "The authorization server said: " + e + " " + q.Get("error_description")
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html><title>mcpscope</title><p>%s</p>\n", html.EscapeString(msg))
	select {
	case a.back <- q:
	default: // a second redirect: the first one counts
	}
}

// Authorize implements Authorizer.
func (a *Loopback) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	if _, err := a.RedirectURI(ctx); err != nil {
		return nil, err
	}
	if a.Show != nil {
		a.Show(authURL)
	}
	if !a.NoBrowser {
		_ = openBrowser(authURL)
	}
	var q url.Values
	var err error
	select {
	case q = <-a.back:
	case <-ctx.Done():
		err = errors.New("no authorization came back before the wait ended")
	}
	if a.Done != nil {
		a.Done(err)
	}
	return q, err
}

// Close stops the listener.
func (a *Loopback) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ln != nil {
		a.ln.Close()
	}
}

// openBrowser shows u in $BROWSER (a command; the URL is its last
// argument) or the desktop's default browser.
func openBrowser(u string) error {
	var cmd *exec.Cmd
	if b := strings.Fields(os.Getenv("BROWSER")); len(b) > 0 {
		cmd = exec.Command(b[0], append(b[1:], u)...)
		cmd.Stdout, cmd.Stderr = nil, nil
		return startDetached(cmd)
	}
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	return startDetached(cmd)
}

func startDetached(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
