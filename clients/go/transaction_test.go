package leasehold_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	leasehold "github.com/leasehold/leasehold/clients/go"
)

// finalize is the README's walkthrough: the invoice is finalized (its record
// saved, its operation completed, a message enqueued) in one transaction
// under a transaction-owned lock; a second attempt finds the operation
// completed and does nothing.
func finalize(ctx context.Context, s *leasehold.Session, invoice string) (done bool, err error) {
	tx, err := s.Transaction(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(ctx) // does nothing after Commit
	lock, err := tx.Lock(ctx, "billing", "invoice:"+invoice, leasehold.Exclusive)
	if err != nil {
		return false, err
	}
	op, err := tx.BeginOperation(ctx, "billing", "finalize:"+invoice)
	if err != nil {
		return false, err
	}
	if op.Completed() {
		return false, nil
	}
	if err := tx.Save(ctx, "billing", "invoice:"+invoice, `{"state":"final"}`, leasehold.Proof{Fence: lock.Fence}); err != nil {
		return false, err
	}
	if err := tx.CompleteOperation(ctx, "billing", "finalize:"+invoice, map[string]any{"total": 120}); err != nil {
		return false, err
	}
	if _, err := tx.Enqueue(ctx, "billing", "emails", "invoice-final:"+invoice, map[string]string{"invoice": invoice}); err != nil {
		return false, err
	}
	if _, err := tx.Commit(ctx); err != nil {
		return false, err
	}
	return true, nil
}

func TestInvoiceFinalizedExactlyOnce(t *testing.T) {
	srv := startServer(t, "")
	c := newClient(t, srv)
	ctx := context.Background()
	if _, err := c.Put(ctx, "billing", "invoice:481", `{"state":"draft"}`, leasehold.Proof{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	finalized := 0
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := session(t, c, fmt.Sprintf("worker-%d", i), 10*time.Second)
			done, err := finalize(ctx, s, "481")
			if err != nil {
				t.Errorf("worker %d: %v", i, err)
			}
			if done {
				mu.Lock()
				finalized++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if finalized != 1 {
		t.Fatalf("finalized %d times", finalized)
	}
	rec, err := c.Get(ctx, "billing", "invoice:481")
	if err != nil || rec.Body == nil || *rec.Body != `{"state":"final"}` || rec.Version != 2 {
		t.Fatalf("record %+v %v", rec, err)
	}
	// The outcome is stored; the message is there once.
	s := session(t, c, "reader", 10*time.Second)
	tx, err := s.Transaction(ctx)
	if err != nil {
		t.Fatal(err)
	}
	op, err := tx.BeginOperation(ctx, "billing", "finalize:481")
	if err != nil || !op.Completed() || string(op.Outcome) != `{"total":120}` || op.CompletedAt == "" {
		t.Fatalf("operation %+v %v", op, err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.BeginOperation(ctx, "billing", "x"); err == nil || err.(*leasehold.Error).Code != "no_transaction" {
		t.Fatalf("a call after rollback: %v", err)
	}
	msgs, err := c.Claim(ctx, "billing", "emails", "mailer", 10, 30*time.Second)
	if err != nil || len(msgs) != 1 || msgs[0].Key != "invoice-final:481" {
		t.Fatalf("claim %+v %v", msgs, err)
	}
}

func TestTransactionRollbackAndCommitAnswers(t *testing.T) {
	srv := startServer(t, "")
	c := newClient(t, srv)
	ctx := context.Background()
	s := session(t, c, "tx", 10*time.Second)
	other := session(t, c, "other", 10*time.Second)

	tx, err := s.Transaction(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Number == 0 {
		t.Fatal("no transaction number")
	}
	if _, err := s.Transaction(ctx); err == nil || err.(*leasehold.Error).Code != "transaction_open" {
		t.Fatalf("a second transaction: %v", err)
	}
	lock, err := tx.Lock(ctx, "app", "res", leasehold.Exclusive, leasehold.WithTimeout(0))
	if err != nil || lock.Fence == 0 || lock.Mode != leasehold.Exclusive || lock.Count != 1 {
		t.Fatalf("lock %+v %v", lock, err)
	}
	if _, err := other.Lock(ctx, "app", "res", leasehold.Exclusive, leasehold.WithTimeout(0)); !errors.Is(err, leasehold.ErrTimeout) {
		t.Fatalf("the transaction's lock is not held: %v", err)
	}
	if err := tx.Put(ctx, "app", "k", "v1", leasehold.Proof{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Enqueue(ctx, "app", "topic", "m1", 7); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "app", "k"); !errors.Is(err, leasehold.ErrNotFound) {
		t.Fatalf("a staged put is visible: %v", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("a second rollback: %v", err)
	}
	if _, err := c.Get(ctx, "app", "k"); !errors.Is(err, leasehold.ErrNotFound) {
		t.Fatalf("a rolled back put was applied: %v", err)
	}
	if msgs, err := c.Claim(ctx, "app", "topic", "x", 10, time.Second); err != nil || len(msgs) != 0 {
		t.Fatalf("a rolled back message: %+v %v", msgs, err)
	}
	l2, err := other.Lock(ctx, "app", "res", leasehold.Exclusive, leasehold.WithTimeout(0))
	if err != nil {
		t.Fatalf("rollback did not release the lock: %v", err)
	}
	_ = l2.Release(ctx)

	// Commit answers what it applied, in order.
	tx, err = s.Transaction(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Put(ctx, "app", "k", "v1", leasehold.Proof{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Enqueue(ctx, "app", "topic", "m2", []int{1}); err != nil {
		t.Fatal(err)
	}
	applied, err := tx.Commit(ctx)
	if err != nil || len(applied) != 2 || applied[0].Op != "insert" || applied[0].Version != 1 || applied[1].Op != "enqueue" || applied[1].ID == 0 {
		t.Fatalf("commit %+v %v", applied, err)
	}
	if _, err := tx.Commit(ctx); err == nil || err.(*leasehold.Error).Code != "no_transaction" {
		t.Fatalf("a second commit: %v", err)
	}

	// A staged write that no longer holds at commit aborts it: nothing applied.
	tx, err = s.Transaction(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fl, err := other.Lock(ctx, "app", "k", leasehold.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Save(ctx, "app", "k", "v2", leasehold.Proof{Fence: fl.Fence(), IfVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Delete(ctx, "app", "k", leasehold.Proof{}); err == nil || err.(*leasehold.Error).Code != "bad_request" {
		t.Fatalf("a delete without proof: %v", err) // refused when staged; the transaction stays open
	}
	if _, err := c.Save(ctx, "app", "k", "meanwhile", leasehold.Proof{Fence: fl.Fence()}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); !errors.Is(err, leasehold.ErrTransactionAborted) {
		t.Fatalf("commit after the version moved: %v", err)
	}
	if rec, err := c.Get(ctx, "app", "k"); err != nil || *rec.Body != "meanwhile" {
		t.Fatalf("record %+v %v", rec, err)
	}
	if _, err := s.Transaction(ctx); err != nil {
		t.Fatalf("a new transaction after an abort: %v", err)
	}
}

func TestClaimAndAck(t *testing.T) {
	srv := startServer(t, "")
	c := newClient(t, srv)
	ctx := context.Background()
	e, err := c.Enqueue(ctx, "shop", "orders", "order-1", map[string]int{"n": 1})
	if err != nil || e.ID == 0 || e.Duplicate {
		t.Fatalf("enqueue %+v %v", e, err)
	}
	if d, err := c.Enqueue(ctx, "shop", "orders", "order-1", 2); err != nil || !d.Duplicate || d.ID != e.ID {
		t.Fatalf("a repeated key %+v %v", d, err)
	}
	msgs, err := c.Claim(ctx, "shop", "orders", "worker", 10, 30*time.Second)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("claim %+v %v", msgs, err)
	}
	m := msgs[0]
	var payload map[string]int
	if json.Unmarshal(m.Payload, &payload) != nil || payload["n"] != 1 || m.Attempt != 1 || m.ClaimToken == "" || m.ID != e.ID {
		t.Fatalf("message %+v", m)
	}
	if again, err := c.Claim(ctx, "shop", "orders", "worker2", 10, 30*time.Second); err != nil || len(again) != 0 {
		t.Fatalf("claimed twice: %+v %v", again, err)
	}
	bad := m
	bad.ClaimToken = "not-the-token"
	if err := c.Ack(ctx, "shop", "orders", bad); !errors.Is(err, leasehold.ErrLost) {
		t.Fatalf("ack with another token: %v", err)
	}
	if err := c.Ack(ctx, "shop", "orders", m); err != nil {
		t.Fatal(err)
	}
	if err := c.Ack(ctx, "shop", "orders", m); err != nil {
		t.Fatalf("a repeated ack: %v", err)
	}
	unknown := m
	unknown.ID = 999999
	if err := c.Ack(ctx, "shop", "orders", unknown); !errors.Is(err, leasehold.ErrNotFound) {
		t.Fatalf("ack of an unknown id: %v", err)
	}
}
