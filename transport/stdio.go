package transport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"mcpscope/internal/shell"
)

// StdioOptions describe the server process to spawn.
type StdioOptions struct {
	Command string   // program, or a shell command line when Shell is true
	Args    []string // args as a list, no shell (with Shell: appended, each shell-quoted)
	Env     []string // extra KEY=VAL added on top of os.Environ()
	Dir     string   // working directory ("" = current)
	Shell   bool     // run Command via "sh -c"
	// MaxLine is the longest stdout/stderr line kept whole; default 64 MiB.
	// Values below 16 MiB are raised to 16 MiB: MCP messages carrying images
	// or files are routinely megabytes long.
	MaxLine int
	Grace   time.Duration // each step of the shutdown ladder; default 2s
	// Raw, when set, hands each output pipe to the caller instead of framing
	// it into lines: it is called once per stream ("stdout", "stderr") on
	// that stream's reader goroutine, with a reader that ends once the
	// process has exited and its output is drained, and Stdio emits no In
	// frames for it. mcpscope proxy uses it to forward the bytes as they are;
	// spawning, events and the shutdown ladder stay Stdio's.
	Raw func(stream string, r io.Reader)
}

const (
	stdioDefaultMaxLine = 64 << 20
	stdioMinMaxLine     = 16 << 20
	stdioDefaultGrace   = 2 * time.Second
	stdioHeadMax        = 4 << 10  // bytes kept of a line over MaxLine
	stdioReadBuf        = 64 << 10 // bufio size; longer lines are assembled
	// stdioDrainIdle is how long the readers wait for more bytes once the
	// process has exited. Its own output is already in the pipe, so this
	// only matters when a leftover process (a daemonised grandchild) still
	// holds stdout open and would otherwise keep us waiting forever.
	stdioDrainIdle = 250 * time.Millisecond
)

// Stdio runs an MCP server as a child process and frames its stdin/stdout as
// newline-delimited messages (protocol §5). It implements Transport.
//
// The sink is called synchronously from the reader goroutines, so a slow sink
// slows the server down (the pipe fills) rather than losing lines. A sink must
// not call Send or Close synchronously: that can deadlock against a server
// that is itself blocked writing to us.
type Stdio struct {
	o       StdioOptions
	maxLine int // effective MaxLine; tests lower it below the public floor
	grace   time.Duration
	idle    time.Duration

	sinkHolder

	mu       sync.Mutex
	started  bool
	closing  bool // Close began: Sends fail fast
	cmd      *exec.Cmd
	pid      int
	group    procGroup // the server and what it starts (stdio_unix.go, stdio_windows.go)
	exitCode int
	exitSig  string
	exited   bool

	stdin     *os.File
	stdinOnce sync.Once
	outR      *os.File
	errR      *os.File

	wmu sync.Mutex // one write to stdin at a time, Out frame in write order

	gone     chan struct{} // process reaped
	goneFlag atomic.Bool
	readers  sync.WaitGroup
	done     chan struct{} // process reaped, output drained, EvExited emitted
	doneOnce sync.Once

	closeOnce sync.Once
	closeErr  error
}

var (
	_ Transport = (*Stdio)(nil)
	_ Process   = (*Stdio)(nil)
)

