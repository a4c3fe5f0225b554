package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"mcpscope/connect"
	"mcpscope/filter"
	"mcpscope/hosts"
	"mcpscope/internal/userfile"
	"mcpscope/journal"
	"mcpscope/transport"
)

// Flag groups shared by the commands that connect to a server. A command
// takes the groups it needs (see each command's file) plus flags of its own.

// serverFlags name the target and how to start or reach it.
type serverFlags struct {
	server    string // a configured server's name (mcpscope servers)
	url       string
	env       []string
	cwd       string
	shell     bool
	transport string
	era       string
	roots     []string
	logLevel  string
}

func (f *serverFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.url, "url", "", "the server's URL, instead of a URL as the last argument")
	fs.StringVar(&f.server, "server", "", "a server configured in an AI host (see mcpscope servers) or in mcpscope, by NAME or HOST/NAME (see mcpscope servers)")
	stringArrayVarP(fs, &f.env, "env", "e", "set KEY=VALUE in the spawned server's environment (repeatable)")
	fs.StringVar(&f.cwd, "cwd", "", "working directory of the spawned server")
	fs.BoolVar(&f.shell, "shell", false, "run the server command through sh -c")
	fs.StringVar(&f.transport, "transport", "", "use http (Streamable HTTP only) or sse (HTTP+SSE, 2024-11-05); by default Streamable HTTP, then HTTP+SSE when it gets 400/404/405")
	fs.StringVar(&f.era, "era", "auto", "protocol era: auto (ask with server/discover), legacy (initialize) or modern (2026-07-28)")
	stringArrayVar(fs, &f.roots, "root", "answer roots/list with this directory or file:// URI instead of the working directory (repeatable); none answers no roots, ask asks you each time (inspector only); R in the inspector changes them mid-session")
	fs.StringVar(&f.logLevel, "log-level", "", "server log level: logging/setLevel (2025 era) or per-request _meta (2026-07-28)")
}

// httpFlags carry credentials for an HTTP server, and OAuth's settings.
type httpFlags struct {
	headers      []string
	bearer       string
	noOAuth      bool
	noBrowser    bool
	clientID     string
	clientSecret string
	metadataURL  string
	clientKey    string
	grant        string
	idToken      string
	idpEndpoint  string
	idpClientID  string
	assertion    string
	scope        string
	oauthPort    int
	allowRedir   []string
}

func (f *httpFlags) add(fs *pflag.FlagSet) {
	stringArrayVarP(fs, &f.headers, "header", "H", "send an extra HTTP header, \"Name: value\" (repeatable)")
	fs.StringVar(&f.bearer, "bearer", "", "send Authorization: Bearer TOKEN (or set MCPSCOPE_BEARER)")
	fs.BoolVar(&f.noOAuth, "no-oauth", false, "never authorize: a 401 is an error")
	fs.BoolVar(&f.noBrowser, "no-browser", false, "print the OAuth authorization URL instead of opening a browser")
	fs.StringVar(&f.clientID, "client-id", "", "an OAuth client id registered with the authorization server (default: register dynamically)")
	fs.StringVar(&f.clientSecret, "client-secret", "", "the secret of --client-id (or set MCPSCOPE_CLIENT_SECRET)")
	fs.StringVar(&f.metadataURL, "client-metadata-url", "", "an https URL serving this client's OAuth metadata document, used as its client id")
	fs.StringVar(&f.clientKey, "client-key", "", "a PKCS#8 PEM private key file (EC or RSA) to sign OAuth client assertions with (private_key_jwt)")
	fs.StringVar(&f.grant, "grant", "", "the OAuth grant: client_credentials (machine to machine) or authorization_code (a person in a browser); by default what the server offers")
	fs.StringVar(&f.idToken, "id-token", "", "with enterprise-managed OAuth (SEP-990), the identity provider's ID token to trade for an ID-JAG")
	fs.StringVar(&f.idpEndpoint, "idp-token-endpoint", "", "with enterprise-managed OAuth, the identity provider's token endpoint URL")
	fs.StringVar(&f.idpClientID, "idp-client-id", "", "with enterprise-managed OAuth, the client id at the identity provider")
	fs.StringVar(&f.assertion, "assertion", "", "a JWT to present as the OAuth grant (jwt-bearer; workload identity federation)")
	fs.StringVar(&f.scope, "scope", "", "scopes to ask OAuth for besides what the server's challenge names (space-separated)")
	fs.IntVar(&f.oauthPort, "oauth-port", 0, "port of the local OAuth redirect listener, http://127.0.0.1:PORT/callback (default: any free port)")
	stringArrayVar(fs, &f.allowRedir, "allow-redirect", "follow the server's redirects to this origin, scheme://host[:port], or * for any (repeatable); credentials are never sent to another origin")
}

