package leasehold

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

const (
	connectTimeout = 2 * time.Second // a node that is down must not use up the call's time
	pauseFirst     = 50 * time.Millisecond
	pauseMax       = 400 * time.Millisecond
)

// retryRule is what may be done again with a request after a failure (docs/client.md).
type retryRule int

const (
	retryIdempotent retryRule = iota + 1 // GET, keepalive, cancel, checkout with its own token
	retryWrite                           // sent once; next node only when nothing was sent or on 503
	retryLock                            // sent once; a break or a 503 is a broken wait (ride-through)
)

// request is one API call: wait is the server-side wait of a lock request
// (negative: without limit).
type request struct {
	method string
	path   string
	body   []byte
	retry  retryRule
	wait   time.Duration
}

// failure is how an attempt failed without an answer.
type failure int

const (
	failConnect failure = iota + 1 // could not connect: nothing was sent
	failNotSent                    // the request was not completely written
	failBroken                     // the connection broke after the request was written
	failTimeout                    // written, no answer within the deadline
	failTLS                        // the TLS handshake failed for good (tlsRefusal): nothing was acted on
)

type answer struct {
	status   int
	location string
	body     []byte
	stream   io.ReadCloser // the open body of a streaming request answered 200
	stop     func()        // ends a stream's context
}

// errWaitBroken is internal: a lock request's connection broke or it was answered 503.
var errWaitBroken = errors.New("leasehold: the wait broke")

func seg(name string) string { return url.PathEscape(name) }

// requestURL is node (scheme://host) and path (escaped, maybe with a query)
// as url.Parse(node+path) would answer them, without parsing the node again.
func requestURL(node, path string) (*url.URL, error) {
	scheme, host, ok := strings.Cut(node, "://")
	if !ok || strings.ContainsAny(host, "/?#@") || strings.Contains(path, "#") {
		return url.Parse(node + path)
	}
	u := &url.URL{Scheme: scheme, Host: host}
	rawPath, query, _ := strings.Cut(path, "?")
	u.RawQuery = query
	if !strings.Contains(rawPath, "%") {
		u.Path = rawPath
		return u, nil
	}
	p, err := url.PathUnescape(rawPath)
	if err != nil {
		return nil, err
	}
	u.Path = p
	if escaped := (&url.URL{Path: p}).EscapedPath(); escaped != rawPath {
		u.RawPath = rawPath
	}
	return u, nil
}

func encode(doc any) []byte {
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err) // only the client's own request types are encoded
	}
	return b
}

func unmarshal(body []byte, out any) error {
	if len(body) == 0 {
		return nil
	}
	return json.Unmarshal(body, out)
}

func decode(body []byte, out any) error {
	if err := unmarshal(body, out); err != nil {
		return newError(nil, "bad_response", 0, "not the JSON expected: %v", err)
	}
	return nil
}

func ms(d time.Duration) int64 {
	if d < 0 {
		return -1
	}
	return d.Milliseconds()
}

// ctxError is the error for a call its caller's context ended.
func ctxError(err error) *Error {
	return &Error{Code: "cancelled", Message: err.Error(), kind: ErrCancelled, cause: err}
}

// mayResend reports whether a request may be sent again after f: only when
// nothing reached the server, or the request is idempotent.
func mayResend(r *request, f failure) bool {
	return f == failConnect || f == failNotSent || r.retry == retryIdempotent
}

// attempt is the state of one send: whether a connection was had and the
// request written.
type attempt struct {
	gotConn, wrote atomic.Bool
}

