package leasehold_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	leasehold "github.com/leasehold/leasehold/clients/go"
)

func newClient(t *testing.T, srv *server) *leasehold.Client {
	t.Helper()
	c, err := leasehold.New(srv.url(), leasehold.WithIOTimeout(10*time.Second), leasehold.WithTransport(validatingTransport(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func session(t *testing.T, c *leasehold.Client, name string, ttl time.Duration) *leasehold.Session {
	t.Helper()
	s, err := c.Session(context.Background(), name, ttl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestBadURL(t *testing.T) {
	_, err := leasehold.New("ftp://x")
	var e *leasehold.Error
	if !errors.As(err, &e) || e.Code != "bad_url" {
		t.Fatalf("New(ftp://x) = %v, want bad_url", err)
	}
}

func TestSurface(t *testing.T) {
	srv := startServer(t, "")
	c := newClient(t, srv)
	ctx := context.Background()
	s := session(t, c, "worker", 10*time.Second)
	if s.ID() == "" {
		t.Fatal("no session id")
	}

	w, err := c.Watch(ctx, "app")
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan leasehold.Event, 64)
	go func() {
		for e, err := range w.Events() {
			if err != nil {
				return
			}
			events <- e
		}
		close(events)
	}()

	lk, err := s.Lock(ctx, "app", "invoice:481", leasehold.Exclusive, leasehold.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if lk.Fence() <= 0 || lk.Mode() != leasehold.Exclusive || lk.Waited() {
		t.Fatalf("lock: fence %d mode %s waited %v", lk.Fence(), lk.Mode(), lk.Waited())
	}
	if _, err := c.Put(ctx, "app", "481", "draft", leasehold.Proof{Fence: lk.Fence()}); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Save(ctx, "app", "481", "paid", leasehold.Proof{Fence: lk.Fence()}); err != nil || v != 2 {
		t.Fatalf("fenced save = %d, %v", v, err)
	}
	if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := lk.Release(ctx); err != nil {
		t.Fatalf("a second release: %v", err)
	}
	if closed(lk.Lost()) {
		t.Fatal("a released lock reports loss")
	}

	slot, err := s.Semaphore(ctx, "app", "provider", 3, leasehold.WithPermits(2), leasehold.WithTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if slot.Permits() != 2 || slot.Fence() <= 0 {
		t.Fatalf("slot: permits %d fence %d", slot.Permits(), slot.Fence())
	}
	s2 := session(t, c, "other", 10*time.Second)
	if _, err := s2.Semaphore(ctx, "app", "provider", 3, leasehold.WithPermits(2), leasehold.WithTimeout(0)); !errors.Is(err, leasehold.ErrTimeout) {
		t.Fatalf("a semaphore over its limit: %v, want ErrTimeout", err)
	}
	if err := slot.Release(ctx); err != nil {
		t.Fatal(err)
	}

	co, err := c.Checkout(ctx, "docs", "42", "Asha", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := c.Put(ctx, "docs", "42", "v1", leasehold.Proof{}); err != nil || v != 1 {
		t.Fatalf("put = %d, %v", v, err)
	}
	if v, err := co.Save(ctx, "v2"); err != nil || v != 2 {
		t.Fatalf("save = %d, %v", v, err)
	}
	rec, err := c.Get(ctx, "docs", "42")
	if err != nil || rec.Body == nil || *rec.Body != "v2" || rec.State != "locked" || *rec.LockedBy != "Asha" {
		t.Fatalf("get = %+v, %v", rec, err)
	}
	if err := co.Checkin(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "docs", "nothing"); !errors.Is(err, leasehold.ErrNotFound) {
		t.Fatalf("get of nothing: %v", err)
	}
	if _, err := c.Put(ctx, "docs", "42", "again", leasehold.Proof{}); !errors.Is(err, leasehold.ErrExists) {
		t.Fatalf("put twice: %v", err)
	}

	seen := map[string]bool{}
	deadline := time.After(5 * time.Second)
	for !seen["applock.granted"] || !seen["applock.released"] || !seen["record.saved"] {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatal("the watch ended")
			}
			seen[e.Type] = true
		case <-deadline:
			t.Fatalf("events seen: %v", seen)
		}
	}
	w.Close()
}

func TestRefusalsAreTyped(t *testing.T) {
	srv := startServer(t, "")
	c := newClient(t, srv)
	ctx := context.Background()
	s1 := session(t, c, "one", 10*time.Second)
	s2 := session(t, c, "two", 10*time.Second)

	if _, err := s1.Lock(ctx, "app", "A", leasehold.Exclusive); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := s2.Lock(ctx, "app", "A", leasehold.Exclusive, leasehold.WithTimeout(300*time.Millisecond))
	var e *leasehold.Error
	if !errors.Is(err, leasehold.ErrTimeout) || !errors.As(err, &e) || e.Status != 409 || time.Since(start) < 250*time.Millisecond {
		t.Fatalf("timeout: %v", err)
	}

	// A deadlock: s3 holds D1 and waits for D2; s4 holds D2 and asks for D1.
	s3 := session(t, c, "three", 10*time.Second)
	s4 := session(t, c, "four", 10*time.Second)
	if _, err := s3.Lock(ctx, "app", "D1", leasehold.Exclusive); err != nil {
		t.Fatal(err)
	}
	if _, err := s4.Lock(ctx, "app", "D2", leasehold.Exclusive); err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() {
		_, err := s3.Lock(ctx, "app", "D2", leasehold.Exclusive, leasehold.WithTimeout(5*time.Second))
		first <- err
	}()
	time.Sleep(300 * time.Millisecond)
	_, err2 := s4.Lock(ctx, "app", "D1", leasehold.Exclusive, leasehold.WithTimeout(5*time.Second))
	var errs []error
	if err2 != nil {
		errs = append(errs, err2)
	}
	select {
	case err1 := <-first:
		if err1 != nil {
			errs = append(errs, err1)
		}
	case <-time.After(300 * time.Millisecond):
	}
	var d *leasehold.DeadlockError
	found := false
	for _, err := range errs {
		if errors.As(err, &d) && errors.Is(err, leasehold.ErrDeadlock) {
			found = true
		}
	}
	if !found || len(d.Cycle) != 2 {
		t.Fatalf("deadlock: %v", errs)
	}
	ids := map[string]bool{s3.ID(): true, s4.ID(): true}
	for _, edge := range d.Cycle {
		if !ids[edge.Waiter] || !ids[edge.Holder] || (edge.Resource != "D1" && edge.Resource != "D2") {
			t.Fatalf("cycle edge %+v", edge)
		}
	}

	co, err := c.Checkout(ctx, "docs", "k", "Asha", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer co.Checkin(ctx)
	if _, err := c.Checkout(ctx, "docs", "k", "Ben", 30*time.Second); !errors.Is(err, leasehold.ErrLocked) {
		t.Fatalf("locked: %v", err)
	}

	// A stale fence: a newer holder's fence wrote the record first.
	old, err := s1.Lock(ctx, "app", "rec", leasehold.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, "app", "rec", "one", leasehold.Proof{Fence: old.Fence()}); err != nil {
		t.Fatal(err)
	}
	_ = old.Release(ctx)
	newer, err := s2.Lock(ctx, "app", "rec", leasehold.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Save(ctx, "app", "rec", "two", leasehold.Proof{Fence: newer.Fence()}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Save(ctx, "app", "rec", "late", leasehold.Proof{Fence: old.Fence()}); !errors.Is(err, leasehold.ErrStaleFence) {
		t.Fatalf("stale fence: %v", err)
	}
}

func TestSessionEndedByAdministratorIsLost(t *testing.T) {
	srv := startServer(t, "")
	c := newClient(t, srv)
	ctx := context.Background()
	s := session(t, c, "worker", 1500*time.Millisecond)
	lk, err := s.Lock(ctx, "app", "A", leasehold.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := srv.admin("DELETE", "/v1/sessions/"+s.ID(), nil); status != 204 {
		t.Fatalf("DELETE session: %d", status)
	}
	select {
	case <-s.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("the session's loss was not signalled")
	}
	select {
	case <-lk.Lost():
	case <-time.After(time.Second):
		t.Fatal("the lock's loss was not signalled")
	}
	if _, err := s.Lock(ctx, "app", "B", leasehold.Exclusive); !errors.Is(err, leasehold.ErrSessionLost) {
		t.Fatalf("a lock on a lost session: %v", err)
	}
}

func TestABrokenLockIsLostAndItsReleaseSendsNothing(t *testing.T) {
	srv := startServer(t, "")
	c := newClient(t, srv)
	ctx := context.Background()
	s := session(t, c, "worker", 1500*time.Millisecond)
	lk, err := s.Lock(ctx, "app", "job", leasehold.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	slot, err := s.Semaphore(ctx, "app", "lanes", 2)
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := srv.admin("POST", "/v1/applocks/app/break", map[string]any{"session": s.ID(), "resource": "job"}); status != 200 {
		t.Fatalf("break: %d", status)
	}
	select {
	case <-lk.Lost():
	case <-time.After(3 * time.Second):
		t.Fatal("the broken lock's loss was not signalled")
	}
	select {
	case <-slot.Lost():
		t.Fatal("the slot was not broken")
	case <-s.Done():
		t.Fatal("the session was not lost")
	default:
	}
	again, err := s.Lock(ctx, "app", "job", leasehold.Exclusive, leasehold.WithTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.Release(ctx); !errors.Is(err, leasehold.ErrLost) {
		t.Fatalf("the broken lock's release: %v", err)
	}
	if status, doc := srv.admin("GET", "/v1/applocks/app/job", nil); status != 200 {
		t.Fatalf("the lock taken again was released by the broken handle: %d %v", status, doc)
	}
	if err := again.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := slot.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestALockPastItsHoldLimitIsLost(t *testing.T) {
	srv := startServer(t, "")
	c := newClient(t, srv)
	ctx := context.Background()
	s := session(t, c, "worker", 1500*time.Millisecond)
	lk, err := s.Lock(ctx, "app", "nightly", leasehold.Exclusive, leasehold.WithMaxHold(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-lk.Lost():
	case <-time.After(3 * time.Second):
		t.Fatal("the lock past its hold limit was not lost")
	}
	if err := lk.Release(ctx); !errors.Is(err, leasehold.ErrLost) {
		t.Fatalf("its release: %v", err)
	}
}

func TestRenewalKeepsSessionAndCheckoutPastTheirTTL(t *testing.T) {
	srv := startServer(t, "")
	c := newClient(t, srv)
	ctx := context.Background()
	s := session(t, c, "worker", 1500*time.Millisecond)
	lk, err := s.Lock(ctx, "app", "A", leasehold.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	co, err := c.Checkout(ctx, "docs", "1", "Asha", 1500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, "docs", "1", "v1", leasehold.Proof{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second)
	if closed(s.Done()) || closed(lk.Lost()) || closed(co.Lost()) {
		t.Fatal("lost while kept alive")
	}
	if v, err := co.Save(ctx, "v2"); err != nil || v != 2 {
		t.Fatalf("save after the ttl: %d, %v", v, err)
	}
	// A broken lease is reported lost; a later save is ErrLost.
	if status, _ := srv.admin("POST", "/v1/records/docs/1/break", nil); status != 200 {
		t.Fatalf("break: %d", status)
	}
	select {
	case <-co.Lost():
	case <-time.After(3 * time.Second):
		t.Fatal("a broken checkout was not reported lost")
	}
	if _, err := co.Save(ctx, "v3"); !errors.Is(err, leasehold.ErrLost) {
		t.Fatalf("save after loss: %v", err)
	}
	if rec, err := c.Get(ctx, "docs", "1"); err != nil || rec.State != "free" {
		t.Fatalf("the accidental lease was not checked in: %+v %v", rec, err)
	}
}

func TestHeldLockSurvivesKill9(t *testing.T) {
	srv := startServer(t, "")
	c := newClient(t, srv)
	ctx := context.Background()
	s := session(t, c, "worker", 3*time.Second)
	lk, err := s.Lock(ctx, "app", "A", leasehold.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	// B is held before the other session asks for it, so that its wait is
	// the one the restart breaks (asked the other way round, the test hung).
	holdB, err := s.Lock(ctx, "app", "B", leasehold.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	other := session(t, c, "other", 10*time.Second)
	waited := make(chan error, 1)
	go func() { // a wait broken by the restart is ridden through
		l, err := other.Lock(ctx, "app", "B", leasehold.Exclusive, leasehold.WithTimeout(20*time.Second))
		if err == nil && !l.Waited() {
			err = errors.New("not waited")
		}
		waited <- err
	}()
	time.Sleep(300 * time.Millisecond)
	srv.kill9Restart()
	time.Sleep(2 * time.Second)
	if closed(s.Done()) || closed(lk.Lost()) {
		t.Fatal("the restart lost the session")
	}
	third := session(t, c, "third", 10*time.Second)
	if _, err := third.Lock(ctx, "app", "A", leasehold.Exclusive, leasehold.WithTimeout(0)); !errors.Is(err, leasehold.ErrTimeout) {
		t.Fatalf("the held lock after the restart: %v", err)
	}
	if err := holdB.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("the wait across the restart: %v", err)
	}
	if err := lk.Release(ctx); err != nil {
		t.Fatalf("release after the restart: %v", err)
	}
}

func TestCancelledContextEndsTheWait(t *testing.T) {
	srv := startServer(t, "")
	c := newClient(t, srv)
	s1 := session(t, c, "one", 10*time.Second)
	s2 := session(t, c, "two", 10*time.Second)
	if _, err := s1.Lock(context.Background(), "app", "A", leasehold.Exclusive); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := s2.Lock(ctx, "app", "A", leasehold.Exclusive)
	if !errors.Is(err, leasehold.ErrCancelled) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled wait: %v", err)
	}
	// The server cancelled the wait too: nobody waits for A.
	deadline := time.Now().Add(2 * time.Second)
	for {
		_, doc := srv.admin("GET", "/v1/applocks/app", nil)
		locks, _ := doc["locks"].([]any)
		waiting := 0
		for _, l := range locks {
			w, _ := l.(map[string]any)["waiting"].([]any)
			waiting += len(w)
		}
		if waiting == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server still has a waiter: %v", doc)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestMemoryNamespaceLocksLost(t *testing.T) {
	srv := startServer(t, `{"namespaces":{"mem":{"locks":"memory"}}}`)
	c := newClient(t, srv)
	s := session(t, c, "worker", 1500*time.Millisecond)
	if _, err := s.Lock(context.Background(), "mem", "A", leasehold.Exclusive); err != nil {
		t.Fatal(err)
	}
	srv.kill9Restart()
	select {
	case <-s.LocksLost():
	case <-time.After(3 * time.Second):
		t.Fatal("locks_lost was not signalled")
	}
	if closed(s.Done()) {
		t.Fatal("the session was reported lost")
	}
}

func TestUnreachable(t *testing.T) {
	c, err := leasehold.New("http://127.0.0.1:1", leasehold.WithIOTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Session(context.Background(), "x", time.Second)
	if !errors.Is(err, leasehold.ErrUnreachable) || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("unreachable: %v", err)
	}
}
