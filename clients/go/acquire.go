package leasehold

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// target is what a lock or semaphore request asks for, to find it in the
// holdings after a break. mode is empty for a semaphore.
type target struct {
	ns, session, name, principal, mode string
	permits                            int
	transaction                        bool          // owned by the session's transaction
	maxHold                            time.Duration // 0: the namespace's hold limit
}

func (t *target) owner() string {
	if t.transaction {
		return "Transaction"
	}
	return "Session"
}

type grant struct {
	fence   int64
	mode    string
	count   int
	permits int
	waited  bool
}

func (t *target) request(left time.Duration, limit int) *request {
	if t.mode != "" {
		return &request{method: http.MethodPost, path: "/v1/applocks/" + seg(t.ns) + "/acquire",
			body: lockBody(t.session, t.name, t.mode, t.owner(), t.principal, ms(left), t.maxHold.Milliseconds()), retry: retryLock, wait: left}
	}
	doc := map[string]any{"session": t.session, "limit": limit, "permits": t.permits,
		"owner": t.owner(), "timeout_ms": ms(left), "principal": t.principal}
	if t.maxHold > 0 {
		doc["max_hold_ms"] = t.maxHold.Milliseconds()
	}
	r := post("/v1/semaphores/"+seg(t.ns)+"/"+seg(t.name)+"/acquire", doc, retryLock)
	r.wait = left
	return r
}

type grantDoc struct {
	Result   *int   `json:"result"`
	Fence    int64  `json:"fence"`
	Mode     string `json:"mode"`
	Count    int    `json:"count"`
	Permits  int    `json:"permits"`
	Deadlock *struct {
		Victim idString    `json:"victim"`
		Cycle  []CycleEdge `json:"cycle"`
	} `json:"deadlock"`
}

// grantFrom answers the grant of a lock or semaphore answer, or its refusal.
func grantFrom(status int, body []byte) (grant, error) {
	var doc grantDoc
	if status == http.StatusOK {
		if !parseFlatGrant(body, &doc) {
			doc = grantDoc{}
			if err := decode(body, &doc); err != nil {
				return grant{}, err
			}
		}
		return grant{fence: doc.Fence, mode: doc.Mode, count: doc.Count, permits: doc.Permits,
			waited: doc.Result != nil && *doc.Result == 1}, nil
	}
	if status == http.StatusConflict && unmarshal(body, &doc) == nil && doc.Result != nil {
		switch *doc.Result {
		case -1:
			return grant{}, newError(ErrTimeout, "timeout", status, "not granted within the timeout")
		case -2:
			return grant{}, newError(ErrCancelled, "cancelled", status, "the wait was cancelled")
		case -3:
			d := &DeadlockError{Err: newError(ErrDeadlock, "deadlock", status, "chosen as the deadlock victim")}
			if doc.Deadlock != nil {
				d.Victim, d.Cycle = string(doc.Deadlock.Victim), doc.Deadlock.Cycle
			}
			return grant{}, d
		}
	}
	return grant{}, apiError(status, body)
}

// acquire takes a lock (t.mode) or permits for the session, riding through a
// restart or failover (docs/client.md, "Restarts"). timeout < 0: without limit.
func (c *Client) acquire(ctx context.Context, t target, timeout time.Duration, heldAlready bool, limit int) (grant, error) {
	var lockDeadline time.Time
	if timeout >= 0 {
		lockDeadline = time.Now().Add(timeout)
	}
	left := timeout
	for {
		status, body, err := c.do(ctx, t.request(left, limit), 0)
		if err == nil {
			return grantFrom(status, body)
		}
		if !errors.Is(err, errWaitBroken) {
			return grant{}, err
		}
		if heldAlready || left == 0 { // sent once: the session may hold it twice
			return grant{}, unreachable("unreachable", "the wait broke; the lock may or may not be held")
		}
		until := time.Now().Add(c.io)
		if !lockDeadline.IsZero() {
			until = lockDeadline.Add(c.io)
		}
		if err := c.waitHealthy(ctx, until); err != nil {
			return grant{}, err
		}
		g, holds, err := c.readHoldings(ctx, t)
		if err != nil {
			return grant{}, err
		}
		switch holds {
		case holdsIt:
			return g, nil
		case holdsOther:
			return grant{}, unreachable("unreachable", "the wait broke and the session holds another grant")
		}
		if !lockDeadline.IsZero() {
			left = max(0, time.Until(lockDeadline))
		}
	}
}

type holding int

