package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"mcpscope/oauth"
)

// options are the flags every command shares. Parsing is ours (not package
// flag) so flags may come before or after positional arguments and `--`
// cleanly separates the server command.
type options struct {
	cmd               string   // subcommand ("" = the inspector)
	args              []string // positional arguments after the subcommand
	command           []string // server command after --
	url               string
	env               []string
	cwd               string
	shell             bool
	headers           []string
	bearer            string
	journal           string
	noJournal         bool
	noState           bool // keep no rejoin state (conformance runs)
	roots             []string
	timeout           time.Duration
	maxTimeout        time.Duration
	jsonOut           bool
	jsonArgs          string
	logLevel          string
	httpAddr          string // demo --http
	era               string // auto | legacy | modern
	transport         string // "" (Streamable HTTP, falling back to HTTP+SSE) or "sse"
	forget            bool   // rejoin --forget
	asTask            bool   // call --task
	listenTools       bool
	listenPrompts     bool
	listenResources   bool
	listenURIs        []string
	listenTaskIDs     []string
	answers           []string // --answer KEY=JSON (MRTR / server requests)
	answersFile       string
	ttl               time.Duration
	bearerFromEnv     bool
	clientID          string // OAuth: a pre-registered client
	clientSecret      string
	clientMetadataURL string // OAuth: this client's metadata document (its URL is the client id)
	clientKeyPEM      string // OAuth: private_key_jwt signing key (client_credentials)
	signingAlg        string
	grant             string // OAuth: "" (pick) or client_credentials
	idToken           string // OAuth, enterprise-managed: the user's ID token from the IdP
	idpTokenEndpoint  string
	idpClientID       string
	assertion         string // OAuth: a JWT presented as a jwt-bearer grant (workload identity)
	scope             string // OAuth: scopes to ask for instead of the server's
	oauthPort         int    // OAuth: the loopback redirect's port (0 = any)
	noOAuth           bool
	noBrowser         bool
	browserLogin      bool             // client: authorize through the loopback redirect and $BROWSER, as a person would
	oauthFlow         *oauth.Flow      // set by oauthFor: the target's OAuth state
	authorizer        oauth.Authorizer // nil = a person, through a browser (the conformance client fetches)
	count             int              // bench
}

var subcommands = map[string]bool{
	"tools": true, "resources": true, "templates": true, "prompts": true, "call": true,
	"read": true, "prompt": true, "ping": true, "record": true, "demo": true, "bench": true,
	"journal": true, "help": true, "version": true, "rejoin": true, "tasks": true, "task": true, "listen": true,
	"client": true,
}

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

