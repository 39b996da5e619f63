package leasehold

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"strings"
)

// The environment variables New reads when no option gives the same thing
// (so that a program, or the conformance harness, can turn TLS on without
// code): a CA bundle, and a client certificate with its key (both or neither).
const (
	EnvCAFile   = "LEASEHOLD_CA_FILE"
	EnvCertFile = "LEASEHOLD_CERT"
	EnvKeyFile  = "LEASEHOLD_KEY"
)

// WithTLSConfig makes cfg (cloned) the base of the client's TLS: for roots,
// certificates or a GetClientCertificate of your own. WithCAFile and
// WithClientCertificate, when given too, replace its RootCAs and
// Certificates. The server's certificate and host name are always verified:
// a cfg with InsecureSkipVerify is refused (New answers Code "bad_tls").
func WithTLSConfig(cfg *tls.Config) Option { return func(c *config) { c.tls = cfg } }

// WithCAFile makes the certificates of the PEM file path the only roots the
// servers' certificates are verified against (instead of the system's).
// Without it: $LEASEHOLD_CA_FILE, then WithTLSConfig's RootCAs, then the
// system's roots.
func WithCAFile(path string) Option { return func(c *config) { c.caFile = path } }

// WithClientCertificate presents the certificate of certFile (PEM, the leaf
// first, may hold its chain) with the key of keyFile (PEM: PKCS#8, SEC1 "EC
// PRIVATE KEY" or PKCS#1) to servers that ask for one (mutual TLS).
// Without it: $LEASEHOLD_CERT and $LEASEHOLD_KEY, then WithTLSConfig's.
func WithClientCertificate(certFile, keyFile string) Option {
	return func(c *config) { c.certFile, c.keyFile = certFile, keyFile }
}

func badTLS(format string, args ...any) *Error { return newError(nil, "bad_tls", 0, format, args...) }

// clientTLS is the client's TLS configuration from its options and the
// environment. Files are read once, here.
func clientTLS(cfg *config) (*tls.Config, error) {
	out := &tls.Config{}
	if cfg.tls != nil {
		if cfg.tls.InsecureSkipVerify {
			return nil, badTLS("InsecureSkipVerify is refused: the server's certificate is always verified")
		}
		out = cfg.tls.Clone()
	}
	caFile := cfg.caFile
	if caFile == "" && out.RootCAs == nil {
		caFile = os.Getenv(EnvCAFile)
	}
	if caFile != "" {
		pool, err := loadCAFile(caFile)
		if err != nil {
			return nil, err
		}
		out.RootCAs = pool
	}
	certFile, keyFile := cfg.certFile, cfg.keyFile
	if certFile == "" && keyFile == "" && len(out.Certificates) == 0 && out.GetClientCertificate == nil {
		certFile, keyFile = os.Getenv(EnvCertFile), os.Getenv(EnvKeyFile)
	}
	if (certFile == "") != (keyFile == "") {
		return nil, badTLS("a client certificate needs both a certificate file and a key file (got %q and %q)", certFile, keyFile)
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, badTLS("client certificate %s, key %s: %v", certFile, keyFile, err)
		}
		out.Certificates = []tls.Certificate{pair}
	}
	if out.MinVersion == 0 {
		out.MinVersion = tls.VersionTLS12
	}
	if out.ClientSessionCache == nil {
		out.ClientSessionCache = tls.NewLRUClientSessionCache(64)
	}
	return out, nil
}

func loadCAFile(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, badTLS("CA file: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, badTLS("CA file %s holds no PEM certificate", path)
	}
	return pool, nil
}

// dialTLS connects and completes the TLS handshake within connectTimeout.
// Any failure is a dial error, so a node whose handshake fails is passed
// over as one that cannot be connected: nothing was sent to it.
func dialTLS(dialer *net.Dialer, cfg *tls.Config) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		raw, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c := cfg
		if c.ServerName == "" {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				host = addr
			}
			c = cfg.Clone()
			c.ServerName = host
		}
		conn := tls.Client(raw, c)
		hctx, cancel := context.WithTimeout(ctx, connectTimeout)
		defer cancel()
		if err := conn.HandshakeContext(hctx); err != nil {
			raw.Close()
			return nil, &net.OpError{Op: "dial", Net: network, Addr: raw.RemoteAddr(), Err: err}
		}
		return conn, nil
	}
}

// tlsRefusal reports whether err is a TLS handshake that failed for good:
// the server's certificate did not verify (unknown authority, expired, wrong
// host), the server refused ours (a TLS alert: none, unknown, expired), or
// it does not speak TLS. Asking again would fail the same way; and since
// the handshake never completed, the server acted on nothing.
func tlsRefusal(err error) bool {
	var verify *tls.CertificateVerificationError
	var authority x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var hostname x509.HostnameError
	var header tls.RecordHeaderError
	if errors.As(err, &verify) || errors.As(err, &authority) || errors.As(err, &invalid) ||
		errors.As(err, &hostname) || errors.As(err, &header) {
		return true
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if op, ok := e.(*net.OpError); ok && op.Op == "remote error" { // crypto/tls: an alert from the peer
			return true
		}
	}
	return false
}

// tlsError is the error of a node that refused the handshake, or whose
// certificate was refused: ErrUnreachable with Code "tls", the TLS error
// underneath (errors.As to *tls.CertificateVerificationError works).
func tlsError(node string, err error) *Error {
	msg := err.Error()
	// past the url.Error and net.OpError prefixes
	if i := strings.Index(msg, "remote error: "); i >= 0 {
		msg = "the server refused the handshake: " + msg[i:]
	} else if i := strings.Index(msg, "tls: "); i >= 0 {
		msg = msg[i:]
	}
	return &Error{Code: "tls", Message: node + ": " + msg, kind: ErrUnreachable, cause: err}
}

// redirectTarget answers the node a 307 from node to location names, "" for
// none usable; an *Error (Code "bad_url") for a redirect from https to http,
// which is never followed: it would send the request in cleartext.
func redirectTarget(node, location string) (string, *Error) {
	if location == "" {
		return "", nil
	}
	target, ok := nodeOf(location)
	if !ok {
		return "", nil
	}
	if strings.HasPrefix(node, "https://") && !strings.HasPrefix(target, "https://") {
		return "", newError(nil, "bad_url", 307, "%s redirected to %s: a redirect from https to http is not followed", node, location)
	}
	return target, nil
}