const (
	holdsNone holding = iota
	holdsIt
	holdsOther
)

// readHoldings answers, after a break, whether the session holds what t asked for.
func (c *Client) readHoldings(ctx context.Context, t target) (grant, holding, error) {
	type holder struct {
		Session idString `json:"session"`
		Owner   string   `json:"owner"`
		Mode    string   `json:"mode"`
		Count   int      `json:"count"`
		Permits int      `json:"permits"`
		Fence   int64    `json:"fence"`
	}
	if t.mode != "" {
		var doc struct {
			Locks []struct {
				Resource  string   `json:"resource"`
				Principal string   `json:"principal"`
				Granted   []holder `json:"granted"`
			} `json:"locks"`
		}
		if err := c.expect(ctx, get("/v1/applocks/"+seg(t.ns)), &doc, 200); err != nil {
			return grant{}, holdsNone, err
		}
		for _, e := range doc.Locks {
			if e.Resource != t.name || !strings.EqualFold(e.Principal, t.principal) {
				continue
			}
			for _, h := range e.Granted {
				if string(h.Session) == t.session && h.Owner == "Session" {
					if h.Mode != t.mode {
						return grant{}, holdsOther, nil
					}
					return grant{fence: h.Fence, mode: h.Mode, count: max(h.Count, 1), waited: true}, holdsIt, nil
				}
			}
		}
		return grant{}, holdsNone, nil
	}
	path := "/v1/semaphores/" + seg(t.ns) + "/" + seg(t.name) + "?principal=" + seg(t.principal)
	status, body, err := c.do(ctx, get(path), 0)
	if err != nil {
		return grant{}, holdsNone, err
	}
	if status == http.StatusNotFound {
		return grant{}, holdsNone, nil
	}
	if status != http.StatusOK {
		return grant{}, holdsNone, apiError(status, body)
	}
	var doc struct {
		Holders []holder `json:"holders"`
	}
	if err := decode(body, &doc); err != nil {
		return grant{}, holdsNone, err
	}
	for _, h := range doc.Holders {
		if string(h.Session) == t.session && h.Owner == "Session" {
			if h.Permits != t.permits {
				return grant{}, holdsOther, nil
			}
			return grant{fence: h.Fence, permits: t.permits, waited: true}, holdsIt, nil
		}
	}
	return grant{}, holdsNone, nil
}

// parseFlatGrant decodes a grant answer that is one flat object of scalars
// (the usual {"result":0,"status":"granted","fence":..,"mode":..,"count":..})
// without encoding/json. It answers false for anything else (nested values,
// escapes, bad JSON): decode it with encoding/json then.
func parseFlatGrant(b []byte, doc *grantDoc) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		key, j, ok := flatString(b, i)
		if !ok {
			return false
		}
		i = skipSpace(b, j)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '"':
			val, j, ok := flatString(b, i)
			if !ok {
				return false
			}
			if key == "mode" {
				doc.Mode = val
			} else if key == "result" || key == "fence" || key == "count" || key == "permits" || key == "deadlock" {
				return false
			}
			i = j
		case c == '-' || (c >= '0' && c <= '9'):
			j := i + 1
			for j < len(b) && (b[j] >= '0' && b[j] <= '9') {
				j++
			}
			if j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
				return false
			}
			digits := b[i:j]
			if digits[0] == '-' {
				digits = digits[1:]
			}
			n, err := strconv.ParseInt(string(b[i:j]), 10, 64)
			if err != nil || len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
				return false
			}
			switch key {
			case "result":
				r := int(n)
				doc.Result = &r
			case "fence":
				doc.Fence = n
			case "count":
				doc.Count = int(n)
			case "permits":
				doc.Permits = int(n)
			case "mode", "deadlock":
				return false
			}
			i = j
		default:
			var lit string
			for _, l := range []string{"true", "false", "null"} {
				if len(b)-i >= len(l) && string(b[i:i+len(l)]) == l {
					lit = l
				}
			}
			if lit == "" || (lit != "null" && (key == "result" || key == "fence" || key == "count" || key == "permits" || key == "mode")) {
				return false
			}
			if lit == "null" && key == "result" {
				doc.Result = nil
			}
			i += len(lit)
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return skipSpace(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return false
		}
		i = skipSpace(b, i+1)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// flatString reads a JSON string at b[i] that has no escapes and is printable
// ASCII; ok is false otherwise.
func flatString(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", i, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return string(b[i+1 : j]), j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return "", j, false
		}
	}
	return "", len(b), false
}