// NewStdio prepares a stdio transport; nothing runs until Start.
func NewStdio(o StdioOptions) *Stdio {
	s := &Stdio{
		o:       o,
		maxLine: o.MaxLine,
		grace:   o.Grace,
		idle:    stdioDrainIdle,
		gone:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	if s.maxLine <= 0 {
		s.maxLine = stdioDefaultMaxLine
	} else if s.maxLine < stdioMinMaxLine {
		s.maxLine = stdioMinMaxLine
	}
	if s.grace <= 0 {
		s.grace = stdioDefaultGrace
	}
	return s
}

// argv is the program and arguments actually executed.
func (s *Stdio) argv() []string {
	if !s.o.Shell {
		return append([]string{s.o.Command}, s.o.Args...)
	}
	line := s.o.Command
	for _, a := range s.o.Args {
		line += " " + shell.Quote(a)
	}
	return []string{"sh", "-c", line}
}

// Describe names the target as the user typed it, secrets redacted.
func (s *Stdio) Describe() string {
	if s.o.Shell {
		return "stdio: " + stdioRedactLine(s.argv()[2])
	}
	return "stdio: " + CommandLine(s.argv())
}

// Done is closed once the process has exited and its output is drained (or
// Start failed, or Close ran before Start).
func (s *Stdio) Done() <-chan struct{} { return s.done }

// ExitStatus reports how the process ended: code is -1 when a signal (named
// like "killed", "terminated") ended it. exited is false while it runs.
func (s *Stdio) ExitStatus() (code int, signal string, exited bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitCode, s.exitSig, s.exited
}

// Start spawns the process in its own process group and begins reading.
func (s *Stdio) Start(sink Sink) error {
	if sink == nil {
		sink = func(Frame) {}
	}
	argv, err := s.spawn(sink)
	if err != nil {
		return err
	}
	// EvSpawned goes out before any reader runs so it is the first frame;
	// not under mu, so a sink may call ExitStatus.
	s.event(EvSpawned, Meta{PID: s.pid, Detail: s.spawnDetail(argv)})
	s.readers.Add(2)
	go s.read(s.outR, "stdout")
	go s.read(s.errR, "stderr")
	go s.wait()
	return nil
}

// spawn starts the process; a failure ends the transport (Done closes).
func (s *Stdio) spawn(sink Sink) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return nil, errors.New("stdio transport: Start called twice; make a new transport with NewStdio for another process")
	}
	if s.closing {
		return nil, errors.New("stdio transport: Start after Close; make a new transport with NewStdio")
	}
	s.started = true
	s.sink.Store(&sink)
	fail := func(err error) ([]string, error) {
		s.doneOnce.Do(func() { close(s.done) })
		return nil, err
	}
	if strings.TrimSpace(s.o.Command) == "" {
		return fail(errors.New("stdio transport: no command to run; give the server's program (and its arguments) after --"))
	}

	argv := s.argv()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), s.o.Env...)
	cmd.Dir = s.o.Dir
	s.group.setup(cmd)

	// Our own pipes rather than cmd.StdoutPipe: exec.Cmd.Wait would close
	// them under the readers, and we need read deadlines after exit.
	var files []*os.File
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		stdioCloseAll(files)
		return fail(fmt.Errorf("stdio transport: create pipes for %q: %w", argv[0], err))
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		stdioCloseAll(files)
		return fail(fmt.Errorf("start stdio server %s: %w; check the command, PATH and working directory", CommandLine(argv), err))
	}
	// The child holds its ends now; keeping ours would hide EOF/EPIPE.
	stdioCloseAll([]*os.File{inR, outW, errW})
	if err := s.group.started(cmd); err != nil {
		// A server whose children could outlive it is not started: they
		// would hold its pipes and keep running after Close.
		cmd.Process.Kill()
		cmd.Wait()
		stdioCloseAll([]*os.File{inW, outR, errR})
		return fail(fmt.Errorf("start stdio server %s: %w", CommandLine(argv), err))
	}
	s.cmd, s.pid = cmd, cmd.Process.Pid
	s.stdin, s.outR, s.errR = inW, outR, errR
	return argv, nil
}

func (s *Stdio) spawnDetail(argv []string) string {
	var b strings.Builder
	for _, kv := range s.o.Env {
		b.WriteString(stdioEnvWord(kv))
		b.WriteByte(' ')
	}
	if s.o.Shell {
		b.WriteString("sh -c " + shell.Quote(stdioRedactLine(argv[2])))
	} else {
		b.WriteString(CommandLine(argv))
	}
	if s.o.Dir != "" {
		b.WriteString(" (in " + s.o.Dir + ")")
	}
	return b.String()
}