// sessionFlags shape the session itself: limits, journal, answers.
type sessionFlags struct {
	timeout     durationFlag
	maxTimeout  durationFlag
	journal     string
	noJournal   bool
	answers     []string
	answersFile string
	state       stateFlags
}

func (f *sessionFlags) add(fs *pflag.FlagSet) {
	fs.Var(&f.timeout, "timeout", "idle limit per call as a duration (30s, 5m), reset by progress; default 60s, 0 = none; also bounds the handshake")
	fs.Var(&f.maxTimeout, "max-timeout", "hard limit per call as a duration; default 30m, 0 = none")
	fs.StringVar(&f.journal, "journal", "", "write the session journal to this path (default: a new file under $XDG_STATE_HOME/mcpscope/journal)")
	fs.BoolVar(&f.noJournal, "no-journal", false, "write no journal")
	stringArrayVar(fs, &f.answers, "answer", "answer an input request (by its key) or a server request (by method), as KEY=JSON (repeatable)")
	fs.StringVar(&f.answersFile, "answers", "", "a file holding a JSON object of such answers")
	f.state.add(fs)
}

// durationFlag is a duration where 0 or "none" mean no limit (-1 for the
// session) and unset means the default (0).
type durationFlag struct{ d time.Duration }

func (d *durationFlag) String() string {
	switch {
	case d.d < 0:
		return "0"
	case d.d == 0:
		return ""
	}
	return d.d.String()
}

func (d *durationFlag) Set(v string) error {
	if v == "0" || v == "none" {
		d.d = -1
		return nil
	}
	x, err := time.ParseDuration(v)
	if err != nil || x <= 0 {
		return fmt.Errorf("takes a duration like 30s or 5m (or 0 for none), got %q", v)
	}
	d.d = x
	return nil
}

func (d *durationFlag) Type() string { return "D" }

// connFlags are the three groups together: what every command that starts
// a session takes.
type connFlags struct {
	server serverFlags
	http   httpFlags
	sess   sessionFlags
	otlp   otlpFlag // added by the commands that send spans live (add does not)
	// noListen: the command reads only answers to its own requests (a
	// list, a read, a ping), so a 2025 HTTP server's standalone stream is
	// not opened (set by the command, not a flag).
	noListen bool
}

func (f *connFlags) add(fs *pflag.FlagSet) {
	f.server.add(fs)
	f.http.add(fs)
	f.sess.add(fs)
}

// split separates a command's own arguments from the target: what follows
// -- is the server command, and a last argument that is an http(s) URL is
// the server's URL.
func split(cmd *cobra.Command, args []string) (own []string, url string, command []string) {
	own = args
	if at := cmd.ArgsLenAtDash(); at >= 0 {
		own, command = args[:at], args[at:]
		return own, "", command
	}
	if n := len(own); n > 0 && hasHTTPScheme(own[n-1]) {
		return own[:n-1], own[n-1], nil
	}
	return own, "", nil
}

