// Command driver is the Go client's conformance driver
// (clients/conformance/PROTOCOL.md): JSON lines on stdin, answers and events
// on stdout. Each request runs on a goroutine of its own; the driver only
// translates, every behaviour is the client's.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	leasehold "github.com/leasehold/leasehold/clients/go"
)

type obj = map[string]any

type driverError struct{ msg string }

func (e *driverError) Error() string { return e.msg }

type driver struct {
	outMu   sync.Mutex
	out     *bufio.Writer
	mu      sync.Mutex
	client  *leasehold.Client
	handles map[string]any
}

func (d *driver) write(v obj) {
	line, err := json.Marshal(v)
	if err != nil {
		line, _ = json.Marshal(obj{"id": v["id"], "error": obj{"kind": "driver", "message": err.Error()}})
	}
	d.outMu.Lock()
	defer d.outMu.Unlock()
	d.out.Write(line)
	d.out.WriteByte('\n')
	d.out.Flush()
}

// kinds by sentinel, most specific first.
var kinds = []struct {
	err  error
	kind string
}{
	{leasehold.ErrTimeout, "timeout"},
	{leasehold.ErrDeadlock, "deadlock"},
	{leasehold.ErrCancelled, "cancelled"},
	{leasehold.ErrLocked, "locked"},
	{leasehold.ErrSessionLost, "session_lost"},
	{leasehold.ErrLost, "lost"},
	{leasehold.ErrStaleFence, "stale_fence"},
	{leasehold.ErrUnreachable, "unreachable"},
}

func errorJSON(err error) obj {
	var de *driverError
	if errors.As(err, &de) {
		return obj{"kind": "driver", "code": "driver", "status": 0, "message": err.Error()}
	}
	out := obj{"kind": "error", "code": "error", "status": 0, "message": err.Error()}
	var e *leasehold.Error
	if errors.As(err, &e) {
		out["code"], out["status"], out["message"] = e.Code, e.Status, e.Message
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			out["kind"] = k.kind
			break
		}
	}
	var dl *leasehold.DeadlockError
	if errors.As(err, &dl) {
		cycle := []obj{}
		for _, c := range dl.Cycle {
			cycle = append(cycle, obj{"waiter": c.Waiter, "holder": c.Holder, "resource": c.Resource})
		}
		out["cycle"] = cycle
	}
	return out
}

func (d *driver) signal(ch <-chan struct{}, kind, of string) {
	go func() {
		<-ch
		d.write(obj{"event": kind, "of": of})
	}()
}

func (d *driver) put(name string, h any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.handles[name] = h
}

func handle[T any](d *driver, req obj, field string) (T, error) {
	var zero T
	name, _ := req[field].(string)
	d.mu.Lock()
	h, ok := d.handles[name]
	d.mu.Unlock()
	if !ok {
		return zero, &driverError{fmt.Sprintf("unknown handle %q", name)}
	}
	t, ok := h.(T)
	if !ok {
		return zero, &driverError{fmt.Sprintf("handle %q is a %T", name, h)}
	}
	return t, nil
}

func str(req obj, k string) string { s, _ := req[k].(string); return s }

func num(req obj, k string, def int64) int64 {
	if f, ok := req[k].(float64); ok {
		return int64(f)
	}
	return def
}