// Send writes one message as one line. It blocks while the server is alive
// but not reading (the pipe is full): that is the backpressure a caller's
// send loop wants, and it ends when the process exits or Close runs.
func (s *Stdio) Send(m Outgoing, done func(error)) {
	done = callOnce(done)
	if i := bytes.IndexByte(m.Data, '\n'); i >= 0 {
		s.sendFailed(fmt.Errorf("stdio send: message has a raw newline at byte %d; stdio carries one message per line, so encode newlines inside JSON strings as \\n", i), done)
		return
	}
	if len(m.Data) == 0 {
		s.sendFailed(errors.New("stdio send: empty message; nothing to write"), done)
		return
	}
	if err := s.sendable(); err != nil {
		s.sendFailed(err, done)
		return
	}
	// One buffer for the single write; the frame shares it and nobody
	// touches it afterwards, so the frame owns its bytes.
	n := len(m.Data)
	buf := make([]byte, n+1)
	copy(buf, m.Data)
	buf[n] = '\n'

	s.wmu.Lock()
	if err := s.sendable(); err != nil {
		s.wmu.Unlock()
		s.sendFailed(err, done)
		return
	}
	// Out frame first: the answer may be read before Write returns.
	s.emit(Frame{Dir: Out, Kind: Message, Data: buf[:n:n], Meta: Meta{PID: s.pid}})
	_, err := s.stdin.Write(buf)
	s.wmu.Unlock()
	if err != nil {
		s.sendFailed(s.writeErr(err), done)
		return
	}
	done(nil)
}

// WriteRaw writes p to the server's stdin as it is, in one write, and emits
// no frame (a Raw caller journals for itself). It shares Send's lock, so it
// never interleaves with a Send; a caller writing one line in several pieces
// keeps its own lock around them.
func (s *Stdio) WriteRaw(p []byte) error {
	if err := s.sendable(); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.stdin.Write(p); err != nil {
		return s.writeErr(err)
	}
	return nil
}

// Signal sends sig to the server's process group while it runs (a proxy
// passes on a signal its host sent it). It does not start the ladder.
func (s *Stdio) Signal(sig syscall.Signal) { s.signal(sig) }

// sendable says why a Send cannot go out now, or nil.
func (s *Stdio) sendable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.started:
		return errors.New("stdio send: transport not started; call Start first")
	case s.exited:
		return fmt.Errorf("send to server stdin (pid %d): the server process has exited (%s); restart it to go on", s.pid, stdioExitText(s.exitCode, s.exitSig))
	case s.closing:
		return errors.New("stdio send: the transport is closed; start a new one to go on")
	case s.cmd == nil:
		return errors.New("stdio send: the server process never started; see the Start error")
	}
	return nil
}

func (s *Stdio) writeErr(err error) error {
	prefix := fmt.Sprintf("write to server stdin (pid %d)", s.pid)
	switch {
	case errors.Is(err, syscall.EPIPE):
		return fmt.Errorf("%s: broken pipe — the server process has exited or closed its stdin; its stderr and exit status say why (%w)", prefix, err)
	case errors.Is(err, os.ErrClosed):
		s.mu.Lock()
		closing, exited := s.closing, s.exited
		s.mu.Unlock()
		why := "stdin was closed"
		if exited {
			why = "the server process has exited"
		} else if closing {
			why = "the transport is shutting down"
		}
		return fmt.Errorf("%s: %s: %w", prefix, why, err)
	}
	return fmt.Errorf("%s: %w", prefix, err)
}

func (s *Stdio) sendFailed(err error, done func(error)) {
	s.mu.Lock()
	pid := s.pid
	s.mu.Unlock()
	s.event(EvSendFailed, Meta{PID: pid, Detail: err.Error()})
	done(err)
}

// Unread implements Backlog: the bytes written to the server's stdin that
// it has not read yet.
func (s *Stdio) Unread() (int, bool) {
	if s.stdin == nil {
		return 0, false
	}
	return unread(s.stdin)
}

// closeStdin is safe from any goroutine; a blocked Write returns ErrClosed.
func (s *Stdio) closeStdin() {
	s.stdinOnce.Do(func() {
		if s.stdin != nil {
			s.stdin.Close()
		}
	})
}

// wait reaps the process, lets the readers drain, then reports the exit.
func (s *Stdio) wait() {
	err := s.cmd.Wait()
	code, sig, detail := -1, "", ""
	if st := s.cmd.ProcessState; st != nil {
		ws, _ := st.Sys().(syscall.WaitStatus)
		switch {
		case ws.Signaled():
			sig = ws.Signal().String()
			detail = "killed by " + stdioSignalName(ws.Signal())
			if ws.CoreDump() {
				detail += " (core dumped)"
			}
		default:
			code = st.ExitCode()
			detail = "exited with code " + strconv.Itoa(code)
		}
	} else {
		detail = "wait failed: " + err.Error()
	}
	s.mu.Lock()
	s.exitCode, s.exitSig, s.exited = code, sig, true
	s.mu.Unlock()
	s.goneFlag.Store(true)
	close(s.gone)
	// A grandchild may still hold stdin open; closing our end frees a
	// Send blocked on a full pipe.
	s.closeStdin()
	// Arm the idle window for reads already pending; the readers re-arm it
	// before each later read (see stdioPipeReader).
	t := time.Now().Add(s.idle)
	s.outR.SetReadDeadline(t)
	s.errR.SetReadDeadline(t)
	s.readers.Wait()
	s.outR.Close()
	s.errR.Close()

	m := Meta{PID: s.pid, Signal: sig, Detail: detail}
	if sig == "" {
		m.ExitCode = &code
	}
	s.event(EvExited, m)
	s.doneOnce.Do(func() { close(s.done) })
}

