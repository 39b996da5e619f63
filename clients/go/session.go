package leasehold

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Session is a server session kept alive by a keepalive every ttl/3 in the
// background. Locks and semaphore permits taken through it belong to it.
// Safe for concurrent use.
type Session struct {
	c    *Client
	id   string
	name string
	ttl  time.Duration

	done          chan struct{} // closed once when the session is lost
	locksLost     chan struct{} // closed once when a memory namespace lost its locks
	locksLostOnce sync.Once
	stop          chan struct{}
	stopped       chan struct{}

	mu      sync.Mutex
	lost    bool
	closed  bool
	handles map[*handle]struct{}
	held    map[holdKey]int
}

// SessionOption configures Client.Session.
type SessionOption func(*sessionBody)

type sessionBody struct {
	Name             string `json:"name,omitempty"`
	TTLMs            int64  `json:"ttl_ms"`
	DeadlockPriority int    `json:"deadlock_priority"`
}

// WithDeadlockPriority sets the session's deadlock priority (-10..10; the lower is the victim).
func WithDeadlockPriority(p int) SessionOption {
	return func(b *sessionBody) { b.DeadlockPriority = p }
}

// Session opens a session named name (may be empty) that ends ttl after its
// last keepalive, and keeps it alive until Close. Errors: ErrUnreachable, *Error.
func (c *Client) Session(ctx context.Context, name string, ttl time.Duration, opts ...SessionOption) (*Session, error) {
	b := sessionBody{Name: name, TTLMs: ms(ttl)}
	for _, o := range opts {
		o(&b)
	}
	var doc struct {
		ID   json.Number `json:"id"`
		Name string      `json:"name"`
	}
	if err := c.expect(ctx, post("/v1/sessions", b, retryWrite), &doc, 201, 200); err != nil {
		return nil, err
	}
	s := &Session{
		c: c, id: doc.ID.String(), name: doc.Name, ttl: ttl,
		done: make(chan struct{}), locksLost: make(chan struct{}),
		stop: make(chan struct{}), stopped: make(chan struct{}),
		handles: map[*handle]struct{}{}, held: map[holdKey]int{},
	}
	go s.keepAlive()
	return s, nil
}

// ID answers the server's id of the session.
func (s *Session) ID() string { return s.id }

// Done is closed once when the session is lost (the server no longer knows
// it: deleted, or expired); every lock and slot taken through it is lost then
// too. Close does not close it.
func (s *Session) Done() <-chan struct{} { return s.done }

// LocksLost is closed once when a restart of a "locks":"memory" namespace
// took the session's locks there: treat every lock taken there as lost.
func (s *Session) LocksLost() <-chan struct{} { return s.locksLost }

type verdict int

const (
	verdictOK verdict = iota
	verdictLost
	verdictLocksLost
	verdictRetry
)

// renewalGiveUp: each keepalive and renewal gives up after half its period (ttl/6, at least 1 s).
func renewalGiveUp(ttl time.Duration) time.Duration { return max(ttl/6, time.Second) }

func (s *Session) keepAlive() {
	defer close(s.stopped)
	period := s.ttl / 3
	t := time.NewTimer(period)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		v, taken := s.c.keepalive(s.id, renewalGiveUp(s.ttl), s.stop)
		switch v {
		case verdictLost:
			s.markLost()
			return
		case verdictLocksLost:
			s.locksLostOnce.Do(func() { close(s.locksLost) })
		}
		if len(taken) > 0 {
			s.takeBack(taken)
		}
		t.Reset(period)
	}
}

// keepalive judges one keepalive: only session_not_found loses the session; a
// network failure is retried at the next period. It also answers what the
// server took back from the session's own handles since it was last told (a
// hold limit, a break; docs/api.md, "Hold limits and breaks").
func (c *Client) keepalive(id string, giveUp time.Duration, stop <-chan struct{}) (verdict, map[holdKey]bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	status, body, err := c.do(ctx, post("/v1/sessions/"+seg(id)+"/keepalive", nil, retryIdempotent), giveUp)
	if err != nil {
		return verdictRetry, nil
	}
	if status != http.StatusOK {
		if apiError(status, body).Code == "session_not_found" {
			return verdictLost, nil
		}
		return verdictRetry, nil
	}
	var doc struct {
		LocksLost bool `json:"locks_lost"`
		Lost      []struct {
			NS        string `json:"ns"`
			Principal string `json:"principal"`
			Resource  string `json:"resource"`
			Kind      string `json:"kind"`
			Owner     string `json:"owner"`
		} `json:"lost"`
	}
	if unmarshal(body, &doc) != nil {
		return verdictOK, nil
	}
	taken := map[holdKey]bool{}
	for _, l := range doc.Lost {
		if l.Owner == "Session" { // a transaction's are the caller's to read
			taken[holdKey{ns: l.NS, principal: strings.ToLower(l.Principal), name: l.Resource, semaphore: l.Kind == "semaphore"}] = true
		}
	}
	if doc.LocksLost {
		return verdictLocksLost, taken
	}
	return verdictOK, taken
}

