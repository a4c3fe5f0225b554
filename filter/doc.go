// Package filter is mcpscope's filter language over frames and calls,
// modelled on mitmproxy's filter expressions.
//
//	~m tools/call & ~dur >500ms                  slow tool calls
//	~k notification & !~m notifications/progress notifications but progress
//	~e | ~s cancelled                            what went wrong or was given up
//	~t 'get weather'                             one tool (quoted: it has a space)
//	~h mcp-session-id                            frames with that HTTP header
//	"needle"                                     bare text, anywhere
//
// # Terms
//
//	~m GLOB         method; for a response, its request's method; for an
//	                event frame, the event name (stream-dropped, exited…)
//	~t GLOB         the tool of a tools/call, the prompt of a prompts/get,
//	                the URI of a resources/read
//	~k KIND         request, response, notification, progress, log, stderr,
//	                garbage or event; notification includes progress
//	                (notifications/progress) and log (notifications/message)
//	~e              an error: a JSON-RPC error, a tool result with isError,
//	                or a failure mcpscope made up (timeout, transport gone)
//	~s STATE        the call's state: ok, error, cancelled, late, lost,
//	                detached, pending, streaming or input
//	~d DIR          in (server to client), out (client to server) or local
//	                (mcpscope's own events)
//	~id GLOB        the JSON-RPC id; a string id matches with or without its
//	                quotes: ~id abc and ~id '"abc"' both find "abc"
//	~dur [OP]N      the call's duration: ~dur >500ms; frames of no call
//	                (and calls of unknown duration) never match
//	~size [OP]N     the frame's size in bytes: ~size >1MB
//	~c TEXT         the frame's exact bytes contain TEXT
//	~h NAME[=VALUE] the frame was recorded with an HTTP header NAME (with
//	                a value matching VALUE)
//	TEXT            bare text: the method, the tool name or the content
//	                contains TEXT
//
// # Operators
//
// ! (not) binds tightest, then & (and), then | (or); parentheses group.
// Terms side by side are joined by &, as in mitmproxy: "~m tools/call ~e"
// is "~m tools/call & ~e". So "a b | c" is "(a & b) | c" and "!a & b" is
// "(!a) & b". There are no && or ||.
//
// # Values
//
// A value runs up to a space or one of ( ) & |. Quote it with "..." or
// '...' when it has those, or starts with ~ ! / " or '. Inside quotes a
// backslash escapes the quotes and itself, and \n and \t are a newline and
// a tab; before anything else the backslash stays, so "\*" reaches a glob
// as \* and "\u00e9" searches raw JSON for \u00e9.
//
// Names (~m ~t ~id, and ~h's name and value) are globs over the whole
// name: * is any run of characters, / included, ? is one character, and \
// makes the next one literal. "~m tools" does not match tools/call;
// "~m tools/*" does.
//
// Text (~c, bare text) is a substring, without wildcards. An empty text
// matches everything.
//
// A value written /like this/ is a regular expression (Go's RE2 syntax) for
// ~m ~t ~id ~c and bare text. It searches rather than matching the whole
// name: "~m /^resources\//". Inside it \/ is a slash. To mean text that
// starts with a slash, quote it: ~c "/tmp".
//
// # Case
//
// Globs and text are smart-case, like ripgrep and vim: they ignore case
// unless they contain an upper-case letter. "~t search" matches search and
// Search; "~t Search" only Search. Case folding is Unicode's, as in
// strings.EqualFold. Regexes take case as written; (?i) ignores it. Header
// names always ignore case, as HTTP says. The words of ~k ~s ~d and units
// ignore case; the ~names are lower-case.
//
// # Durations and sizes
//
// ~dur and ~size compare with >, >=, <, <= or =, written against the
// number or apart from it: "~dur >500ms", "~dur > 500ms". Without an
// operator the comparison is >=: "~dur 2s" is "~dur >=2s". A number may
// have a fraction when the result is a whole number of nanoseconds or
// bytes: 1.5s, 1.5KiB. Duration units, required: ns, us (or µs), ms, s, m,
// h. Size units: B, KB, MB, GB (powers of 1000) and KiB, MiB, GiB (of
// 1024); a bare number is bytes.
//
// # Errors
//
// Parse returns a *SyntaxError for the leftmost problem, with its column
// counted in characters from 1 (one past the end for "missing at the end"):
//
//	column 3: expected a method after ~m
//
// SyntaxError.Caret draws the input with a caret under that column.
//
// # Using a filter
//
// Callers describe each frame with a Subject, without decoding anything for
// the filter. Match reads the exact bytes through Subject.Content only when
// the filter needs them (NeedsContent says in advance), at most once, and
// after the cheaper terms of an & or | have had their say. Match allocates
// nothing for field terms, globs and text search. Volatile says whether a
// result can change while a call runs (~s ~e ~dur).
//
// String gives the canonical form: explicit &, the fewest parentheses,
// double quotes only where needed, units normalised (~dur 1.5s is ~dur
// >=1500ms). It parses back to a filter that matches the same subjects. The
// empty filter, from "" or spaces, matches everything; so does a nil
// *Filter.
package filter