func parseArgs(argv []string) (*options, error) {
	o := &options{}
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			o.command = argv[i+1:]
			if len(o.command) == 0 {
				return nil, usagef("nothing after --: give the server command, e.g. mcpscope -- npx -y @modelcontextprotocol/server-everything")
			}
			break
		}
		name, val, hasVal := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "-") || a == "-" {
			if o.cmd == "" && len(o.args) == 0 && subcommands[a] {
				o.cmd = a
			} else {
				o.args = append(o.args, a)
			}
			continue
		}
		next := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(argv) {
				return "", usagef("%s needs a value", name)
			}
			i++
			return argv[i], nil
		}
		var err error
		var v string
		switch name {
		case "-e", "--env":
			if v, err = next(); err == nil {
				if !strings.Contains(v, "=") {
					err = usagef("-e takes KEY=VALUE, got %q", v)
				}
				o.env = append(o.env, v)
			}
		case "--cwd":
			o.cwd, err = next()
		case "--shell":
			o.shell = true
		case "-H", "--header":
			if v, err = next(); err == nil {
				if !strings.Contains(v, ":") {
					err = usagef("-H takes \"Name: value\", got %q", v)
				}
				o.headers = append(o.headers, v)
			}
		case "--bearer":
			o.bearer, err = next()
		case "--client-id":
			o.clientID, err = next()
		case "--client-secret":
			o.clientSecret, err = next()
		case "--client-metadata-url":
			o.clientMetadataURL, err = next()
		case "--client-key":
			if v, err = next(); err == nil {
				var b []byte
				if b, err = os.ReadFile(v); err != nil {
					err = usagef("--client-key: %v", err)
				}
				o.clientKeyPEM = string(b)
			}
		case "--id-token":
			o.idToken, err = next()
		case "--idp-token-endpoint":
			o.idpTokenEndpoint, err = next()
		case "--idp-client-id":
			o.idpClientID, err = next()
		case "--assertion":
			o.assertion, err = next()
		case "--grant":
			if o.grant, err = next(); err == nil && o.grant != "client_credentials" && o.grant != "authorization_code" {
				err = usagef("--grant takes authorization_code or client_credentials, got %q", o.grant)
			}
		case "--scope":
			o.scope, err = next()
		case "--oauth-port":
			if v, err = next(); err == nil {
				if o.oauthPort, err = strconv.Atoi(v); err != nil || o.oauthPort < 0 || o.oauthPort > 65535 {
					err = usagef("--oauth-port takes a port number, got %q", v)
				}
			}
		case "--no-oauth":
			o.noOAuth = true
		case "--no-browser":
			o.noBrowser = true
		case "--browser-login":
			o.browserLogin = true
		case "--url":
			o.url, err = next()
		case "--journal":
			o.journal, err = next()
		case "--no-journal":
			o.noJournal = true
		case "--forget":
			o.forget = true
		case "--task":
			o.asTask = true
		case "--tools":
			o.listenTools = true
		case "--prompts":
			o.listenPrompts = true
		case "--resources":
			o.listenResources = true
		case "--resource":
			if v, err = next(); err == nil {
				o.listenURIs = append(o.listenURIs, v)
			}
		case "--task-id":
			if v, err = next(); err == nil {
				o.listenTaskIDs = append(o.listenTaskIDs, v)
			}
		case "--answer":
			if v, err = next(); err == nil {
				o.answers = append(o.answers, v)
			}
		case "--answers":
			o.answersFile, err = next()
		case "--ttl":
			if v, err = next(); err == nil {
				o.ttl, err = parseDuration(name, v)
			}
		case "--root":
			if v, err = next(); err == nil {
				o.roots = append(o.roots, v)
			}
		case "--timeout":
			if v, err = next(); err == nil {
				o.timeout, err = parseDuration(name, v)
			}
		case "--max-timeout":
			if v, err = next(); err == nil {
				o.maxTimeout, err = parseDuration(name, v)
			}
		case "--json":
			// --json alone = JSON output; --json '{...}' (call/prompt) = arguments.
			if hasVal {
				o.jsonArgs = val
			} else if i+1 < len(argv) && strings.HasPrefix(strings.TrimSpace(argv[i+1]), "{") {
				i++
				o.jsonArgs = argv[i]
			} else {
				o.jsonOut = true
			}
		case "--log-level":
			o.logLevel, err = next()
		case "--transport":
			if o.transport, err = next(); err == nil && o.transport != "sse" && o.transport != "http" {
				err = usagef("--transport takes http (Streamable HTTP, the default) or sse (HTTP+SSE, 2024-11-05), got %q", o.transport)
			}
			if o.transport == "http" {
				o.transport = ""
			}
		case "--era":
			if o.era, err = next(); err == nil && o.era != "auto" && o.era != "legacy" && o.era != "modern" {
				err = usagef("--era takes auto, legacy or modern, got %q", o.era)
			}
		case "--http":
			o.httpAddr, err = next()
		case "--count":
			if v, err = next(); err == nil {
				_, err = fmt.Sscan(v, &o.count)
			}
		case "-h", "--help":
			o.cmd = "help"
		case "--version":
			o.cmd = "version"
		default:
			return nil, usagef("unknown flag %s (see mcpscope help)", name)
		}
		if err != nil {
			return nil, err
		}
	}
	if o.clientSecret == "" {
		o.clientSecret = os.Getenv("MCPSCOPE_CLIENT_SECRET")
	}
	if o.bearer == "" {
		o.bearer = os.Getenv("MCPSCOPE_BEARER")
		o.bearerFromEnv = o.bearer != ""
	}
	return o, nil
}

func parseDuration(flag, v string) (time.Duration, error) {
	if v == "0" || v == "none" {
		return -1, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, usagef("%s takes a duration like 30s or 5m (or 0 for none), got %q", flag, v)
	}
	return d, nil
}

// takeTarget removes a trailing URL argument from args (the conformance
// suite appends the server URL as the last argument).
func (o *options) takeTarget() {
	if o.url != "" || len(o.command) > 0 || len(o.args) == 0 {
		return
	}
	last := o.args[len(o.args)-1]
	if strings.HasPrefix(last, "http://") || strings.HasPrefix(last, "https://") {
		o.url = last
		o.args = o.args[:len(o.args)-1]
	}
}

var errInterrupted = errors.New("interrupted")

