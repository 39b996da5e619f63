package leasehold

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sync"
	"time"
)

// Checkout is a checked-out key (a visible lease with an expiry), renewed
// every ttl/3 in the background with its token. Safe for concurrent use.
type Checkout struct {
	c                     *Client
	ns, key, owner, token string
	ttl                   time.Duration
	fence                 int64
	expiresAt             string
	lost                  chan struct{}
	lostOnce              sync.Once
	stop, stopped         chan struct{}
	checkedIn             sync.Once
}

// CheckoutOption configures Client.Checkout.
type CheckoutOption func(*Checkout)

// WithLeaseToken checks out with token tok (default: a random one), so that a
// retried checkout is idempotent.
func WithLeaseToken(tok string) CheckoutOption { return func(co *Checkout) { co.token = tok } }

type checkoutDoc struct {
	Granted   bool   `json:"granted"`
	Renewed   bool   `json:"renewed"`
	Token     string `json:"token"`
	Fence     int64  `json:"fence"`
	LockedBy  string `json:"locked_by"`
	ExpiresAt string `json:"expires_at"`
}

// Checkout checks key of ns out for owner (the name others see) for ttl,
// renewing it every ttl/3 until Checkin. Errors: ErrLocked when someone else
// holds it, ErrUnreachable, *Error.
func (c *Client) Checkout(ctx context.Context, ns, key, owner string, ttl time.Duration, opts ...CheckoutOption) (*Checkout, error) {
	co := &Checkout{c: c, ns: ns, key: key, owner: owner, ttl: ttl,
		lost: make(chan struct{}), stop: make(chan struct{}), stopped: make(chan struct{})}
	for _, o := range opts {
		o(co)
	}
	if co.token == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		co.token = hex.EncodeToString(b[:])
	}
	status, body, err := c.do(ctx, co.request(), 0)
	if err != nil {
		return nil, err
	}
	if status == http.StatusLocked {
		var doc checkoutDoc
		_ = unmarshal(body, &doc)
		return nil, newError(ErrLocked, "locked", status, "held by %s", doc.LockedBy)
	}
	if status != http.StatusOK {
		return nil, apiError(status, body)
	}
	var doc checkoutDoc
	if err := decode(body, &doc); err != nil {
		return nil, err
	}
	co.fence, co.expiresAt = doc.Fence, doc.ExpiresAt
	go co.renew()
	return co, nil
}

// A checkout with its own token is idempotent: asking twice grants once.
func (co *Checkout) request() *request {
	doc := map[string]any{"owner": co.owner, "ttl_ms": ms(co.ttl), "token": co.token}
	return post("/v1/records/"+seg(co.ns)+"/"+seg(co.key)+"/checkout", doc, retryIdempotent)
}

// Token answers the lease's token.
func (co *Checkout) Token() string { return co.token }

// Fence answers the checkout's fence.
func (co *Checkout) Fence() int64 { return co.fence }

// Lost is closed once when a renewal is refused or granted as a new lease.
func (co *Checkout) Lost() <-chan struct{} { return co.lost }

func (co *Checkout) renew() {
	defer close(co.stopped)
	t := time.NewTimer(co.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-co.stop:
			return
		case <-t.C:
		}
		if co.renewOnce() == verdictLost {
			co.lostOnce.Do(func() { close(co.lost) })
			return
		}
		t.Reset(co.ttl / 3)
	}
}

// renewOnce judges one renewal: refused (423), or granted as a new lease, is lost.
func (co *Checkout) renewOnce() verdict {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-co.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	status, body, err := co.c.do(ctx, co.request(), renewalGiveUp(co.ttl))
	switch {
	case err != nil:
		return verdictRetry
	case status == http.StatusLocked:
		return verdictLost
	case status != http.StatusOK:
		return verdictRetry
	}
	var doc checkoutDoc
	if err := unmarshal(body, &doc); err != nil {
		return verdictRetry
	}
	if doc.Renewed {
		return verdictOK
	}
	if doc.Granted { // the old lease was broken or ran out; this is a new one: give it back
		_ = co.c.checkin(ctx, co.ns, co.key, co.token)
	}
	return verdictLost
}

func (co *Checkout) isLost() bool {
	select {
	case <-co.lost:
		return true
	default:
		return false
	}
}

func (co *Checkout) lostError() error {
	return newError(ErrLost, "lost", 0, "the checkout of %s was lost", co.key)
}

// Save saves the record under this lease and answers its new version.
// Errors: ErrLost after the lease was lost, ErrRefused, ErrNotFound, *Error.
func (co *Checkout) Save(ctx context.Context, body string) (int64, error) {
	if co.isLost() {
		return 0, co.lostError()
	}
	return co.c.Save(ctx, co.ns, co.key, body, Proof{Token: co.token})
}

// Checkin checks the key in (once; renewals stop). Errors: ErrLost when the
// lease was lost meanwhile, ErrRefused, *Error.
func (co *Checkout) Checkin(ctx context.Context) error {
	var err error
	co.checkedIn.Do(func() {
		close(co.stop)
		<-co.stopped // a renewal under way may still lose it
		if co.isLost() {
			err = co.lostError()
			return
		}
		err = co.c.checkin(ctx, co.ns, co.key, co.token)
	})
	return err
}

func (c *Client) checkin(ctx context.Context, ns, key, token string) error {
	r := post("/v1/records/"+seg(ns)+"/"+seg(key)+"/checkin", map[string]string{"token": token}, retryWrite)
	status, body, err := c.do(ctx, r, 0)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return writeRefusal(status, body, "released")
	}
	return nil
}
