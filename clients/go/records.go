package leasehold

import (
	"context"
	"net/http"
)

// Proof is what a write shows for its right to write: a lock's Fence, a
// checkout's Token, or an Owner name (any may be zero: left out). IfVersion,
// when not 0, makes a save conditional on the record's version.
type Proof struct {
	Fence     int64
	Token     string
	Owner     string
	IfVersion int64
}

func (p Proof) doc(body *string) map[string]any {
	doc := map[string]any{}
	if p.Fence != 0 {
		doc["fence"] = p.Fence
	}
	if p.Token != "" {
		doc["token"] = p.Token
	}
	if p.Owner != "" {
		doc["owner"] = p.Owner
	}
	if p.IfVersion != 0 {
		doc["if_version"] = p.IfVersion
	}
	if body != nil {
		doc["body"] = *body
	}
	return doc
}

// Record is a record or a lease-only key, as GET /v1/records/{ns}/{key} answers it.
type Record struct {
	Key           string  `json:"key"`
	Version       int64   `json:"version"`
	Body          *string `json:"body"` // nil for a lease-only key
	State         string  `json:"state"`
	LockedBy      *string `json:"locked_by"`
	LockExpiresAt *string `json:"lock_expires_at"`
	Fence         int64   `json:"fence"`
	WriteFence    int64   `json:"write_fence"`
	HasRecord     bool    `json:"has_record"`
}

func recordPath(ns, key string) string { return "/v1/records/" + seg(ns) + "/" + seg(key) }

// Put creates a record (version 1), with p.Fence when given.
// Errors: ErrExists, ErrStaleFence, *Error.
func (c *Client) Put(ctx context.Context, ns, key, body string, p Proof) (int64, error) {
	r := &request{method: http.MethodPut, path: recordPath(ns, key), body: encode(Proof{Fence: p.Fence}.doc(&body)), retry: retryWrite}
	var doc struct {
		Version int64 `json:"version"`
	}
	if err := c.expect(ctx, r, &doc, 201, 202); err != nil {
		return 0, err
	}
	return doc.Version, nil
}

// Get reads a record. Errors: ErrNotFound, *Error.
func (c *Client) Get(ctx context.Context, ns, key string) (*Record, error) {
	var rec Record
	if err := c.expect(ctx, get(recordPath(ns, key)), &rec, 200); err != nil {
		return nil, err
	}
	return &rec, nil
}

// Save saves a record's body with proof p (a fence alone is a fenced write)
// and answers the new version. Errors: ErrStaleFence, ErrRefused (Code
// not_owner, expired, version_mismatch, token_required), ErrNotFound, *Error.
func (c *Client) Save(ctx context.Context, ns, key, body string, p Proof) (int64, error) {
	status, data, err := c.do(ctx, post(recordPath(ns, key)+"/save", p.doc(&body), retryWrite), 0)
	if err != nil {
		return 0, err
	}
	if status != http.StatusOK && status != http.StatusAccepted {
		return 0, writeRefusal(status, data, "saved")
	}
	var doc struct {
		Version int64 `json:"version"`
	}
	if err := decode(data, &doc); err != nil {
		return 0, err
	}
	return doc.Version, nil
}

// Delete deletes a record with proof p. Errors as Save.
func (c *Client) Delete(ctx context.Context, ns, key string, p Proof) error {
	r := &request{method: http.MethodDelete, path: recordPath(ns, key), body: encode(p.doc(nil)), retry: retryWrite}
	status, data, err := c.do(ctx, r, 0)
	if err != nil {
		return err
	}
	if status != http.StatusOK && status != http.StatusAccepted {
		return writeRefusal(status, data, "deleted")
	}
	return nil
}

// writeRefusal is the error of a refused write: {"saved":false,"reason"} is ErrRefused.
func writeRefusal(status int, body []byte, flag string) error {
	if status == http.StatusPreconditionFailed || status == http.StatusLocked {
		var doc map[string]any
		if unmarshal(body, &doc) == nil && doc[flag] == false {
			reason, _ := doc["reason"].(string)
			if reason == "" {
				reason = "refused"
			}
			return newError(ErrRefused, reason, status, "%s refused: %s", flag, reason)
		}
	}
	return apiError(status, body)
}