func hasHTTPScheme(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// hostLike matches what people type for a URL without its scheme:
// 127.0.0.1:3001/mcp, localhost:8080, example.com/mcp.
var hostLike = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([a-zA-Z0-9.-]+|\[[0-9a-fA-F:]+\]):[0-9]+(/.*)?$|^[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)+/.*$`)
})

// schemeHint suggests the URL a scheme-less argument probably meant.
func schemeHint(arg string) string {
	if hostLike().MatchString(arg) {
		return fmt.Sprintf("%q has no scheme: did you mean http://%s ?", arg, arg)
	}
	return ""
}

// spec builds the connect.Spec the flags and target describe. Usage
// mistakes come back as usage errors.
func (f *connFlags) spec(cmd *cobra.Command, url string, command []string) (connect.Spec, error) {
	if at := cmd.ArgsLenAtDash(); at >= 0 && at == cmd.Flags().NArg() {
		// A -- that ends the command line. (A side of diff left without a
		// target, the demo, is not this: its -- has a command after it.)
		return connect.Spec{}, usagef(cmd.CommandPath(), "nothing after --: give the server's command after it (mcpscope %s -- node server.js), or leave the -- out for the built-in demo", cmd.Name())
	}
	return f.specOf(cmd, url, command)
}

// specOf is spec without the look at the command line's --, for what
// parses no command line of its own (completion, whose parse reports a --
// where none was typed).
func (f *connFlags) specOf(cmd *cobra.Command, url string, command []string) (connect.Spec, error) {
	name := cmd.CommandPath()
	var configured *hosts.Target
	if f.server.server != "" {
		if url != "" || len(command) > 0 || f.server.url != "" {
			return connect.Spec{}, usagef(name, "give either --server or a target, not both")
		}
		t, err := configuredTarget(cmd, f.server.server)
		if err != nil {
			return connect.Spec{}, err
		}
		configured = &t
		url, command = t.URL, t.Command
	}
	if f.server.url != "" {
		if url != "" {
			return connect.Spec{}, usagef(name, "two URLs: %s and --url %s", transport.RedactURL(url), transport.RedactURL(f.server.url))
		}
		url = f.server.url
	}
	if url != "" && len(command) > 0 {
		return connect.Spec{}, usagef(name, "give either a URL or a command after --, not both")
	}
	if url != "" {
		if err := checkURL(url); err != nil {
			return connect.Spec{}, usagef(name, "%v", err)
		}
	}
	sp := connect.Spec{URL: url, Command: command, Shell: f.server.shell, Env: f.server.env, Dir: f.server.cwd,
		LogLevel: f.server.logLevel}
	roots, ask, err := resolveRoots(name, f.server.roots)
	if err != nil {
		return sp, err
	}
	if ask && !asksRoots(cmd) {
		return sp, usagef(name, "--root ask needs a person to ask: only the inspector (and open's replays) can; give a directory, a file:// URI or none")
	}
	sp.Roots, sp.AskRoots = roots, ask
	if configured != nil {
		// The host's settings, then the command line's on top.
		sp.Env = append(append([]string(nil), configured.Env...), f.server.env...)
		if sp.Dir == "" {
			sp.Dir = configured.Dir
		}
		if f.server.transport == "" {
			f.server.transport = configured.Transport
		}
	}
	for _, e := range sp.Env {
		if !strings.Contains(e, "=") {
			return sp, usagef(name, "-e takes KEY=VALUE, got %q", e)
		}
	}
	switch f.server.transport {
	case "", "http", "sse":
		sp.Transport = f.server.transport
	default:
		return sp, usagef(name, "--transport takes http (Streamable HTTP) or sse (HTTP+SSE, 2024-11-05), got %q", f.server.transport)
	}
	switch f.server.era {
	case "", "auto":
	case "legacy", "modern":
		sp.Era = f.server.era
	default:
		return sp, usagef(name, "--era takes auto, legacy or modern, got %q", f.server.era)
	}
	if err := f.http.fill(&sp, name); err != nil {
		return sp, err
	}
	if configured != nil && len(configured.Headers) > 0 {
		h := map[string]string{}
		for k, v := range configured.Headers {
			h[k] = v
		}
		for k, v := range sp.Headers {
			h[k] = v // -H wins
		}
		sp.Headers = h
	}
	if err := f.sess.fill(&sp, name); err != nil {
		return sp, err
	}
	if self, err := os.Executable(); err == nil {
		sp.Self = []string{self, "demo"}
	}
	return sp, nil
}

// checkURL accepts http and https URLs with a host. It shows the URL
// redacted: this output may end up in a log.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	shown := transport.RedactURL(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL: %s", shown, transport.URLParseReason(raw, err))
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q: mcpscope speaks http and https, not %q", shown, u.Scheme)
	case u.Host == "":
		return fmt.Errorf("%q has no host", shown)
	case strings.ContainsFunc(raw, unicode.IsSpace):
		return fmt.Errorf("%q has a space in it: a URL carries it percent-encoded, as %%20", shown)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%q: port %s is not a port number (1 to 65535)", shown, p)
		}
	}
	return nil
}

// headerName reports whether s is an HTTP header name (an RFC 9110 token).
func headerName(s string) bool {
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return s != ""
}

// headerValue reports whether s can be sent as a header value: no control
// characters but tab, so no CR or LF that would start another header.
func headerValue(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r != '\t' && (r < ' ' || r == 0x7f) })
}

// fill puts the credentials and OAuth settings into sp.
func (f *httpFlags) fill(sp *connect.Spec, name string) error {
	if len(f.headers) > 0 {
		sp.Headers = map[string]string{}
	}
	for _, h := range f.headers {
		n, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(n) == "" {
			return usagef(name, "-H takes \"Name: value\", got %q", h)
		}
		if !headerName(strings.TrimSpace(n)) || !headerValue(v) {
			return usagef(name, "-H %q: a header name is letters, digits and -_.!#$%%&'*+^`|~, and neither holds a control character (CR and LF would start another header)", strings.TrimSpace(n)+":"+transport.RedactHeader(strings.TrimSpace(n), v))
		}
		sp.Headers[strings.TrimSpace(n)] = strings.TrimSpace(v)
	}
	for _, o := range f.allowRedir {
		if _, err := transport.ParseOrigin(o); err != nil {
			return usagef(name, "--allow-redirect: %v", err)
		}
	}
	sp.AllowRedirects = f.allowRedir
	sp.Bearer = f.bearer
	if sp.Bearer == "" {
		sp.Bearer = os.Getenv("MCPSCOPE_BEARER")
		sp.BearerFromEnv = sp.Bearer != ""
	}
	a := connect.Auth{Disabled: f.noOAuth, NoBrowser: f.noBrowser, ClientID: f.clientID, ClientSecret: f.clientSecret,
		ClientMetadataURL: f.metadataURL, Grant: f.grant, IDToken: f.idToken, IdPTokenEndpoint: f.idpEndpoint,
		IdPClientID: f.idpClientID, Assertion: f.assertion, Scope: f.scope, Port: f.oauthPort}
	if a.ClientSecret == "" {
		a.ClientSecret = os.Getenv("MCPSCOPE_CLIENT_SECRET")
	}
	switch a.Grant {
	case "", "client_credentials", "authorization_code":
	default:
		return usagef(name, "--grant takes authorization_code or client_credentials, got %q", a.Grant)
	}
	if a.Port < 0 || a.Port > 65535 {
		return usagef(name, "--oauth-port takes a port number, got %d", a.Port)
	}
	if f.clientKey != "" {
		b, err := os.ReadFile(f.clientKey)
		if err != nil {
			return usagef(name, "--client-key: %v", err)
		}
		a.ClientKeyPEM = string(b)
	}
	sp.Auth = a
	return nil
}