// takeBack marks lost the handles of what the server took back: they no
// longer count as held, and their Release sends nothing (the session may hold
// the name again through another handle).
func (s *Session) takeBack(keys map[holdKey]bool) {
	s.mu.Lock()
	var handles []*handle
	for h := range s.handles {
		if keys[h.key] {
			handles = append(handles, h)
		}
	}
	for _, h := range handles {
		delete(s.handles, h)
		if s.held[h.key]--; s.held[h.key] <= 0 {
			delete(s.held, h.key)
		}
		h.takenBack.Store(true)
	}
	s.mu.Unlock()
	for _, h := range handles {
		h.markLost()
	}
}

func (s *Session) markLost() {
	s.mu.Lock()
	if s.lost {
		s.mu.Unlock()
		return
	}
	s.lost = true
	handles := make([]*handle, 0, len(s.handles))
	for h := range s.handles {
		handles = append(handles, h)
	}
	s.mu.Unlock()
	close(s.done)
	for _, h := range handles {
		h.markLost()
	}
}

func (s *Session) check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost || s.closed {
		return newError(ErrSessionLost, "session_not_found", 0, "session %s is lost or closed", s.id)
	}
	return nil
}

// noteLoss marks the session lost when err says the server no longer knows it.
func (s *Session) noteLoss(err error) error {
	if e, ok := err.(*Error); ok && e.Code == "session_not_found" {
		s.markLost()
	}
	return err
}

// Close ends the session (the server releases its locks). Its keepalives stop.
// It answers what the server said (ErrSessionLost when it was gone already);
// later calls do nothing.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.handles = map[*handle]struct{}{}
	s.mu.Unlock()
	close(s.stop)
	<-s.stopped
	ctx, cancel := context.WithTimeout(context.Background(), s.c.io)
	defer cancel()
	r := &request{method: http.MethodDelete, path: "/v1/sessions/" + seg(s.id), retry: retryWrite}
	return s.c.expect(ctx, r, nil, 204, 200)
}

// ---------------------------------------------------------------- handles

// holdKey names what a session holds through its handles: a lock or a semaphore.
type holdKey struct {
	ns, principal, name string
	semaphore           bool
}

// handle is what a lock and a slot share: the loss signal and the release.
type handle struct {
	s         *Session
	key       holdKey
	lost      chan struct{}
	lostOnce  sync.Once
	released  sync.Once
	takenBack atomic.Bool // by the server: a hold limit, a break
}

func (h *handle) markLost() { h.lostOnce.Do(func() { close(h.lost) }) }

// release runs send once, unless the server took the handle back.
func (h *handle) release(send func() error) error {
	var err error
	h.released.Do(func() {
		if h.takenBack.Load() {
			err = newError(ErrLost, "lost", 0, "%s was taken back by the server", h.key.name)
			return
		}
		h.s.unregister(h)
		err = h.s.noteLoss(send())
	})
	return err
}

func (s *Session) register(h *handle) {
	s.mu.Lock()
	s.handles[h] = struct{}{}
	s.held[h.key]++
	lost := s.lost
	s.mu.Unlock()
	if lost {
		h.markLost()
	}
}

func (s *Session) unregister(h *handle) {
	s.mu.Lock()
	delete(s.handles, h)
	if s.held[h.key]--; s.held[h.key] <= 0 {
		delete(s.held, h.key)
	}
	s.mu.Unlock()
}

func (s *Session) holds(k holdKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[k] > 0
}

// Mode is an application lock mode.
type Mode string

// The lock modes of sp_getapplock.
const (
	Shared          Mode = "Shared"
	Update          Mode = "Update"
	IntentShared    Mode = "IntentShared"
	IntentExclusive Mode = "IntentExclusive"
	Exclusive       Mode = "Exclusive"
)

type acquireConfig struct {
	timeout   time.Duration // negative: without limit
	permits   int
	principal string
	maxHold   time.Duration // 0: the namespace's hold limit
}

// AcquireOption configures Session.Lock and Session.Semaphore.
type AcquireOption func(*acquireConfig)

// WithTimeout waits up to d for the grant (0: never waits). Without it a
// request waits as long as it takes (or until its context ends).
func WithTimeout(d time.Duration) AcquireOption {
	return func(c *acquireConfig) { c.timeout = max(d, 0) }
}

// WithPermits asks for n permits of a semaphore (default 1).
func WithPermits(n int) AcquireOption { return func(c *acquireConfig) { c.permits = n } }

// WithMaxHold asks the server to take the lock or permits back after d (at
// most the namespace's max_hold_ms); Lost() is closed then, at the next
// keepalive. Without it the namespace's limit applies, if any.
func WithMaxHold(d time.Duration) AcquireOption {
	return func(c *acquireConfig) { c.maxHold = max(d, 0) }
}

// WithPrincipal sets the lock's principal (default "public").
func WithPrincipal(p string) AcquireOption { return func(c *acquireConfig) { c.principal = p } }

