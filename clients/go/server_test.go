package leasehold_test

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// server is one `leasehold serve` on SQLite, restartable on the same port and data.
type server struct {
	t      *testing.T
	dir    string
	config string
	args   []string     // more arguments of serve (--tls-cert ...)
	scheme string       // "http" or "https"
	direct *http.Client // the tests' own requests (health, admin), not the client's
	port   string
	cmd    *exec.Cmd
	log    *bytes.Buffer
}

func binary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("LEASEHOLD_BINARY")
	if bin == "" {
		t.Fatal("LEASEHOLD_BINARY is not set: the tests need a leasehold server binary")
	}
	return bin
}

// startServer starts a server; config is its --config JSON ("" for none).
func startServer(t *testing.T, config string) *server {
	t.Helper()
	s := &server{t: t, dir: t.TempDir(), config: config, scheme: "http", direct: http.DefaultClient}
	s.start("127.0.0.1:0")
	t.Cleanup(s.kill)
	return s
}

// startTLSServer starts a server that speaks TLS (its --tls-* arguments in
// args, or its config's "tls"). The tests' own requests to it trust any
// certificate and present client-billing's: they only check that it is up.
func startTLSServer(t *testing.T, certs, config string, args ...string) *server {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(filepath.Join(certs, "client-billing.pem"), filepath.Join(certs, "client-billing.key"))
	if err != nil {
		t.Fatal(err)
	}
	direct := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, // the tests' health check only; never the client's
		Certificates:       []tls.Certificate{pair},
	}}}
	s := &server{t: t, dir: t.TempDir(), config: config, args: args, scheme: "https", direct: direct}
	s.start("127.0.0.1:0")
	t.Cleanup(s.kill)
	return s
}

func (s *server) start(listen string) {
	s.t.Helper()
	portFile := filepath.Join(s.dir, "port")
	os.Remove(portFile)
	args := []string{"serve", "--listen", listen, "--port-file", portFile, "--data", filepath.Join(s.dir, "data")}
	if s.config != "" {
		cfg := filepath.Join(s.dir, "config.json")
		if err := os.WriteFile(cfg, []byte(s.config), 0o600); err != nil {
			s.t.Fatal(err)
		}
		args = append(args, "--config", cfg)
	}
	args = append(args, s.args...)
	s.log = &bytes.Buffer{}
	s.cmd = exec.Command(binary(s.t), args...)
	s.cmd.Stderr = s.log
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("starting the server: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(portFile); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			s.port = strings.TrimSpace(string(b))
			if s.healthy() {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("the server did not start: %s", s.log)
}

func (s *server) healthy() bool {
	resp, err := s.direct.Get(s.url() + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

func (s *server) url() string { return s.scheme + "://127.0.0.1:" + s.port }

func (s *server) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGKILL)
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

// kill9Restart kills the server with SIGKILL and starts it again on the same port and data.
func (s *server) kill9Restart() {
	s.t.Helper()
	s.kill()
	s.start("127.0.0.1:" + s.port)
}

// admin sends one request straight to the server, not through the client.
func (s *server) admin(method, path string, body any) (int, map[string]any) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.url()+path, rd)
	resp, err := s.direct.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	data, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(data, &doc)
	return resp.StatusCode, doc
}

func (s *server) String() string { return fmt.Sprintf("server %s", s.url()) }