const usageText = `mcpscope — a terminal inspector for MCP servers

Usage:
  mcpscope                           inspect the embedded demo server (nothing else needed)
  mcpscope [flags] -- CMD [ARGS...]  inspect a server spawned over stdio
  mcpscope [flags] URL               inspect a Streamable HTTP server

Headless commands (same engine, no UI; target as above, default: the demo server):
  mcpscope tools|resources|templates|prompts [target]
  mcpscope call TOOL [key=value ...] [--json '{"k":"v"}'] [target]
  mcpscope call TOOL --task [--ttl D] [target]   run it as a task (2025-11-25): follow its status, fetch the result
                                     (2026-07-28: the server decides; a task is followed whatever the flag says)
  mcpscope tasks [target]            list the server's tasks (2026-07-28 has no tasks/list: the tasks mcpscope remembers)
  mcpscope task get|result|cancel ID [target]
  mcpscope task update ID --answer KEY=JSON [target]
                                     2026-07-28: answer an input_required task's requests (tasks/update)
  mcpscope read URI [target]
  mcpscope prompt NAME [key=value ...] [target]
  mcpscope ping [target]
  mcpscope listen [--tools] [--prompts] [--resources] [--resource URI]... [--task-id ID]... [target]
                                     2026-07-28: open a subscriptions/listen stream, print its notifications
  mcpscope record [target]           print every frame as JSONL until the server ends or Ctrl-C
  mcpscope rejoin [HANDLE]           list calls left running (detached, or their mcpscope died); rejoin one
  mcpscope rejoin --forget HANDLE    drop a detached call's record
  mcpscope journal PATH              summarise a journal file
  mcpscope demo [--http ADDR]        run the embedded demo server (stdio, or HTTP on ADDR)
  mcpscope bench [--count N]         measure ingest speed (notifications/s) and memory
  mcpscope client URL                the conformance suite's client: does what $MCP_CONFORMANCE_SCENARIO expects
                                     (--browser-login: log in through the loopback redirect and $BROWSER)

Flags:
  -e KEY=VAL        environment for the spawned server (repeatable)
  --cwd DIR         working directory of the spawned server
  --shell           run the command through sh -c
  -H "Name: value"  extra HTTP header (repeatable)
  --bearer TOKEN    Authorization: Bearer TOKEN (or MCPSCOPE_BEARER in the environment)
  --journal PATH    where to write the session journal (default under $XDG_STATE_HOME/mcpscope/journal)
  --no-journal      do not write a journal
  --root URI        a root to answer roots/list with (repeatable)
  --timeout D       idle timeout per call, reset by progress (default 60s; 0 = none)
  --max-timeout D   hard limit per call (default 30m; 0 = none)
  --log-level L     log level: logging/setLevel (2025 era) or per-request _meta (2026-07-28)
  --transport sse   use the HTTP+SSE transport (2024-11-05); by default it is tried when Streamable HTTP gets 400/404/405
  --era E           auto (probe with server/discover, the default), legacy (initialize), or modern (2026-07-28)
  --json            machine-readable output
  --answer K=JSON   answer an input request (MRTR or task key) or a server request (by method) headless (repeatable)
  --answers FILE    a JSON object of such answers

OAuth (when an HTTP server answers 401 and no --bearer or Authorization header is given; a login is kept
under $XDG_STATE_HOME/mcpscope/oauth/ for the next command):
  --client-id ID    a client registered with the authorization server (default: register dynamically)
  --client-secret S its secret (or MCPSCOPE_CLIENT_SECRET)
  --client-metadata-url URL  an https URL serving this client's metadata document, used as the client id
                    where the server supports Client ID Metadata Documents
  --grant G         client_credentials (machine to machine, with --client-id and --client-secret or --client-key)
                    or authorization_code (a person approves in a browser); default: what the server offers
  --client-key FILE a PKCS#8 PEM private key (EC or RSA) to sign client assertions with (private_key_jwt)
  --id-token T --idp-token-endpoint URL [--idp-client-id ID]
                    enterprise-managed authorization (SEP-990): trade an identity provider's ID token for an
                    ID-JAG there, and that for a token as --client-id/--client-secret
  --assertion JWT   a JWT to present as the grant (jwt-bearer; workload identity federation), as --client-id
  --scope "A B"     scopes to ask for (default: what the server's challenge or metadata names)
  --oauth-port N    port of the local redirect listener, http://127.0.0.1:N/callback (default: any free port)
  --no-browser      print the authorization URL instead of opening one ($BROWSER, else the desktop's browser)
  --no-oauth        never authorize; a 401 is an error

Exit codes: 0 success; 1 the server answered with an error (a tool result with isError, or input nobody gave);
2 usage error; 3 could not connect or the transport failed; 4 timed out; 130 interrupted.
`