// fill puts limits, journal and answers into sp.
func (f *sessionFlags) fill(sp *connect.Spec, name string) error {
	sp.Timeout, sp.MaxTimeout = f.timeout.d, f.maxTimeout.d
	sp.Journal, sp.NoJournal = f.journal, f.noJournal
	if _, err := userfile.Resolve(f.journal); f.journal != "" && !f.noJournal && errors.Is(err, userfile.ErrDirectory) {
		return usagef(name, "--journal %s is a directory; name a file (or leave --journal out for a new file under %s)", f.journal, journal.DefaultDir())
	}
	answers := map[string]json.RawMessage{}
	if f.answersFile != "" {
		b, err := os.ReadFile(f.answersFile)
		if err != nil {
			return usagef(name, "--answers: %v", err)
		}
		if err := json.Unmarshal(b, &answers); err != nil {
			return usagef(name, "--answers %s must be a JSON object of key → answer: %v", f.answersFile, err)
		}
	}
	for _, a := range f.answers {
		k, v, ok := strings.Cut(a, "=")
		if !ok || !json.Valid([]byte(v)) {
			return usagef(name, `--answer takes KEY=JSON, e.g. --answer 'github_login={"action":"accept","content":{"name":"octocat"}}', got %q`, a)
		}
		answers[k] = json.RawMessage(v)
	}
	if len(answers) > 0 {
		sp.Answers = answers
	}
	store, err := f.state.open(name)
	if err != nil {
		return err
	}
	sp.StateStore = store
	return nil
}

// configuredTarget resolves a server configured in a host (or mcpscope's
// own servers.json) by NAME or HOST/NAME.
func configuredTarget(cmd *cobra.Command, name string) (hosts.Target, error) {
	_, s, err := findServer(cmd, name, "")
	if err != nil {
		return hosts.Target{}, err
	}
	t, err := s.Target()
	if err != nil {
		return t, usagef(cmd.CommandPath(), "%v", err)
	}
	return t, nil
}

// filterFlag is --filter EXPR, the filter language of package filter, for
// the commands that go through frames (record, journal, export).
type filterFlag struct{ expr string }

func (f *filterFlag) add(fs *pflag.FlagSet, what string) {
	fs.StringVar(&f.expr, "filter", "", "keep only the "+what+" the filter expression matches, e.g. '~m tools/call & ~e' (the README's Filters section has the language)")
}

// parse compiles the expression (nil when none was given); a mistake is a usage error that shows the
// column with a caret under it.
func (f *filterFlag) parse(cmd *cobra.Command) (*filter.Filter, error) {
	if strings.TrimSpace(f.expr) == "" {
		return nil, nil // no filter: everything
	}
	flt, err := filter.Parse(f.expr)
	var se *filter.SyntaxError
	if errors.As(err, &se) {
		return nil, usagef(cmd.CommandPath(), "--filter: %s\n  %s", se.Error(), strings.ReplaceAll(se.Caret(), "\n", "\n  "))
	}
	if err != nil {
		return nil, usagef(cmd.CommandPath(), "--filter: %v", err)
	}
	return flt, nil
}