// stdioPipeReader re-arms a short read deadline once the process is gone, so
// a leftover process holding the pipe cannot stall the drain, while a slow
// sink (time spent outside Read) never counts against the window.
//
// It also notes when each read returned bytes: every line completed by
// those bytes had arrived by then, so that is its frame's time. One clock
// read a pipe read rather than one a line (a clock read was 5 % of
// record's CPU under a flood of short lines).
type stdioPipeReader struct {
	s  *Stdio
	f  *os.File
	at time.Time
}

func (r *stdioPipeReader) Read(p []byte) (int, error) {
	for {
		armed := r.s.goneFlag.Load()
		if armed {
			r.f.SetReadDeadline(time.Now().Add(r.s.idle))
		}
		n, err := r.f.Read(p)
		if n > 0 {
			r.at = time.Now()
		}
		// A deadline we did not arm ourselves (set by wait while we were
		// between checks) gets one fresh window before it counts.
		if n == 0 && !armed && errors.Is(err, os.ErrDeadlineExceeded) {
			continue
		}
		return n, err
	}
}

// read turns one pipe into frames, one per line. Lines are assembled across
// bufio fills, so only MaxLine bounds their length.
func (s *Stdio) read(f *os.File, stream string) {
	defer s.readers.Done()
	if s.o.Raw != nil {
		s.o.Raw(stream, &stdioPipeReader{s: s, f: f})
		return
	}
	kind := Garbage // decided per line for stdout
	if stream == "stderr" {
		kind = Stderr
	}
	pr := &stdioPipeReader{s: s, f: f}
	br := bufio.NewReaderSize(pr, stdioReadBuf)
	var (
		acc        []byte // a line longer than one bufio fill, fresh per line
		discarding bool   // the current line is over MaxLine
		head       []byte // its first bytes, kept as the garbage frame
		total      int    // its raw length so far, newline included
		lastTwo    [2]byte
		chunk      lineChunk
	)
	for {
		frag, err := br.ReadSlice('\n')
		complete := err == nil
		switch {
		case discarding:
			total += len(frag)
			if need := stdioHeadMax - len(head); need > 0 {
				head = append(head, frag[:min(need, len(frag))]...)
			}
		case acc == nil && complete:
			s.line(stream, kind, frag, &chunk, pr.at)
		case len(frag) == 0: // EOF or error with nothing pending
		case len(acc)+len(frag) > s.maxLine+2: // +2: room for "\r\n"
			total = len(acc) + len(frag)
			head = make([]byte, 0, stdioHeadMax)
			head = append(head, acc[:min(stdioHeadMax, len(acc))]...)
			if need := stdioHeadMax - len(head); need > 0 {
				head = append(head, frag[:min(need, len(frag))]...)
			}
			acc, discarding = nil, true
		default:
			if acc == nil {
				acc = make([]byte, 0, 2*stdioReadBuf)
			}
			acc = append(acc, frag...)
			if complete {
				s.line(stream, kind, acc, nil, pr.at)
				acc = nil
			}
		}
		if discarding {
			lastTwo = stdioTail(lastTwo, frag)
			if complete || (err != nil && err != bufio.ErrBufferFull) {
				n := total
				if complete {
					n-- // the newline
					if lastTwo[0] == '\r' {
						n--
					}
				}
				s.tooLong(stream, kind, head[:min(len(head), n)], n, pr.at)
				discarding, head, total, lastTwo = false, nil, 0, [2]byte{}
			}
		}
		if err == nil || err == bufio.ErrBufferFull {
			continue
		}
		// End of stream: a last line without a newline still counts.
		if len(acc) > 0 {
			s.line(stream, kind, acc, nil, pr.at)
		}
		if !errors.Is(err, io.EOF) {
			why := err.Error()
			if errors.Is(err, os.ErrDeadlineExceeded) {
				why = "the server exited but another process still holds its " + stream + " open"
			}
			s.event(EvNote, Meta{PID: s.pid, Detail: "stopped reading " + stream + ": " + why})
		}
		return
	}
}

