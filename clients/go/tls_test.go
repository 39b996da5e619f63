package leasehold_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	leasehold "github.com/leasehold/leasehold/clients/go"
)

// makeCerts runs scripts/test-certs into a folder of the test's: the test CA,
// servers' and clients' certificates (its header lists them).
func makeCerts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("../../scripts/test-certs", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/test-certs: %v\n%s", err, out)
	}
	return dir
}

// noTLSEnv unsets the TLS environment variables for the test (New reads them).
func noTLSEnv(t *testing.T) {
	for _, v := range []string{leasehold.EnvCAFile, leasehold.EnvCertFile, leasehold.EnvKeyFile} {
		t.Setenv(v, "") // empty is unset, for New
	}
}

// serveTLS is the arguments of a server with certificate NAME.pem/.key of certs.
func serveTLS(certs, name string, more ...string) []string {
	return append([]string{"--tls-cert", filepath.Join(certs, name+".pem"), "--tls-key", filepath.Join(certs, name+".key")}, more...)
}

// mutualConfig is a server config that requires a client certificate by the
// test CA and maps subject worker.billing to principal billing.
func mutualConfig(certs string) string {
	doc := map[string]any{
		"tls": map[string]any{
			"cert": filepath.Join(certs, "server.pem"), "key": filepath.Join(certs, "server.key"),
			"client_ca": filepath.Join(certs, "ca.pem"), "require_client_certificate": true,
		},
		"tokens": []any{map[string]any{"subject": "worker.billing", "principal": "billing", "namespaces": []string{"*"}, "role": "admin"}},
	}
	b, _ := json.Marshal(doc)
	return string(b)
}