func acquireOptions(opts []AcquireOption) acquireConfig {
	cfg := acquireConfig{timeout: -1, permits: 1, principal: "public"}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// Lock is an application lock held by a session. Safe for concurrent use.
type Lock struct {
	handle
	ns, resource, principal string
	grant                   grant
}

// Fence answers the grant's fence: pass it to the writes the lock guards.
func (l *Lock) Fence() int64 { return l.grant.fence }

// Mode answers the combined mode the session holds.
func (l *Lock) Mode() Mode { return Mode(l.grant.mode) }

// Waited reports whether the lock was granted after waiting.
func (l *Lock) Waited() bool { return l.grant.waited }

// Lost is closed once when the lock is lost: its session was lost, or the
// server took it back (a hold limit, a break; noticed at the next keepalive).
func (l *Lock) Lost() <-chan struct{} { return l.lost }

// Lock takes the application lock resource of namespace ns in mode, owned by
// the session, waiting up to WithTimeout (else as long as it takes, or until
// ctx ends: that cancels the wait on the server too). A wait broken by a
// restart or failover is ridden through (docs/client.md, "Restarts").
// Errors: ErrTimeout, *DeadlockError (ErrDeadlock), ErrCancelled,
// ErrSessionLost, ErrUnreachable, *Error.
func (s *Session) Lock(ctx context.Context, ns, resource string, mode Mode, opts ...AcquireOption) (*Lock, error) {
	cfg := acquireOptions(opts)
	if err := s.check(); err != nil {
		return nil, err
	}
	t := target{ns: ns, session: s.id, name: resource, principal: cfg.principal, mode: string(mode), maxHold: cfg.maxHold}
	key := holdKey{ns: ns, principal: strings.ToLower(cfg.principal), name: resource}
	g, err := s.c.acquire(ctx, t, cfg.timeout, s.holds(key), 0)
	if err != nil {
		return nil, s.noteLoss(err)
	}
	l := &Lock{handle: handle{s: s, key: key, lost: make(chan struct{})}, ns: ns, resource: resource, principal: cfg.principal, grant: g}
	s.register(&l.handle)
	return l, nil
}

// Release releases the lock (once; later calls do nothing) and answers what
// the server said (ErrSessionLost when the session is gone), or ErrLost
// without a request when the server took it back.
func (l *Lock) Release(ctx context.Context) error {
	return l.release(func() error {
		r := &request{method: http.MethodPost, path: "/v1/applocks/" + seg(l.ns) + "/release",
			body: lockBody(l.s.id, l.resource, "", "Session", l.principal, 0, 0), retry: retryWrite}
		return l.s.c.expect(ctx, r, nil, 200)
	})
}

// Slot holds permits of a semaphore for a session. Safe for concurrent use.
type Slot struct {
	handle
	ns, name, principal string
	grant               grant
	permits             int
}

// Fence answers the grant's fence.
func (sl *Slot) Fence() int64 { return sl.grant.fence }

// Permits answers the permits this slot holds.
func (sl *Slot) Permits() int { return sl.permits }

// Waited reports whether the permits were granted after waiting.
func (sl *Slot) Waited() bool { return sl.grant.waited }

// Lost is closed once when the permits are lost, as Lock.Lost.
func (sl *Slot) Lost() <-chan struct{} { return sl.lost }

// Semaphore takes WithPermits (default 1) of the semaphore name of limit
// permits, as Lock does.
func (s *Session) Semaphore(ctx context.Context, ns, name string, limit int, opts ...AcquireOption) (*Slot, error) {
	cfg := acquireOptions(opts)
	if err := s.check(); err != nil {
		return nil, err
	}
	t := target{ns: ns, session: s.id, name: name, principal: cfg.principal, permits: cfg.permits, maxHold: cfg.maxHold}
	key := holdKey{ns: ns, principal: strings.ToLower(cfg.principal), name: name, semaphore: true}
	g, err := s.c.acquire(ctx, t, cfg.timeout, s.holds(key), limit)
	if err != nil {
		return nil, s.noteLoss(err)
	}
	sl := &Slot{handle: handle{s: s, key: key, lost: make(chan struct{})}, ns: ns, name: name, principal: cfg.principal, grant: g, permits: cfg.permits}
	s.register(&sl.handle)
	return sl, nil
}

// Release gives the slot's permits back (once), as Lock.Release.
func (sl *Slot) Release(ctx context.Context) error {
	return sl.release(func() error {
		doc := map[string]any{"session": sl.s.id, "permits": sl.permits, "owner": "Session", "principal": sl.principal}
		path := "/v1/semaphores/" + seg(sl.ns) + "/" + seg(sl.name) + "/release"
		return sl.s.c.expect(ctx, post(path, doc, retryWrite), nil, 200)
	})
}

// idString decodes a session id given as a string or a number.
type idString string

func (i *idString) UnmarshalJSON(b []byte) error {
	if s, err := strconv.Unquote(string(b)); err == nil {
		*i = idString(s)
		return nil
	}
	*i = idString(b)
	return nil
}
