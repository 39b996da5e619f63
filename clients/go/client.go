// Package leasehold is the Go client of leasehold, a coordination server:
// application locks with sp_getapplock semantics, semaphores, record checkouts
// (leases) and sessions kept alive by clients. It speaks the HTTP/JSON API of
// docs/api.md and behaves as docs/client.md says every client does.
//
// A *Client is safe for concurrent use and cheap to share. Sessions, locks,
// semaphore slots and checkouts may be used from any goroutine; their loss is
// signalled by closing a channel (Session.Done, Lock.Lost, Checkout.Lost).
package leasehold

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"time"
)

// Client is a leasehold client over one server or a cluster's nodes.
type Client struct {
	nodes   *nodes
	http    *http.Client
	io      time.Duration
	headers http.Header
}

type config struct {
	token             string
	io                time.Duration
	transport         func(http.RoundTripper) http.RoundTripper
	tls               *tls.Config
	caFile            string
	certFile, keyFile string
}

// Option configures New.
type Option func(*config)

// WithToken sends tok as "Authorization: Bearer tok" on every request.
func WithToken(tok string) Option { return func(c *config) { c.token = tok } }

// WithIOTimeout bounds each call (default 30 s); a lock wait adds its own timeout.
func WithIOTimeout(d time.Duration) Option { return func(c *config) { c.io = d } }

// WithTransport wraps the client's HTTP transport (to observe or record the
// traffic, as the tests do). The wrapper must pass each request on unchanged.
func WithTransport(wrap func(http.RoundTripper) http.RoundTripper) Option {
	return func(c *config) { c.transport = wrap }
}

// New answers a client for urls: one server or a cluster's nodes,
// comma-separated, in any order, each http:// or https:// (port 443 by
// default). It connects to nothing yet, but reads the TLS files it is given
// (README, "TLS"). The error is an *Error with Code "bad_url" for a bad URL,
// "bad_tls" for a TLS file or option it cannot use.
func New(urls string, opts ...Option) (*Client, error) {
	cfg := config{io: 30 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	n, err := parseURLs(urls)
	if err != nil {
		return nil, err
	}
	tlsConfig, err := clientTLS(&cfg)
	if err != nil {
		return nil, err
	}
	dialer := &net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}
	var rt http.RoundTripper = &http.Transport{
		DialContext:         dialer.DialContext,
		DialTLSContext:      dialTLS(dialer, tlsConfig),
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	if cfg.transport != nil {
		rt = cfg.transport(rt)
	}
	headers := http.Header{
		"Content-Type": {"application/json"},
		"Accept":       {"application/json"},
	}
	if cfg.token != "" {
		headers.Set("Authorization", "Bearer "+cfg.token)
	}
	return &Client{
		nodes: n,
		io:    cfg.io,
		http: &http.Client{
			Transport:     rt,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		headers: headers,
	}, nil
}

// Close closes the client's idle connections. Calls still running finish.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Healthy reports whether a node answers /healthz with 200 (it leads), asking
// each in turn until one does or ctx ends.
func (c *Client) Healthy(ctx context.Context) bool {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(c.io)
	}
	return c.waitHealthy(ctx, deadline) == nil
}

// waitHealthy asks each node's /healthz in turn until one answers 200 (nil),
// ctx ends (its error), until passes (ErrUnreachable), or a round in which
// every node refused the TLS handshake (the last one's error: asking again
// would not change that).
func (c *Client) waitHealthy(ctx context.Context, until time.Time) error {
	pause := pauseFirst
	r := get("/healthz")
	for {
		order := c.nodes.order()
		var refused error
		refusals := 0
		for _, node := range order {
			left := time.Until(until)
			if left <= 0 {
				return unreachable("unreachable", "no server came back in time")
			}
			ans, f, err := c.send(ctx, node, r, min(left, connectTimeout), false)
			if f == failTLS {
				refused = err
				refusals++
				continue
			}
			if err != nil {
				return err
			}
			if ans != nil && ans.status == http.StatusOK {
				c.nodes.answered(node)
				return nil
			}
		}
		if refusals == len(order) {
			return refused
		}
		if !time.Now().Add(pause).Before(until) {
			return unreachable("unreachable", "no server came back in time")
		}
		if err := sleep(ctx, pause); err != nil {
			return err
		}
		pause = min(pause*2, pauseMax)
	}
}
