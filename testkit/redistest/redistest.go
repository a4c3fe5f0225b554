// Package redistest runs a real redis-server for tests: on a free loopback
// port, with appendonly in a temporary folder, stopped at the test's end.
// No mocks of Redis: when redis-server is missing the test is skipped, or
// fails under MCPSCOPE_REQUIRE_PEERS=1 (CI).
package redistest

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/internal/loopback"
)

// Server is one redis-server process.
type Server struct {
	Addr  string // 127.0.0.1:PORT
	Dir   string // its data folder (appendonly files)
	cmd   *exec.Cmd
	exit  chan struct{}
	extra []string // more arguments (TLS); "" after --tls-port is the port
}

// URL is the server's redis:// URL, database db.
func (s *Server) URL(db int) string { return fmt.Sprintf("redis://%s/%d", s.Addr, db) }

// Start runs redis-server for t.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		msg := "redis-server is not installed (apt-get install redis-server)"
		if os.Getenv("MCPSCOPE_REQUIRE_PEERS") == "1" {
			t.Fatalf("%s (MCPSCOPE_REQUIRE_PEERS=1, so this is a failure)", msg)
		}
		t.Skip(msg)
	}
	addr, err := loopback.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: addr, Dir: t.TempDir()}
	s.start(t, bin)
	t.Cleanup(func() { s.Kill() })
	return s
}

func (s *Server) start(t testing.TB, bin string) {
	t.Helper()
	_, port, _ := net.SplitHostPort(s.Addr)
	args := []string{"--port", port, "--bind", "127.0.0.1", "--dir", s.Dir, "--appendonly", "yes",
		"--save", "", "--daemonize", "no", "--protected-mode", "yes"}
	if len(s.extra) > 0 {
		args = args[2:]
		for _, a := range s.extra {
			if a == "" {
				a = port
			}
			args = append(args, a)
		}
	}
	s.cmd = exec.Command(bin, args...)
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	s.exit = make(chan struct{})
	ready := make(chan struct{})
	go func() {
		// It says so when it accepts connections; the rest is drained.
		sc := bufio.NewScanner(out)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), "Ready to accept connections") {
				once = true
				close(ready)
			}
		}
		if !once {
			close(ready)
		}
	}()
	go func() { s.cmd.Wait(); close(s.exit) }()
	select {
	case <-ready:
	case <-time.After(60 * time.Second): // a hang guard, not an expected time
		t.Fatal("redis-server did not start within 60s")
	}
	select {
	case <-s.exit:
		t.Fatalf("redis-server on %s exited at start", s.Addr)
	default:
	}
}

// Restart stops the server with SHUTDOWN (it writes its appendonly file)
// and starts it again on the same port and folder.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Shutdown(t)
	bin, _ := exec.LookPath("redis-server")
	s.start(t, bin)
}

// RestartEmpty kills the server (no SHUTDOWN: nothing is written) and
// starts it again on the same port with an empty folder, as a Redis that
// keeps nothing across a restart comes back.
func (s *Server) RestartEmpty(t testing.TB) {
	t.Helper()
	s.Kill()
	entries, _ := os.ReadDir(s.Dir)
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(s.Dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	bin, _ := exec.LookPath("redis-server")
	s.start(t, bin)
}

// Do sends one inline command (CONFIG SET …) and fails t on an error reply.
func (s *Server) Do(t testing.TB, cmd string) {
	t.Helper()
	if err := s.command(cmd); err != nil {
		t.Fatalf("redis %s: %v", cmd, err)
	}
}

// Shutdown sends SHUTDOWN and waits for the process to end.
func (s *Server) Shutdown(t testing.TB) {
	t.Helper()
	if err := s.command("SHUTDOWN"); err != nil {
		t.Logf("SHUTDOWN: %v", err)
	}
	select {
	case <-s.exit:
	case <-time.After(60 * time.Second):
		t.Fatal("redis-server did not stop within 60s of SHUTDOWN")
	}
}

// Kill ends the process (cleanup).
func (s *Server) Kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		<-s.exit
	}
}

// command sends one inline command and reads the first reply line.
func (s *Server) command(cmd string) error {
	c, err := net.DialTimeout("tcp", s.Addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := fmt.Fprintf(c, "%s\r\n", cmd); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil && cmd == "SHUTDOWN" {
		return nil // it closes the connection as it goes
	}
	if strings.HasPrefix(line, "-") {
		return fmt.Errorf("%s", strings.TrimSpace(line))
	}
	return err
}

// TLS is a redis-server that speaks TLS only, asking clients for a
// certificate: its CA and a client certificate, as PEM files.
type TLS struct {
	*Server
	CA, Cert, Key string // files: the CA, a client certificate it signed, its key
}

// URL is the server's rediss:// URL, database db.
func (s *TLS) URL(db int) string { return fmt.Sprintf("rediss://%s/%d", s.Addr, db) }

// StartTLS runs redis-server with --tls-port for t, with certificates made
// here (a CA, the server's for 127.0.0.1, a client's).
func StartTLS(t testing.TB) *TLS {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (apt-get install redis-server)")
	}
	addr, err := loopback.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := makeCerts(t, dir)
	s := &TLS{Server: &Server{Addr: addr, Dir: t.TempDir()}, CA: files["ca.pem"], Cert: files["client.pem"], Key: files["client.key"]}
	s.extra = []string{"--port", "0", "--tls-port", "", "--tls-cert-file", files["server.pem"], "--tls-key-file", files["server.key"],
		"--tls-ca-cert-file", files["ca.pem"], "--tls-auth-clients", "yes"}
	s.start(t, bin)
	t.Cleanup(func() { s.Kill() })
	return s
}

func makeCerts(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	write := func(name, typ string, der []byte) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		out[name] = p
	}
	now := time.Now()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "redistest CA"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	write("ca.pem", "CERTIFICATE", caDER)
	for i, name := range []string{"server", "client"} {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		c := &x509.Certificate{SerialNumber: big.NewInt(int64(i + 2)), Subject: pkix.Name{CommonName: name}, NotBefore: now.Add(-time.Hour),
			NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
		der, err := x509.CreateCertificate(rand.Reader, c, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kb, _ := x509.MarshalPKCS8PrivateKey(k)
		write(name+".pem", "CERTIFICATE", der)
		write(name+".key", "PRIVATE KEY", kb)
	}
	return out
}
