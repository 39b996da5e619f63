package leasehold

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
)

// target is what a lock or semaphore request asks for, to find it in the
// holdings after a break. mode is empty for a semaphore.
type target struct {
	ns, session, name, principal, mode string
	permits                            int
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
		doc := map[string]any{"session": t.session, "resource": t.name, "mode": t.mode,
			"owner": "Session", "timeout_ms": ms(left), "principal": t.principal}
		r := post("/v1/applocks/"+seg(t.ns)+"/acquire", doc, retryLock)
		r.wait = left
		return r
	}
	doc := map[string]any{"session": t.session, "limit": limit, "permits": t.permits,
		"owner": "Session", "timeout_ms": ms(left), "principal": t.principal}
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
		if err := decode(body, &doc); err != nil {
			return grant{}, err
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
		if !c.waitHealthy(ctx, until) {
			if ctx.Err() != nil {
				return grant{}, ctxError(ctx.Err())
			}
			return grant{}, unreachable("unreachable", "no server came back in time")
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