// stdioTail keeps the last two bytes seen across fragments.
func stdioTail(t [2]byte, frag []byte) [2]byte {
	switch len(frag) {
	case 0:
		return t
	case 1:
		return [2]byte{t[1], frag[0]}
	}
	return [2]byte{frag[len(frag)-2], frag[len(frag)-1]}
}

// line emits one complete line. b is bufio's when chunk is given (the
// line's bytes are copied into it), else already the frame's alone.
func (s *Stdio) line(stream string, kind Kind, b []byte, chunk *lineChunk, at time.Time) {
	// Byte tests, not bytes.TrimSuffix: its comparison call (memeqbody)
	// was 3-4 % of record's CPU profile under a flood.
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	if len(b) == 0 {
		return
	}
	if len(b) > s.maxLine {
		s.tooLong(stream, kind, bytes.Clone(b[:min(len(b), stdioHeadMax)]), len(b), at)
		return
	}
	if chunk != nil { // b is bufio's: the frame needs bytes of its own
		b = chunk.copy(b)
	}
	if kind != Stderr {
		kind = Garbage
		if LooksJSON(b) {
			kind = Message // the session's one pass validates it (and files it as Garbage if it is not JSON)
		}
	}
	s.emit(Frame{Time: at, Dir: In, Kind: kind, Data: b, Meta: Meta{PID: s.pid}})
}

// lineChunk gives the frames of short lines their bytes out of shared
// chunks: one allocation for dozens of a flood's lines, where one each
// was 8 % of record's CPU. A chunk is only ever appended to, and each
// line's slice ends at its own last byte, so a line's bytes are its own.
// A line kept long after its neighbours (a pending request, a frame a
// view holds) keeps its chunk alive: chunks are small, and longer lines
// get an allocation of their own. (A call's answer is copied out by the
// session when it outlives the window.)
type lineChunk struct{ buf []byte }

const (
	stdioChunk    = 4 << 10
	stdioChunkMax = 512
)

func (c *lineChunk) copy(b []byte) []byte {
	if len(b) > stdioChunkMax {
		return bytes.Clone(b)
	}
	if cap(c.buf)-len(c.buf) < len(b) {
		c.buf = make([]byte, 0, stdioChunk)
	}
	n := len(c.buf)
	c.buf = append(c.buf, b...)
	return c.buf[n:len(c.buf):len(c.buf)]
}

func (s *Stdio) tooLong(stream string, kind Kind, head []byte, n int, at time.Time) {
	if kind != Stderr {
		kind = Garbage
	}
	s.eventAt(EvLineTooLong, Meta{PID: s.pid, Detail: fmt.Sprintf(
		"%s line of %d bytes is over the %d-byte limit (MaxLine); kept its first %d bytes as %s, dropped the rest",
		stream, n, s.maxLine, len(head), kind)}, at)
	s.emit(Frame{Time: at, Dir: In, Kind: kind, Data: head, Meta: Meta{PID: s.pid}})
}

// Close runs the shutdown ladder: close stdin, wait Grace, SIGTERM the
// group, wait Grace, SIGKILL. Idempotent; concurrent callers wait for the
// first. Bounded by about 2*Grace plus the drain of what is left.
func (s *Stdio) Close() error {
	s.closeOnce.Do(func() {
		s.closeErr = s.shutdown()
		s.group.close()
	})
	return s.closeErr
}