func tlsClient(t *testing.T, url string, opts ...leasehold.Option) *leasehold.Client {
	t.Helper()
	opts = append([]leasehold.Option{leasehold.WithIOTimeout(10 * time.Second)}, opts...)
	c, err := leasehold.New(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// openedBy records the opened_by of the sessions the client opens (what the
// server took the caller for), as WithTransport lets a test observe answers.
type openedBy struct {
	next      http.RoundTripper
	principal atomic.Value
}

func (o *openedBy) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := o.next.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || req.URL.Path != "/v1/sessions" {
		return resp, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	var doc struct {
		OpenedBy string `json:"opened_by"`
	}
	if err == nil && json.Unmarshal(data, &doc) == nil {
		o.principal.Store(doc.OpenedBy)
	}
	return resp, nil
}

func recordOpenedBy(o *openedBy) leasehold.Option {
	return leasehold.WithTransport(func(next http.RoundTripper) http.RoundTripper { o.next = next; return o })
}

// wantTLSError checks err is the client's TLS refusal: ErrUnreachable, Code
// "tls", a message naming TLS; and answers it.
func wantTLSError(t *testing.T, err error) *leasehold.Error {
	t.Helper()
	t.Logf("refused: %v", err)
	var e *leasehold.Error
	if !errors.As(err, &e) || e.Code != "tls" || !errors.Is(err, leasehold.ErrUnreachable) || !strings.Contains(e.Message, "tls") {
		t.Fatalf("got %v, want an ErrUnreachable with Code tls naming the TLS failure", err)
	}
	return e
}

// expiredStandIn is a TLS server of the test's with the expired certificate,
// which leasehold serve refuses to start with; it answers /healthz as a
// server would, so a client that is not refused would find it healthy.
func expiredStandIn(t *testing.T, certs string) *httptest.Server {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(filepath.Join(certs, "server-expired.pem"), filepath.Join(certs, "server-expired.key"))
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	}))
	s.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func TestTLS(t *testing.T) {
	noTLSEnv(t)
	certs := makeCerts(t)
	cert := func(name string) string { return filepath.Join(certs, name) }
	ctx := context.Background()

	t.Run("LockOverHTTPS", func(t *testing.T) {
		srv := startTLSServer(t, certs, "", serveTLS(certs, "server")...)
		for _, url := range []string{srv.url(), "https://localhost:" + srv.port} { // an IP and a DNS name
			c := tlsClient(t, url, leasehold.WithCAFile(cert("ca.pem")), leasehold.WithTransport(validatingTransport(t)))
			s := session(t, c, "worker", 10*time.Second)
			lk, err := s.Lock(ctx, "app", "invoice:481", leasehold.Exclusive, leasehold.WithTimeout(5*time.Second))
			if err != nil {
				t.Fatalf("%s: %v", url, err)
			}
			if _, err := c.Save(ctx, "app", "481", "paid", leasehold.Proof{Fence: lk.Fence()}); err != nil && !errors.Is(err, leasehold.ErrNotFound) {
				t.Fatalf("%s: fenced save: %v", url, err)
			}
			if err := lk.Release(ctx); err != nil {
				t.Fatal(err)
			}
			w, err := c.Watch(ctx, "app") // a stream over TLS
			if err != nil {
				t.Fatal(err)
			}
			w.Close()
		}
	})

	t.Run("ServerCertificateRefused", func(t *testing.T) {
		for _, tc := range []struct {
			cert string
			want func(error) bool
		}{ // the expired one served by a stand-in: leasehold serve refuses to start with it
			{"server-other-ca", func(err error) bool { var x x509.UnknownAuthorityError; return errors.As(err, &x) }},
			{"server-expired", func(err error) bool {
				var x x509.CertificateInvalidError
				return errors.As(err, &x) && x.Reason == x509.Expired
			}},
			{"server-wrong-host", func(err error) bool { var x x509.HostnameError; return errors.As(err, &x) }},
		} {
			var url string
			if tc.cert == "server-expired" {
				url = expiredStandIn(t, certs).URL
			} else {
				url = startTLSServer(t, certs, "", serveTLS(certs, tc.cert)...).url()
			}
			c := tlsClient(t, url, leasehold.WithCAFile(cert("ca.pem")))
			_, err := c.Session(ctx, "worker", 10*time.Second)
			wantTLSError(t, err)
			var verify *tls.CertificateVerificationError
			if !errors.As(err, &verify) || !tc.want(err) {
				t.Errorf("%s: %v is not the verification error expected", tc.cert, err)
			}
			hctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			if c.Healthy(hctx) || hctx.Err() != nil {
				t.Errorf("%s: Healthy did not give up by itself on a refused certificate", tc.cert)
			}
			cancel()
		}
		// Without a CA file the system's roots are used: they do not know the test CA.
		srv := startTLSServer(t, certs, "", serveTLS(certs, "server")...)
		_, err := tlsClient(t, srv.url()).Session(ctx, "worker", 10*time.Second)
		var unknown x509.UnknownAuthorityError
		if wantTLSError(t, err); !errors.As(err, &unknown) {
			t.Errorf("the system's roots: %v, want an unknown authority", err)
		}
		// An https URL of a server that does not speak TLS.
		plain := startServer(t, "")
		_, err = tlsClient(t, "https://127.0.0.1:"+plain.port).Session(ctx, "worker", 10*time.Second)
		wantTLSError(t, err)
	})

	t.Run("HandshakeBrokenOffIsNotARefusal", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				_, _ = conn.Read(make([]byte, 4096)) // the ClientHello, then gone (a restart, say)
				conn.Close()
			}
		}()
		_, err = tlsClient(t, "https://"+ln.Addr().String(), leasehold.WithCAFile(cert("ca.pem"))).Session(ctx, "w", 10*time.Second)
		var e *leasehold.Error
		if !errors.As(err, &e) || e.Code != "unreachable" {
			t.Fatalf("got %v, want Code unreachable (a connection that failed, not a TLS refusal)", err)
		}
	})

	t.Run("MutualTLS", func(t *testing.T) {
		srv := startTLSServer(t, certs, mutualConfig(certs))
		rec := &openedBy{}
		c := tlsClient(t, srv.url(), leasehold.WithCAFile(cert("ca.pem")),
			leasehold.WithClientCertificate(cert("client-billing.pem"), cert("client-billing.key")), recordOpenedBy(rec))
		s := session(t, c, "worker", 10*time.Second)
		if got := rec.principal.Load(); got != "billing" {
			t.Fatalf("opened_by %v, want billing (the principal of subject worker.billing)", got)
		}
		lk, err := s.Lock(ctx, "app", "r", leasehold.Exclusive, leasehold.WithTimeout(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		_ = lk.Release(ctx)

		for _, name := range []string{"", "client-other-ca", "client-expired"} {
			opts := []leasehold.Option{leasehold.WithCAFile(cert("ca.pem"))}
			if name != "" {
				opts = append(opts, leasehold.WithClientCertificate(cert(name+".pem"), cert(name+".key")))
			}
			_, err := tlsClient(t, srv.url(), opts...).Session(ctx, "worker", 10*time.Second)
			if e := wantTLSError(t, err); !strings.Contains(e.Message, "refused") {
				t.Errorf("client certificate %q: %v does not say the server refused it", name, err)
			}
		}
		// A certificate of the CA whose subject no token names: authenticated, not authorized.
		_, err = tlsClient(t, srv.url(), leasehold.WithCAFile(cert("ca.pem")),
			leasehold.WithClientCertificate(cert("client-unknown.pem"), cert("client-unknown.key"))).Session(ctx, "w", 10*time.Second)
		var e *leasehold.Error
		if !errors.As(err, &e) || e.Status != http.StatusUnauthorized {
			t.Errorf("client-unknown: %v, want 401", err)
		}
	})

	t.Run("EnvironmentVariables", func(t *testing.T) {
		srv := startTLSServer(t, certs, mutualConfig(certs))
		t.Setenv(leasehold.EnvCAFile, cert("ca.pem"))
		t.Setenv(leasehold.EnvCertFile, cert("client-billing.pem"))
		t.Setenv(leasehold.EnvKeyFile, cert("client-billing.key"))
		rec := &openedBy{}
		session(t, tlsClient(t, srv.url(), recordOpenedBy(rec)), "worker", 10*time.Second)
		if got := rec.principal.Load(); got != "billing" {
			t.Fatalf("opened_by %v, want billing", got)
		}
		// An option wins over the environment.
		_, err := tlsClient(t, srv.url(), leasehold.WithCAFile(cert("other-ca.pem"))).Session(ctx, "w", 10*time.Second)
		wantTLSError(t, err)
		// Plain http is not affected by them.
		session(t, tlsClient(t, startServer(t, "").url()), "plain", 10*time.Second)

		t.Setenv(leasehold.EnvKeyFile, "")
		var be *leasehold.Error
		if _, err := leasehold.New(srv.url()); !errors.As(err, &be) || be.Code != "bad_tls" {
			t.Errorf("LEASEHOLD_CERT without LEASEHOLD_KEY: %v, want bad_tls", err)
		}
		t.Setenv(leasehold.EnvCAFile, cert("missing.pem"))
		if _, err := leasehold.New(srv.url()); !errors.As(err, &be) || be.Code != "bad_tls" {
			t.Errorf("a missing CA file: %v, want bad_tls", err)
		}
	})

	t.Run("NoSkippingVerification", func(t *testing.T) {
		_, err := leasehold.New("https://127.0.0.1:1", leasehold.WithTLSConfig(&tls.Config{InsecureSkipVerify: true}))
		var e *leasehold.Error
		if !errors.As(err, &e) || e.Code != "bad_tls" {
			t.Fatalf("InsecureSkipVerify: %v, want bad_tls", err)
		}
	})

	t.Run("Redirects", func(t *testing.T) {
		tlsSrv := startTLSServer(t, certs, "", serveTLS(certs, "server")...)
		plainSrv := startServer(t, "")
		var plainAsked atomic.Int32
		plainDoor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			plainAsked.Add(1)
			http.Error(w, "not here", http.StatusTeapot)
		}))
		defer plainDoor.Close()
		redirector := func(to string) *httptest.Server {
			return httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Location", to+r.URL.RequestURI())
				w.WriteHeader(http.StatusTemporaryRedirect)
			}))
		}
		roots := func(servers ...*httptest.Server) *tls.Config {
			pool := x509.NewCertPool()
			pem, err := os.ReadFile(cert("ca.pem"))
			if err != nil || !pool.AppendCertsFromPEM(pem) {
				t.Fatal("ca.pem", err)
			}
			for _, s := range servers {
				pool.AddCert(s.Certificate())
			}
			return &tls.Config{RootCAs: pool}
		}

		// https to http: never followed, nothing sent to the http node.
		down := redirector(plainDoor.URL)
		defer down.Close()
		_, err := tlsClient(t, down.URL, leasehold.WithTLSConfig(roots(down))).Session(ctx, "w", 10*time.Second)
		var e *leasehold.Error
		if !errors.As(err, &e) || e.Code != "bad_url" || e.Status != http.StatusTemporaryRedirect ||
			!strings.Contains(e.Message, "https to http") {
			t.Errorf("https -> http: %v, want bad_url naming the downgrade", err)
		}
		if n := plainAsked.Load(); n != 0 {
			t.Errorf("the http node was asked %d times", n)
		}

		// https to https, http to https and http to http: followed.
		across := redirector(tlsSrv.url())
		defer across.Close()
		session(t, tlsClient(t, across.URL, leasehold.WithTLSConfig(roots(across))), "https-https", 10*time.Second)
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, tlsSrv.url()+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		}))
		defer up.Close()
		session(t, tlsClient(t, up.URL, leasehold.WithCAFile(cert("ca.pem"))), "http-https", 10*time.Second)
		plainHop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, plainSrv.url()+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		}))
		defer plainHop.Close()
		session(t, tlsClient(t, plainHop.URL), "http-http", 10*time.Second)
	})
}
