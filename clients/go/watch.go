package leasehold

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const watchSilence = 45 * time.Second // three missed pings (every 15 s)

// Event is one event of a watch: Type (applock.granted, ...) and its Data object.
type Event struct {
	Type string
	Data map[string]any
}

// Watch is an open event stream (GET /v1/events). Iterate Events; Close stops it.
type Watch struct {
	body     io.ReadCloser
	stop     func()
	silence  time.Duration
	closed   atomic.Bool
	silent   atomic.Bool
	timer    *time.Timer
	closeOne sync.Once
}

// Watch opens the event stream of namespace ns ("": every namespace) at the
// leader. The stream subscribes as it opens: earlier events are not seen.
// Errors: ErrUnreachable, *Error.
func (c *Client) Watch(ctx context.Context, ns string) (*Watch, error) {
	path := "/v1/events"
	if ns != "" {
		path += "?ns=" + seg(ns)
	}
	ans, err := c.call(ctx, get(path), 0, true)
	if err != nil {
		return nil, err
	}
	if ans.stream == nil {
		return nil, apiError(ans.status, ans.body)
	}
	w := &Watch{body: ans.stream, stop: ans.stop, silence: max(watchSilence, c.io)}
	w.timer = time.AfterFunc(w.silence, func() { w.silent.Store(true); w.stop() })
	return w, nil
}

// Close stops the stream (also while another goroutine iterates it).
func (w *Watch) Close() {
	w.closeOne.Do(func() {
		w.closed.Store(true)
		w.timer.Stop()
		w.stop()
		w.body.Close()
	})
}

// Events yields the stream's events until it ends, is closed, or breaks (the
// error then is ErrUnreachable; a stream silent for 45 s counts as broken).
// Iterate it once.
func (w *Watch) Events() iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		defer w.Close()
		var p sseParser
		buf := make([]byte, 16<<10)
		for {
			n, err := w.body.Read(buf)
			if n > 0 {
				w.timer.Reset(w.silence)
				for _, e := range p.feed(buf[:n]) {
					if !yield(e, nil) {
						return
					}
				}
			}
			if err == nil {
				continue
			}
			switch {
			case w.closed.Load():
			case w.silent.Load():
				yield(Event{}, unreachable("unreachable", "the event stream was silent for too long"))
			case err == io.EOF:
			default:
				yield(Event{}, unreachable("unreachable", "the event stream broke: %v", err))
			}
			return
		}
	}
}

// sseParser parses text/event-stream incrementally: lines may be split across reads.
type sseParser struct {
	rest  []byte
	typ   string
	data  []string
	ready []Event
}

func (p *sseParser) feed(chunk []byte) []Event {
	p.rest = append(p.rest, chunk...)
	p.ready = p.ready[:0]
	for {
		i := bytes.IndexByte(p.rest, '\n')
		if i < 0 {
			break
		}
		p.line(string(bytes.TrimSuffix(p.rest[:i], []byte("\r"))))
		p.rest = p.rest[i+1:]
	}
	p.rest = append([]byte(nil), p.rest...) // an unfinished line waits for the next read
	return p.ready
}

func (p *sseParser) line(line string) {
	if line == "" {
		if len(p.data) > 0 {
			p.ready = append(p.ready, p.dispatch())
		}
		p.typ = ""
		return
	}
	if strings.HasPrefix(line, ":") {
		return
	}
	field, value, _ := strings.Cut(line, ":")
	value = strings.TrimPrefix(value, " ")
	switch field {
	case "event":
		p.typ = value
	case "data":
		p.data = append(p.data, value)
	}
}

func (p *sseParser) dispatch() Event {
	text := strings.Join(p.data, "\n")
	p.data = nil
	var data map[string]any
	if json.Unmarshal([]byte(text), &data) != nil || data == nil {
		data = map[string]any{"text": text}
	}
	typ := p.typ
	if typ == "" {
		typ, _ = data["type"].(string)
	}
	if typ == "" {
		typ = "message"
	}
	return Event{Type: typ, Data: data}
}