func (s *Stdio) shutdown() error {
	s.mu.Lock()
	s.closing = true
	running := s.cmd != nil && !s.exited
	ran := s.cmd != nil
	if !s.started {
		s.started = true // Start after Close is refused
		s.doneOnce.Do(func() { close(s.done) })
	}
	s.mu.Unlock()
	if !ran {
		return nil
	}
	if !running {
		s.finishClose("the server process had already exited")
		return nil
	}

	s.closeStdin()
	step := "exited after stdin closed"
	if !s.waitGone(s.grace) {
		s.signal(syscall.SIGTERM)
		step = "exited after SIGTERM"
		if !s.waitGone(s.grace) {
			s.signal(syscall.SIGKILL)
			step = "exited after SIGKILL"
			if !s.waitGone(s.grace) {
				err := fmt.Errorf("stdio close: pid %d still running after SIGKILL (stuck in the kernel?); check it with ps", s.pid)
				s.event(EvClosed, Meta{PID: s.pid, Detail: err.Error()})
				return err
			}
		}
	}
	s.finishClose(step)
	return nil
}

// finishClose waits (bounded) for the drain so EvExited comes first.
func (s *Stdio) finishClose(detail string) {
	t := time.NewTimer(s.idle + s.grace)
	defer t.Stop()
	select {
	case <-s.done:
	case <-t.C:
	}
	s.event(EvClosed, Meta{PID: s.pid, Detail: detail})
}

func (s *Stdio) waitGone(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.gone:
		return true
	case <-t.C:
		return false
	}
}

// signal reaches the whole group. Only while the leader is unreaped: after
// that its pid (our pgid) could belong to someone else.
func (s *Stdio) signal(sig syscall.Signal) {
	if s.goneFlag.Load() {
		return
	}
	if err := s.group.signal(s.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		s.event(EvNote, Meta{PID: s.pid, Detail: fmt.Sprintf("send %s to process group %d: %v", stdioSignalName(sig), s.pid, err)})
	}
}

func stdioExitText(code int, sig string) string {
	if sig != "" {
		return "signal: " + sig
	}
	return "exit code " + strconv.Itoa(code)
}

func stdioSignalName(sig syscall.Signal) string {
	names := map[syscall.Signal]string{
		syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
		syscall.SIGABRT: "SIGABRT", syscall.SIGKILL: "SIGKILL", syscall.SIGSEGV: "SIGSEGV",
		syscall.SIGPIPE: "SIGPIPE", syscall.SIGTERM: "SIGTERM", syscall.SIGBUS: "SIGBUS",
	}
	if n, ok := names[sig]; ok {
		return n + " (" + sig.String() + ")"
	}
	return "signal " + strconv.Itoa(int(sig)) + " (" + sig.String() + ")"
}

func stdioCloseAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// CommandLine renders argv for people, quoting what a shell would split
// and redacting NAME=value words whose name looks secret.
func CommandLine(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = stdioEnvWord(a)
	}
	return strings.Join(words, " ")
}

// stdioEnvWord shows KEY=VAL (or --key=val) quoted, or KEY=[redacted].
func stdioEnvWord(w string) string {
	name, val, ok := strings.Cut(w, "=")
	if !ok || name == "" || shell.Quote(name) != name {
		return shell.Quote(w)
	}
	if IsSecretName(strings.TrimLeft(name, "-")) {
		return name + "=[redacted]"
	}
	return name + "=" + shell.Quote(val)
}

// stdioRedactLine redacts NAME=value words in a shell command line. Quotes
// are followed so a quoted value with spaces is hidden whole.
func stdioRedactLine(line string) string {
	var b strings.Builder
	i := 0
	for i < len(line) {
		if line[i] == ' ' || line[i] == '\t' {
			b.WriteByte(line[i])
			i++
			continue
		}
		// One word: up to unquoted blank.
		j, q := i, byte(0)
		for j < len(line) {
			c := line[j]
			if q != 0 {
				if c == q {
					q = 0
				} else if c == '\\' && q == '"' && j+1 < len(line) {
					j++
				}
			} else if c == '\'' || c == '"' {
				q = c
			} else if c == '\\' && j+1 < len(line) {
				j++
			} else if c == ' ' || c == '\t' || c == ';' || c == '&' || c == '|' {
				break
			}
			j++
		}
		word := line[i:j]
		if name, _, ok := strings.Cut(word, "="); ok && name != "" && IsSecretName(strings.TrimLeft(name, "-")) && !strings.ContainsAny(name, `'"`) {
			word = name + "=[redacted]"
		}
		b.WriteString(word)
		if j < len(line) && j == i { // a lone separator
			b.WriteByte(line[j])
			j++
		}
		i = j
	}
	return b.String()
}