// isDial reports whether err is a failure to connect (nothing was sent).
func isDial(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// send performs one attempt on node. timeout < 0: no deadline. A nil answer
// comes with a failure, or with an error when ctx ended; failTLS comes with
// its error too (tlsError).
func (c *Client) send(ctx context.Context, node string, r *request, timeout time.Duration, stream bool) (*answer, failure, error) {
	// A stream outlives the attempt's deadline once answered: its timer is
	// stopped then. Other calls end with their attempt.
	var actx context.Context
	var cancel context.CancelFunc
	var timer *time.Timer
	var streamTimedOut atomic.Bool
	switch {
	case stream:
		actx, cancel = context.WithCancel(ctx)
		timer = time.AfterFunc(timeout, func() { streamTimedOut.Store(true); cancel() })
	case timeout >= 0:
		actx, cancel = context.WithTimeout(ctx, timeout)
	default:
		actx, cancel = context.WithCancel(ctx)
	}
	stop := func() {
		if timer != nil {
			timer.Stop()
		}
		cancel()
	}
	var at attempt
	// A request that may not be sent twice asks the transport through a trace
	// whether it was written; an idempotent one only needs to know whether it
	// could connect (a dial error), which costs nothing per call.
	traced := r.retry != retryIdempotent
	hctx := actx
	if traced {
		hctx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{
			GotConn: func(httptrace.GotConnInfo) { at.gotConn.Store(true); at.wrote.Store(false) },
			WroteRequest: func(i httptrace.WroteRequestInfo) {
				if i.Err == nil {
					at.wrote.Store(true)
				}
			},
		})
	}
	u, err := requestURL(node, r.path)
	if err != nil {
		stop()
		return nil, 0, newError(nil, "bad_url", 0, "%v", err)
	}
	hreq := (&http.Request{
		Method:     r.method,
		URL:        u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     c.headers, // shared, never changed: the transport does not write to it
		Host:       u.Host,
	}).WithContext(hctx)
	if r.body != nil { // as http.NewRequest sets a *bytes.Reader body up
		body := r.body
		hreq.Body = io.NopCloser(bytes.NewReader(body))
		hreq.ContentLength = int64(len(body))
		hreq.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	fail := func(err error) (*answer, failure, error) {
		timedOut := streamTimedOut.Load() || errors.Is(actx.Err(), context.DeadlineExceeded)
		stop()
		switch {
		case ctx.Err() != nil:
			return nil, 0, ctxError(ctx.Err())
		case tlsRefusal(err):
			return nil, failTLS, tlsError(node, err)
		case traced && !at.gotConn.Load(), !traced && isDial(err):
			return nil, failConnect, nil
		case !traced: // idempotent: whether it was written does not matter
			if timedOut {
				return nil, failTimeout, nil
			}
			return nil, failBroken, nil
		case !at.wrote.Load():
			return nil, failNotSent, nil
		case timedOut:
			return nil, failTimeout, nil
		}
		return nil, failBroken, nil
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return fail(err)
	}
	if stream && resp.StatusCode == http.StatusOK {
		timer.Stop()
		return &answer{status: 200, stream: resp.Body, stop: cancel}, 0, nil
	}
	data, err := readAll(resp.Body, resp.ContentLength)
	resp.Body.Close()
	if err != nil {
		return fail(err)
	}
	stop()
	return &answer{status: resp.StatusCode, location: resp.Header.Get("Location"), body: data}, 0, nil
}

// call sends r to the leader (finding it among the nodes) and answers its final
// answer (anything but 307/503; a 503 after the deadline). attempt > 0 bounds
// each send (a keepalive gives up after ttl/6). Errors: ErrUnreachable, a
// context's, or errWaitBroken for a lock request that broke or got 503.
func (c *Client) call(ctx context.Context, r *request, attempt time.Duration, stream bool) (*answer, error) {
	start := time.Now()
	var deadline time.Time // zero: none yet (a wait without limit)
	readTimeout := time.Duration(-1)
	if r.wait >= 0 {
		readTimeout = c.io + r.wait
		deadline = start.Add(readTimeout)
	}
	if attempt > 0 {
		readTimeout = attempt
		deadline = start.Add(attempt)
	}
	if stream {
		readTimeout = c.io
		deadline = start.Add(c.io)
	}
	pause := pauseFirst
	var last503 *answer
	var refused error // the last TLS refusal, named when no node answered
	for {
		answeredAny, busy := false, false
		var askedArr [4]string
		asked := askedArr[:0]
		queue := c.nodes.order() // immutable: never written through
		for len(queue) > 0 {
			node := queue[0]
			queue = queue[1:]
			if slices.Contains(asked, node) {
				continue
			}
			asked = append(asked, node)
			timeout := readTimeout
			if !deadline.IsZero() {
				timeout = max(time.Millisecond, time.Until(deadline))
			}
			var ans *answer
			var f failure
			for resent := false; ; resent = true {
				var err error
				ans, f, err = c.send(ctx, node, r, timeout, stream)
				if f == failTLS {
					refused = err
					c.nodes.demote(node)
					break
				}
				if err != nil {
					return nil, err
				}
				if ans != nil {
					break
				}
				if f == failConnect {
					c.nodes.demote(node)
					break
				}
				if !c.mayResend(r, f) {
					if r.retry == retryLock {
						return nil, errWaitBroken
					}
					if f == failTimeout {
						return nil, unreachable("timeout", "no answer in time")
					}
					return nil, unreachable("unreachable", "the connection broke after the request was sent")
				}
				if f == failTimeout {
					c.nodes.demote(node)
					break
				}
				if resent { // once on a fresh connection, then the next node
					break
				}
			}
			if ans == nil {
				continue
			}
			answeredAny = true
			switch ans.status {
			case http.StatusTemporaryRedirect:
				busy = true
				target, err := redirectTarget(node, ans.location)
				if err != nil {
					return nil, err
				}
				if target != "" && c.nodes.learn(target) {
					queue = append([]string{target}, queue...)
					continue
				}
				return ans, nil
			case http.StatusServiceUnavailable:
				if r.retry == retryLock {
					return nil, errWaitBroken
				}
				busy = true
				last503 = ans
				continue
			}
			c.nodes.answered(node)
			return ans, nil
		}
		if !answeredAny {
			if refused != nil {
				return nil, refused
			}
			return nil, unreachable("unreachable", "no node answered (%s)", strings.Join(c.nodes.order(), ", "))
		}
		now := time.Now()
		if deadline.IsZero() && busy {
			deadline = now.Add(c.io)
		}
		if !deadline.IsZero() && !now.Add(pause).Before(deadline) {
			if last503 != nil {
				return last503, nil
			}
			return nil, unreachable("unreachable", "no node leads (redirects went round)")
		}
		if err := sleep(ctx, pause); err != nil {
			return nil, err
		}
		pause = min(pause*2, pauseMax)
	}
}

// readAll is io.ReadAll sized by the answer's Content-Length (n < 0: unknown).
// It reads to EOF, so the connection goes back to the pool.
func readAll(r io.Reader, n int64) ([]byte, error) {
	if n < 0 || n > 1<<20 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, n+1)
	for {
		m, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

func (c *Client) mayResend(r *request, f failure) bool { return mayResend(r, f) }

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctxError(ctx.Err())
	case <-t.C:
		return nil
	}
}

