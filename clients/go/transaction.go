package leasehold

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Transaction is the open transaction of a session (docs/api.md,
// "Transactions"): locks it owns, staged record writes, operation records and
// outbox messages, all applied at once by Commit or none of them. Reads never
// see staged writes.
//
// Every call is sent once: a connection that broke after the request was
// sent is ErrUnreachable (it may or may not have been done; after a Commit
// read the operation or the records to know, never send it again).
// ErrTransactionAborted (transaction_aborted, transaction_expired,
// transaction_lost) means nothing was applied and the transaction is over.
// After Commit or Rollback (or such an error) the handle refuses further calls
// with Code "no_transaction". Commit is explicit: defer Rollback to end it on
// every other path (a Rollback after Commit does nothing).
type Transaction struct {
	s *Session
	// Number is the server's transaction number.
	Number int64
	// Deadline is when max_transaction_ms rolls it back ("": unbounded).
	Deadline string

	mu       sync.Mutex
	finished bool
}

// TransactionLock is an application lock owned by a transaction: its commit
// or rollback releases it.
type TransactionLock struct {
	NS, Resource string
	Fence        int64 // pass it to the writes the lock guards
	Mode         Mode  // the combined mode the session holds
	Count        int
	Waited       bool
}

// Operation is what BeginOperation found in the committed state: State "new",
// or "completed" with the stored Outcome (any JSON) and CompletedAt.
type Operation struct {
	State       string          `json:"state"`
	Outcome     json.RawMessage `json:"outcome"`
	CompletedAt string          `json:"completed_at"`
}

// Completed reports whether the operation was completed before (do nothing again).
func (o *Operation) Completed() bool { return o.State == "completed" }

// Enqueued is an outbox message enqueued (or staged): its ID; Duplicate when
// its key was enqueued before (ID is then the existing message's).
type Enqueued struct {
	ID        int64 `json:"id"`
	Duplicate bool  `json:"duplicate"`
	Staged    bool  `json:"staged"`
}

// Applied is one write a commit applied, in the order staged: Op is insert,
// save, delete (Version for insert and save), complete (Key is the operation
// id) or enqueue (Topic, message ID, Duplicate).
type Applied struct {
	Op        string `json:"op"`
	NS        string `json:"ns"`
	Key       string `json:"key"`
	Version   int64  `json:"version,omitempty"`
	Topic     string `json:"topic,omitempty"`
	ID        int64  `json:"id,omitempty"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

// Message is an outbox message claimed by a consumer: Payload is the JSON
// enqueued, Attempt 1 on the first claim, ClaimToken acks it until
// LeaseExpiresAt.
type Message struct {
	ID             int64           `json:"id"`
	Key            string          `json:"key"`
	Payload        json.RawMessage `json:"payload"`
	Attempt        int             `json:"attempt"`
	ClaimToken     string          `json:"claim_token"`
	LeaseExpiresAt string          `json:"lease_expires_at"`
}

func transactionPath(session, action string) string {
	p := "/v1/sessions/" + seg(session) + "/transaction"
	if action != "" {
		p += "/" + action
	}
	return p
}

// Transaction begins the session's transaction (at most one is open).
// Errors: *Error (Code transaction_open), ErrSessionLost, ErrUnreachable.
func (s *Session) Transaction(ctx context.Context) (*Transaction, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	var doc struct {
		Transaction int64   `json:"transaction"`
		Deadline    *string `json:"deadline"`
	}
	if err := s.noteLoss(s.c.expect(ctx, post(transactionPath(s.id, ""), nil, retryWrite), &doc, 201)); err != nil {
		return nil, err
	}
	tx := &Transaction{s: s, Number: doc.Transaction}
	if doc.Deadline != nil {
		tx.Deadline = *doc.Deadline
	}
	return tx, nil
}

// start checks the handle is still open; last (commit, rollback) ends it
// whatever the answer.
func (tx *Transaction) start(last bool) error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.finished {
		return newError(nil, "no_transaction", 0, "transaction %d is over", tx.Number)
	}
	if last {
		tx.finished = true
	}
	return nil
}

// end notes what err says about the transaction and the session.
func (tx *Transaction) end(err error) error {
	if errors.Is(err, ErrTransactionAborted) || errors.Is(err, ErrSessionLost) {
		tx.mu.Lock()
		tx.finished = true
		tx.mu.Unlock()
	}
	return tx.s.noteLoss(err)
}

// expect sends r once (it is never resent) and decodes the answer into out.
func (tx *Transaction) expect(ctx context.Context, r *request, out any, ok ...int) error {
	if err := tx.start(false); err != nil {
		return err
	}
	return tx.end(tx.s.c.expect(ctx, r, out, ok...))
}

// Lock takes the application lock resource of ns in mode, owned by the
// transaction (commit and rollback release it), waiting up to WithTimeout
// (else as long as it takes, or until ctx ends). Unlike Session.Lock a broken
// wait is not ridden through (a restart loses the transaction): it is
// ErrUnreachable. Errors: ErrTimeout, *DeadlockError, ErrCancelled,
// ErrTransactionAborted, ErrUnreachable, *Error.
func (tx *Transaction) Lock(ctx context.Context, ns, resource string, mode Mode, opts ...AcquireOption) (*TransactionLock, error) {
	cfg := acquireOptions(opts)
	if err := tx.start(false); err != nil {
		return nil, err
	}
	t := target{ns: ns, session: tx.s.id, name: resource, principal: cfg.principal, mode: string(mode), transaction: true}
	status, body, err := tx.s.c.do(ctx, t.request(cfg.timeout, 0), 0)
	if errors.Is(err, errWaitBroken) {
		err = unreachable("unreachable", "the wait broke; the lock may or may not be held")
	}
	if err != nil {
		return nil, tx.end(err)
	}
	g, err := grantFrom(status, body)
	if err != nil {
		return nil, tx.end(err)
	}
	return &TransactionLock{NS: ns, Resource: resource, Fence: g.fence, Mode: Mode(g.mode), Count: max(g.count, 1), Waited: g.waited}, nil
}

// BeginOperation looks the idempotent operation opID of ns up in the
// committed state: new, or completed with its stored outcome (then do
// nothing again).
func (tx *Transaction) BeginOperation(ctx context.Context, ns, opID string) (*Operation, error) {
	path := "/v1/operations/" + seg(ns) + "/" + seg(opID) + "/begin"
	var op Operation
	if err := tx.expect(ctx, post(path, map[string]string{"session": tx.s.id}, retryWrite), &op, 200); err != nil {
		return nil, err
	}
	return &op, nil
}

// CompleteOperation stages the completion of opID with outcome (anything
// encoding/json encodes; a json.RawMessage as it is). ErrExists when it is
// completed already (or earlier in this transaction); another transaction
// completing it first aborts this one's commit.
func (tx *Transaction) CompleteOperation(ctx context.Context, ns, opID string, outcome any) error {
	raw, err := json.Marshal(outcome)
	if err != nil {
		return newError(nil, "bad_request", 0, "the outcome is not JSON: %v", err)
	}
	path := "/v1/operations/" + seg(ns) + "/" + seg(opID) + "/complete"
	doc := map[string]any{"session": tx.s.id, "outcome": json.RawMessage(raw)}
	return tx.expect(ctx, post(path, doc, retryWrite), nil, 200)
}

// Enqueue stages an outbox message (payload: anything encoding/json
// encodes), enqueued at commit. A key enqueued before is not enqueued again
// (Duplicate).
func (tx *Transaction) Enqueue(ctx context.Context, ns, topic, key string, payload any) (*Enqueued, error) {
	if err := tx.start(false); err != nil {
		return nil, err
	}
	e, err := tx.s.c.enqueue(ctx, ns, topic, key, payload, tx.s.id)
	return e, tx.end(err)
}

// Put stages the creation of a record (checked now and again at commit, as
// Client.Put); its version is in the commit's Applied.
func (tx *Transaction) Put(ctx context.Context, ns, key, body string, p Proof) error {
	doc := Proof{Fence: p.Fence}.doc(&body)
	doc["session"] = tx.s.id
	r := &request{method: http.MethodPut, path: recordPath(ns, key), body: encode(doc), retry: retryWrite}
	return tx.expect(ctx, r, nil, 201, 202)
}

// Save stages a save with its proof, as Client.Save (a refusal is an error
// now; one that no longer holds at commit aborts the commit).
func (tx *Transaction) Save(ctx context.Context, ns, key, body string, p Proof) error {
	doc := p.doc(&body)
	doc["session"] = tx.s.id
	return tx.write(ctx, post(recordPath(ns, key)+"/save", doc, retryWrite), "saved")
}

// Delete stages the deletion of a record with its proof, as Client.Delete.
func (tx *Transaction) Delete(ctx context.Context, ns, key string, p Proof) error {
	doc := p.doc(nil)
	doc["session"] = tx.s.id
	r := &request{method: http.MethodDelete, path: recordPath(ns, key), body: encode(doc), retry: retryWrite}
	return tx.write(ctx, r, "deleted")
}

func (tx *Transaction) write(ctx context.Context, r *request, flag string) error {
	if err := tx.start(false); err != nil {
		return err
	}
	status, data, err := tx.s.c.do(ctx, r, 0)
	if err == nil && status != http.StatusOK && status != http.StatusAccepted {
		err = writeRefusal(status, data, flag)
	}
	return tx.end(err)
}

// Commit applies every staged write at once and releases the transaction's
// locks; it answers what was applied, in the order staged.
// ErrTransactionAborted: a staged write no longer held (nothing applied);
// ErrUnreachable: the answer was lost (it may have committed: read the
// operation or the records to know).
func (tx *Transaction) Commit(ctx context.Context) ([]Applied, error) {
	if err := tx.start(true); err != nil {
		return nil, err
	}
	var doc struct {
		Applied []Applied `json:"applied"`
	}
	if err := tx.end(tx.s.c.expect(ctx, post(transactionPath(tx.s.id, "commit"), nil, retryWrite), &doc, 200)); err != nil {
		return nil, err
	}
	return doc.Applied, nil
}

// Rollback drops every staged write and releases the transaction's locks.
// After Commit, Rollback or an ErrTransactionAborted it does nothing and
// answers nil, so it may be deferred.
func (tx *Transaction) Rollback(ctx context.Context) error {
	tx.mu.Lock()
	if tx.finished {
		tx.mu.Unlock()
		return nil
	}
	tx.finished = true
	tx.mu.Unlock()
	err := tx.end(tx.s.c.expect(ctx, post(transactionPath(tx.s.id, "rollback"), nil, retryWrite), nil, 200))
	var e *Error
	if errors.As(err, &e) && (e.Code == "no_transaction" || errors.Is(err, ErrTransactionAborted)) {
		return nil // there is no transaction any more: nothing to roll back
	}
	return err
}

func (c *Client) enqueue(ctx context.Context, ns, topic, key string, payload any, session string) (*Enqueued, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, newError(nil, "bad_request", 0, "the payload is not JSON: %v", err)
	}
	doc := map[string]any{"key": key, "payload": json.RawMessage(raw)}
	if session != "" {
		doc["session"] = session
	}
	var e Enqueued
	if err := c.expect(ctx, post("/v1/outbox/"+seg(ns)+"/"+seg(topic), doc, retryWrite), &e, 201, 200); err != nil {
		return nil, err
	}
	return &e, nil
}

// Enqueue enqueues an outbox message at once, outside any transaction (sent
// once). A key enqueued before is not enqueued again (Duplicate).
func (c *Client) Enqueue(ctx context.Context, ns, topic, key string, payload any) (*Enqueued, error) {
	return c.enqueue(ctx, ns, topic, key, payload, "")
}

// Claim leases up to max (1..1000) pending messages of topic to consumer for
// lease, under one claim token; it answers them oldest first (maybe none).
// Sent once: a break is ErrUnreachable (the messages come back when the lease
// runs out). Perform each effect idempotently (by its Key), then Ack it.
func (c *Client) Claim(ctx context.Context, ns, topic, consumer string, max int, lease time.Duration) ([]Message, error) {
	doc := map[string]any{"consumer": consumer, "max": max, "lease_ms": ms(lease)}
	var out struct {
		Messages []Message `json:"messages"`
	}
	if err := c.expect(ctx, post("/v1/outbox/"+seg(ns)+"/"+seg(topic)+"/claim", doc, retryWrite), &out, 200); err != nil {
		return nil, err
	}
	return out.Messages, nil
}

// Ack acks a claimed message once its effect is done. A repeated ack is
// harmless (and is sent again after a break). Errors: ErrLost (Code
// not_owner or expired) when the claim ran out or the message was claimed
// again, ErrNotFound for an unknown id.
func (c *Client) Ack(ctx context.Context, ns, topic string, m Message) error {
	doc := map[string]any{"id": m.ID, "claim_token": m.ClaimToken}
	status, body, err := c.do(ctx, post("/v1/outbox/"+seg(ns)+"/"+seg(topic)+"/ack", doc, retryIdempotent), 0)
	if err != nil {
		return err
	}
	switch status {
	case http.StatusOK:
		return nil
	case http.StatusLocked:
		var doc struct {
			Reason string `json:"reason"`
		}
		reason := "not_owner"
		if unmarshal(body, &doc) == nil && doc.Reason != "" {
			reason = doc.Reason
		} else if e := apiError(status, body); !strings.HasPrefix(e.Code, "http_") {
			reason = e.Code
		}
		return newError(ErrLost, reason, status, "the claim is no longer ours (%s)", reason)
	}
	return apiError(status, body)
}
