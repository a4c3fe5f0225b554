// Package proxy is mcpscope proxy: a transparent proxy between an MCP host
// (Claude, VS Code, Cursor…) and its server, that journals both directions
// and publishes the live session on a local socket for viewers (mcpscope
// attach, mcpscope proxies).
//
// # Forwarding
//
// stdio (RunStdio): the server is spawned by transport.Stdio (its process
// group, environment and shutdown ladder: one piece of code with the
// client's), whose Raw option hands the pipes over untouched. Host stdin →
// server stdin and server stdout → host stdout go line by line, exact bytes
// (CRLF, blank lines, non-JSON lines and a last line without a newline
// included); a line is written as soon as its newline has arrived, and the
// lines that are already buffered together go out in one write. Lines are
// routed and journaled whole up to MaxLine (64 MiB); a longer line is still
// forwarded whole, streamed as it arrives, and journaled as its first 64
// KiB plus a line-too-long event with its length. Server stderr passes
// through to the proxy's stderr and is journaled line by line. Host stdin
// EOF closes the server's stdin and runs the ladder (grace, SIGTERM, grace,
// SIGKILL); a signal the host sends goes to the server's group, and the
// ladder follows after the grace; when the server exits, RunStdio returns
// its exit status (128+N for signal N) after everything it wrote has been
// written to the host. The proxy writes nothing of its own to stdout.
//
// HTTP (RunHTTP): a reverse proxy. Every request goes to the upstream's
// origin with its own path and query ("/" means the upstream's path), its
// headers (credentials included; hop-by-hop ones excepted) and its body;
// redirects are passed back, never followed. Host passes through as the
// host sent it when the upstream is a loopback address (a local server's
// DNS-rebinding protection must judge what the host sent); a remote
// upstream gets its own name, as virtual hosting needs. Answers are streamed chunk by
// chunk and flushed at once; an SSE stream is parsed for the journal from
// the bytes already sent to the host, so the journal never holds it up.
// Absolute URLs inside messages (an HTTP+SSE endpoint event naming the
// upstream's host) are not rewritten.
//
// # Journal
//
// One journal per proxy, written with journal.Create's header and
// journal.AppendRecord lines by one writer goroutine that drains whatever
// is queued, writing about 128 KiB at a time. Over stdio the forwarders
// wake it for each run they queue; over HTTP a timer wakes it 2 ms after
// the first frame queued, so what a viewer sees (and a kill -9 loses) lags
// the wire by at most that, in order: a request before its answer. Over stdio a forwarder hands
// the lines it forwards together (one read's worth) over in one go: it
// numbers and queues them, writes them, then wakes the writer; whether a
// line is JSON, its record and its copy for the viewers are the writer's
// work (its records for stdio lines are AppendRecord's byte for byte,
// encoded by runEncoder). A server line is parsed only while a call is in
// flight, cancelled or injected, and then only up to its method unless a
// viewer awaits progress. Frames are Dir out (host → server) and in
// (server → host), and Meta.Via says whose they are: host (the host's own,
// and the server's to it), viewer (a viewer's injected request and the
// server's answers and progress for it, never forwarded to the host),
// mcpscope (a cancel's notifications/cancelled and the error the host gets),
// dropped (a late answer to a call cancelled from mcpscope: journaled, not
// forwarded). HTTP frames carry method, URL and headers redacted
// (transport.RedactURL, transport.RedactHeader); a request without a body
// is a "request" event, an answer without one a "response" event.
// The forwarders wait for the journal only when it is more than 8 MiB or
// 8192 frames behind (a disk slower than the traffic); nothing else can
// slow them.
//
// # What a request costs (HTTP)
//
// `mcpscope bench --only proxy` sends 1,000 sequential pings straight to a
// minimal net/http server, a process of its own as any server is (bench
// pong), and through the proxy (journaling), in paired
// rounds, and prints the time each request adds and the proxy's CPU a
// request, read from /proc/PID/stat over the measured rounds only (the
// process's start and the warm-up, 10 ms and 20-30 ms, were divided in
// before: under 30 µs a request). Beside them it prints what a bare relay
// adds in the same rounds (bench relay, bench/relay.go): a
// process on one P that passes the bytes through its own buffers and does
// nothing else, no HTTP, no journal; over stdio for the flood. That is
// the floor of the second hop on the machine at hand. On the 2-core VM
// here, 5 rounds at load 1: a ping took 81 µs direct, +298 µs through
// the relay and +386 µs through the proxy; the flood ran at 0.89× direct
// through the relay and 0.77× through the proxy. So there the hop alone
// costs ten times the +30 µs the proxy's goal allows, and the flood's
// 0.9× is about what the relay itself reaches; the proxy's own share is
// the difference, about +90 µs and 0.12×. (The server then ran inside
// the bench, and its client and it handed each exchange over without a
// thread sleeping; since it runs apart, as no host and server ever share
// a process, a direct ping takes 113-140 µs on the 2-core VM of the
// README's figures, against 40 µs in the bench's own process. There: +74
// µs through the relay, +136 µs through the proxy, and 60 µs of CPU a
// request in the relay against 130-140 µs in the proxy. A C relay
// (socat) added +60 to +65 µs there, so the hop itself, not Go, is what
// the relay measures. perf over the proxy's pings gave sysmon 20 %, the
// two socket writes 22 % and the reads 12 % (the relay's shares of its
// own, smaller, CPU: 28 %, 30 % and 19 %); what is left of the proxy's
// is HTTP parsing both ways, the journal's queue and allocation, spread
// thin: no piece over 6 %.) A request through the proxy is a second
// HTTP exchange in full: the host's request is read by net/http's server
// (which starts a goroutine per request that watches the host's
// connection), written to the upstream on a kept-alive connection from the
// handler's own goroutine (upstream.go: net/http's Transport took four
// more goroutine hand-offs), and the answer read back and written to the
// host in one write. Nothing on that path waits: not for the journal (the
// request is scanned up to its id and its record and the answer's are
// queued; encoding, writing and publishing are the writer's, woken by a
// timer at most 2 ms after the first frame queued, 4 % of the profile;
// DESIGN's "journaled before displayed" binds viewers, not the wire), not
// for a viewer, not for a new connection (strace -f -tt shows one accept
// and one dial for thousands of requests), not for a delayed ACK (both
// sockets are TCP_NODELAY, and no request has a gap in strace -tt).
//
// Where the time went: with two Ps, every goroutine made ready woke a
// second thread (futex), which spun looking for work (nanosleep in
// runqgrab, epoll_pwait): strace -f -c counted per request 3.1 futex, 3.0
// nanosleep and 3.4 epoll_pwait beside 3.0 write and 3.9 read. The HTTP
// proxy now runs with one P (cli/proxy.go; GOMAXPROCS in the environment
// overrides it), and counts 0.1 futex, 0.5 nanosleep, 1.2 epoll_pwait, 2.3
// write and 3.5 read. What is left is the floor of a second hop: two
// loopback writes (the upstream's request, the host's answer), each of
// which runs the receiver's TCP input and wake-up in the writer's time,
// about 50 µs of CPU each in the profile here; the reads and the epoll
// wait; and the runtime's monitor thread (sysmon), which the first
// syscall after an idle spell wakes (futex, 14 µs). Measured on a 2-core
// Firecracker VM with nested virtualisation, where syscalls and above
// all wake-ups of another CPU cost several times what they do on bare
// metal: there a whole direct exchange (the client's write and the
// server's) took 88 µs idle, and a second hop costs about as much
// again. On an idle VM a wake-up lands on a halted CPU, dearest of all
// (this VM does not poll before halting), which is likely why the proxy
// added more idle (+504 µs, 393 µs CPU a request, two Ps) than it does
// under load; there was no idle spell to measure one P in. Two proxies side by side, before (two Ps) and
// after (one), the same upstream, 1,000 pings to each and direct in
// turn, 10 turns, load 9-10, medians: 637 µs against 518 µs a request
// (+405 µs against +298 µs over 218 µs direct), 335 µs against 255 µs of
// CPU a request (utime+stime, fields 14-15 of /proc/PID/stat, read
// around each turn). The bench
// (--rounds 3, load 10-11, two Ps then one, twice) read +319/+781 µs and
// 200/293 µs of CPU against +508/+336 µs and 217/253 µs: under that load
// a single run says little. An HTTP server of our own for the host's
// side would save at most what net/http's server spends outside the
// handler, 24 µs of CPU a request sampled (reading and parsing the
// request, its connection watcher's read), and lose the watcher that
// tells the handler the host went away: a throw-away prototype (a loop
// over http.ReadRequest and a bare ResponseWriter, one P) measured side
// by side, 6 turns at load 10, about 25 µs and 35 µs of CPU a request
// less (medians), within the noise; not worth its edge cases yet.
//
// The bench also runs a Go HTTP relay in the same rounds (bench relay
// --http: net/http reads each request whole and forwards it on a kept-alive
// connection, nothing else): the floor of any proxy in Go that speaks
// HTTP. One run, 5 rounds, load 1.3-1.9: direct 91.4 µs, the bare TCP
// relay +67.8 µs, the HTTP relay +128.5 µs, the proxy +110.9 µs, 96 µs of
// CPU a request in both. The proxy is at that floor; a +30 µs share over
// the bare relay would need an HTTP/1.1 path of our own below net/http
// (nginx's HTTP proxy costs a few µs over its stream mode), which the
// prototype above did not show to pay.
//
// The proxy's own per-request work was mostly allocation (every header
// value copied twice, a map of Connection names per copy, answer-header
// names canonicalised per answer, io.ReadAll growing the body, the
// request's headers cloned for a cancel); that is gone. The throughput
// row is a 1M-notification stdio flood through the proxy against the
// same flood direct, read by the same minimal client: every line is
// journaled and published, and the forwarders hand lines over in runs
// (see Journal). The stdio proxy runs with one P too (cli/proxy.go): the
// flood's server and host need the machine's other core more than the
// proxy's writer does, and with two Ps each run handed over woke a second
// thread that spun for work. Paired on 2 cores under a 1M-line flood, 6
// rounds, load 2-3.5: the proxy's CPU 1.06 s against 1.23 s (medians, less
// in every round) and the flood's wall time 2.90 s against 3.11 s.
//
// Of what was left, a profile gave about 40 % to the writer's encoding
// (appendLineJSON: checking the line is JSON while escaping it). A
// flood's lines differ in a field or two, mostly near their end, so the
// encoder resumes each line from the last member name it begins with as
// the previous line did (encode.go, lineMemo: the checker's state and the
// string so far at each member name's opening quote) and checks and
// escapes only the rest, eight bytes at a time: 107 ns against 259 ns a
// line of the bench's flood (appendLineJSON alone, medians of 5
// interleaved runs). Under the bench's 1M-line flood, 5 paired runs, load
// 3.6: the proxy's user CPU 0.44 s against 0.64 s, its system time
// unmoved at 0.4-0.5 s (both with the flood server's, about 0.07 s user
// and 0.1 s system; /usr/bin/time). What is left is mostly the kernel's:
// the three copies (the server's pipe, the host's, and 250 MB of journal
// file a million lines) and the wake-ups. With one P the proxy goes idle
// between the host's reads (64 KiB at a time), and when it wakes, its
// first system call wakes the runtime's monitor thread (sysmon), which
// then polls every 20 µs until the proxy is idle again: about 1,300 such
// turns and 4,000 nanosleeps a million lines, a tenth of the proxy's
// samples in perf. A host pipe of 1 MiB (F_SETPIPE_SZ) and writing to
// the host through the poller (a second, non-blocking open of the pipe)
// were tried: fewer context switches, no change in CPU or wall time
// beyond the noise; not kept.
//
// The row depends on the machine's load more than on the proxy. The
// minimal client is the flood's bottleneck (1.45 s of CPU, the server
// 0.17 s, the proxy now 0.7-0.8 s); while other work keeps one of the
// two cores busy, the three share the other and the wall time is close
// to their CPU added up. So measured, load 3.5-5: the row read 0.71×
// twice against 0.64× and 0.68× before (runs interleaved); 7 interleaved
// rounds, 2.46 s against 2.68 s, direct 1.85 s (medians). With the
// machine to itself the client would have a core of its own and the
// proxy and server would fit in the other; that was not measured here.
//
// The flood's CPU row holds the proxy to a relay that writes the bytes it
// passes to a file, but a journal is not the bytes: a million of the
// flood's lines are 112 MB, their records 222-256 MB, each line numbered,
// timed and escaped. The bench also times a relay that writes the same
// records (bench relay --journal: journal.AppendRecord, one goroutine,
// one buffered writer, no parsing, no viewers) in the same rounds: the
// proxy spends 0.86-1.00× its CPU (three runs, load 0.3-2.6), about what
// the memo encoder saves paying for the hand-over to the writer and the
// scan for ids. That is the floor of journaling in this format; the
// proxy is at it.
//
// Those CPU figures were each run's CPU less the direct run's beside it,
// and the server's and the client's own CPU varied between runs by more
// than the relay costs (pairs 0.48-1.84× in one run). bench serve and
// bench drain now report their own (getrusage, bench.SelfCPUEnv) and the
// rows take both from the run's: the process between them alone. So
// measured, one run of 5 rounds at load 0.9-1.7: the proxy 515 ns a
// notification, the file relay 242, the journaling relay 583 (pairs
// 0.88-1.00×).
//
// The per-request CPU goal (100 µs) is below what a Go HTTP relay with no
// journal spends on this machine (112-196 µs a request across runs). The
// bench also runs that relay writing each request and answer as the
// journal's records (bench relay --http --journal; its journal buffered
// until 128 KiB fill, so written less often than the proxy's, which stays
// within JournalLag of the wire): the proxy spends 0.92-1.02× its CPU
// (three runs). A profile of the proxy under pings gives 28 % to the
// socket calls themselves, 10 % to the scheduler's wake-ups, and about
// 15 % to the proxy's own code (the journal's writer 5 %, the request's
// headers as the journal keeps them 4 %, the cancel context 3 %).
//
// # Socket protocol (mcpscope-proxy/1)
//
// Each proxy listens on a Unix socket NAME.PID.sock (0600, directory 0700)
// in SocketDir. Lines are JSON, one per line, both ways.
//
// On connect the proxy sends a hello:
//
//	{"type":"hello","protocol":"mcpscope-proxy/1","name":"github","pid":4242,"transport":"stdio",
//	 "target":"stdio: npx -y …","serverPid":4243,"journal":"/…/x.jsonl","started":"…","seq":118,
//	 "viewers":1,"can":["inject","cancel"],"idPrefix":"mcpscope-1f2e3d4c-"}
//
// seq is the last frame journaled so far. Nothing else comes until the
// viewer subscribes:
//
//	{"type":"subscribe"}              live: frames after the current last seq
//	{"type":"subscribe","after":118}  frames after seq 118
//
// The answer is {"type":"subscribed","after":N,"seq":LAST,"journal":…}, then
// frames, each exactly a journal line ({"seq":…,"t":…,"dir":…,"kind":…,…}, see
// journal.Record): a viewer reads the journal for the past, then subscribes
// after the last seq it read (the proxy keeps the last 4096 frames to cover
// the gap). Frames older than that, and frames a viewer could not take,
// come as
//
//	{"type":"missed","from":A,"to":B,"count":N,"journal":"/…/x.jsonl"}
//
// in their place: they are in the journal. A viewer's queue holds 8192
// frames or 16 MiB; past that its frames are dropped (and reported as
// missed), and a viewer that does not read for 10 s is disconnected. The
// proxy never waits for a viewer.
//
// Commands carry an optional "ref" the answer echoes:
//
//	{"type":"inject","ref":1,"message":{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{…}}}
//
// (stdio only) sends the request to the server inside the host's session
// with its id replaced by a string id of the proxy's own space (idPrefix +
// a number; the prefix holds a random nonce, so a host's ids never have it),
// and a progressToken in params._meta replaced the same way. It is written
// as one whole line between the host's lines. Answers:
// {"type":"injected","ref":1,"id":"mcpscope-…-1","seq":S}, then
// {"type":"progress",…,"message":{…}} per progress notification for its token
// and {"type":"reply","ref":1,"id":…,"seq":S,"message":{the server's response}}.
// None of these reach the host. A server request sent while an injected
// call runs (sampling, elicitation) cannot be told apart from the host's
// session and goes to the host.
//
//	{"type":"cancel","ref":2,"seq":S}   or   {"type":"cancel","id":7}
//
// cancels the host's call whose request frame is seq S (or whose id is 7):
// the host gets {"jsonrpc":"2.0","id":…,"error":{"code":-32800,"message":"request
// cancelled from mcpscope"}} at once, the server gets notifications/cancelled
// for it, and a late answer from the server for that id is dropped, so the
// host never sees two answers. Over HTTP the host's request is in flight
// until its answer ends: if the answer has not begun, the host gets the
// error as a JSON answer; on an SSE answer, as the stream's last event
// (written between events; if the server is in the middle of one that does
// not end within 2 s, the stream is cut without it), the upstream exchange
// is closed and notifications/cancelled is POSTed in the host's session
// with the host's headers. Over HTTP+SSE (2024-11-05) answers travel on the
// shared GET stream and a call cannot be cancelled. initialize is never
// cancelled. A viewer's own injected call is cancelled the same way (by its
// seq or wire id). Answer: {"type":"cancelled","ref":2,"id":…,"seq":S}.
//
//	{"type":"ping"}   → {"type":"pong","seq":LAST}
//
// Failures answer {"type":"error","ref":…,"error":"…"}. When the proxy ends,
// each viewer gets {"type":"bye","reason":"…","seq":LAST} and is closed.
// Conn is a client of this protocol; List and Find find the proxies.
package proxy