// do is call for a JSON answer: the status and the body. Statuses are left to the caller.
func (c *Client) do(ctx context.Context, r *request, attempt time.Duration) (int, []byte, error) {
	ans, err := c.call(ctx, r, attempt, false)
	if err != nil {
		return 0, nil, err
	}
	return ans.status, ans.body, nil
}

// expect is do where statuses other than ok are errors; the body is decoded into out.
func (c *Client) expect(ctx context.Context, r *request, out any, ok ...int) error {
	status, body, err := c.do(ctx, r, 0)
	if err != nil {
		return err
	}
	for _, s := range ok {
		if s == status {
			if out == nil {
				return nil
			}
			return decode(body, out)
		}
	}
	return apiError(status, body)
}

func get(path string) *request {
	return &request{method: http.MethodGet, path: path, retry: retryIdempotent}
}

func post(path string, doc any, rule retryRule) *request {
	r := &request{method: http.MethodPost, path: path, retry: rule}
	if doc != nil {
		r.body = encode(doc)
	}
	return r
}

// appendString appends s as a JSON string, exactly as encoding/json writes it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// lockBody is the body of an application lock request or release: the
// fields in encoding/json's order of a map's keys. mode empty: a release
// (no mode, no timeout_ms).
func lockBody(session, resource, mode, owner, principal string, timeoutMs, maxHoldMs int64) []byte {
	b := make([]byte, 0, 64+len(session)+len(resource)+len(principal))
	b = append(b, '{')
	if maxHoldMs > 0 {
		b = append(b, `"max_hold_ms":`...)
		b = strconv.AppendInt(b, maxHoldMs, 10)
		b = append(b, ',')
	}
	if mode != "" {
		b = append(b, `"mode":`...)
		b = appendString(b, mode)
		b = append(b, `,"owner":`...)
	} else {
		b = append(b, `"owner":`...)
	}
	b = appendString(b, owner)
	b = append(b, `,"principal":`...)
	b = appendString(b, principal)
	b = append(b, `,"resource":`...)
	b = appendString(b, resource)
	b = append(b, `,"session":`...)
	b = appendString(b, session)
	if mode != "" {
		b = append(b, `,"timeout_ms":`...)
		b = strconv.AppendInt(b, timeoutMs, 10)
	}
	return append(b, '}')
}