func millis(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func acquireOpts(req obj) []leasehold.AcquireOption {
	var opts []leasehold.AcquireOption
	if t := num(req, "timeout_ms", -1); t >= 0 {
		opts = append(opts, leasehold.WithTimeout(millis(t)))
	}
	return opts
}

func (d *driver) op(ctx context.Context, req obj) (obj, error) {
	op := str(req, "op")
	if op == "client" {
		var opts []leasehold.Option
		if io := num(req, "io_timeout_ms", 0); io > 0 {
			opts = append(opts, leasehold.WithIOTimeout(millis(io)))
		}
		c, err := leasehold.New(str(req, "url"), opts...)
		if err != nil {
			return nil, err
		}
		d.mu.Lock()
		d.client = c
		d.mu.Unlock()
		return obj{}, nil
	}
	d.mu.Lock()
	c := d.client
	d.mu.Unlock()
	if c == nil {
		return nil, &driverError{"no client op yet"}
	}
	as := str(req, "as")
	switch op {
	case "session":
		s, err := c.Session(ctx, str(req, "name"), millis(num(req, "ttl_ms", 30000)))
		if err != nil {
			return nil, err
		}
		d.put(as, s)
		d.signal(s.Done(), "lost", as)
		d.signal(s.LocksLost(), "locks_lost", as)
		return obj{"session": s.ID()}, nil
	case "end_session":
		s, err := handle[*leasehold.Session](d, req, "session")
		if err != nil {
			return nil, err
		}
		return obj{}, s.Close()
	case "lock":
		s, err := handle[*leasehold.Session](d, req, "session")
		if err != nil {
			return nil, err
		}
		lk, err := s.Lock(ctx, str(req, "ns"), str(req, "resource"), leasehold.Mode(str(req, "mode")), acquireOpts(req)...)
		if err != nil {
			return nil, err
		}
		d.put(as, lk)
		d.signal(lk.Lost(), "lost", as)
		return obj{"fence": lk.Fence(), "mode": string(lk.Mode()), "waited": lk.Waited()}, nil
	case "semaphore":
		s, err := handle[*leasehold.Session](d, req, "session")
		if err != nil {
			return nil, err
		}
		opts := append(acquireOpts(req), leasehold.WithPermits(int(num(req, "permits", 1))))
		sl, err := s.Semaphore(ctx, str(req, "ns"), str(req, "name"), int(num(req, "limit", 1)), opts...)
		if err != nil {
			return nil, err
		}
		d.put(as, sl)
		d.signal(sl.Lost(), "lost", as)
		return obj{"fence": sl.Fence(), "permits": sl.Permits(), "waited": sl.Waited()}, nil
	case "release":
		h, err := handle[interface{ Release(context.Context) error }](d, req, "handle")
		if err != nil {
			return nil, err
		}
		return obj{}, h.Release(ctx)
	case "checkout":
		co, err := c.Checkout(ctx, str(req, "ns"), str(req, "key"), str(req, "owner"), millis(num(req, "ttl_ms", 300000)))
		if err != nil {
			return nil, err
		}
		d.put(as, co)
		d.signal(co.Lost(), "lost", as)
		return obj{"token": co.Token(), "fence": co.Fence()}, nil
	case "save":
		co, err := handle[*leasehold.Checkout](d, req, "handle")
		if err != nil {
			return nil, err
		}
		v, err := co.Save(ctx, str(req, "body"))
		return obj{"version": v}, err
	case "checkin":
		co, err := handle[*leasehold.Checkout](d, req, "handle")
		if err != nil {
			return nil, err
		}
		return obj{}, co.Checkin(ctx)
	case "put":
		v, err := c.Put(ctx, str(req, "ns"), str(req, "key"), str(req, "body"), leasehold.Proof{})
		return obj{"version": v}, err
	case "get":
		r, err := c.Get(ctx, str(req, "ns"), str(req, "key"))
		if err != nil {
			return nil, err
		}
		return obj{"body": r.Body, "version": r.Version, "locked_by": r.LockedBy, "state": r.State}, nil
	case "fenced_save":
		v, err := c.Save(ctx, str(req, "ns"), str(req, "key"), str(req, "body"), leasehold.Proof{Fence: num(req, "fence", 0)})
		return obj{"version": v}, err
	case "watch":
		w, err := c.Watch(ctx, str(req, "ns"))
		if err != nil {
			return nil, err
		}
		d.put(as, w)
		go d.pump(w, as)
		return obj{}, nil
	case "stop_watch":
		w, err := handle[*leasehold.Watch](d, req, "handle")
		if err != nil {
			return nil, err
		}
		w.Close()
		return obj{}, nil
	}
	return nil, &driverError{fmt.Sprintf("unknown op %q", op)}
}

func (d *driver) pump(w *leasehold.Watch, name string) {
	for e, err := range w.Events() {
		if err != nil {
			d.write(obj{"event": "watch_end", "of": name, "error": errorJSON(err)})
			return
		}
		d.write(obj{"event": "watch", "of": name, "type": e.Type, "data": e.Data})
	}
	d.write(obj{"event": "watch_end", "of": name, "error": nil})
}

func (d *driver) run(ctx context.Context, req obj) {
	ok, err := d.op(ctx, req)
	if err != nil {
		d.write(obj{"id": req["id"], "error": errorJSON(err)})
		return
	}
	d.write(obj{"id": req["id"], "ok": ok})
}

func (d *driver) closeAll() {
	d.mu.Lock()
	handles := d.handles
	d.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, h := range handles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch h := h.(type) {
			case *leasehold.Checkout:
				_ = h.Checkin(ctx)
			case *leasehold.Watch:
				h.Close()
			case *leasehold.Session:
				_ = h.Close()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func main() {
	d := &driver{out: bufio.NewWriter(os.Stdout), handles: map[string]any{}}
	ctx := context.Background()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	for in.Scan() {
		line := in.Bytes()
		if len(line) == 0 {
			continue
		}
		var req obj
		if err := json.Unmarshal(line, &req); err != nil {
			d.write(obj{"id": nil, "error": obj{"kind": "driver", "message": err.Error()}})
			continue
		}
		if str(req, "op") == "client" { // first, before anything that needs it
			d.run(ctx, req)
			continue
		}
		go d.run(ctx, req)
	}
	d.closeAll()
}
