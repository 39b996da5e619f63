// Command go_bench is the Go client's benchmark driver (bench/clients/README.md):
// lock+release pairs through the client ("go-client") or bare net/http with a
// shared http.Client ("net-http"), 16 goroutines, one JSON line with the
// process's CPU per call.
//
//	go_bench go-client|net-http --url URL [--callers 16] [--seconds 3] [--warmup 0.5] [--cpuprofile FILE]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	leasehold "github.com/leasehold/leasehold/clients/go"
)

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

type run struct {
	pairs   atomic.Int64
	stop    atomic.Bool
	errOnce sync.Once
	err     error
}

func (r *run) fail(what string, err error) {
	r.errOnce.Do(func() { r.err = fmt.Errorf("%s: %w", what, err) })
	r.stop.Store(true)
}

func clientLoop(c *leasehold.Client, r *run, i int, ready *sync.WaitGroup) {
	ctx := context.Background()
	s, err := c.Session(ctx, fmt.Sprintf("bench-go-%d", i), 60*time.Second)
	ready.Done()
	if err != nil {
		r.fail("session", err)
		return
	}
	defer s.Close()
	res := fmt.Sprintf("r-%d", i)
	for !r.stop.Load() {
		lk, err := s.Lock(ctx, "bench", res, leasehold.Exclusive, leasehold.WithTimeout(0))
		if err != nil {
			r.fail("lock", err)
			return
		}
		if err := lk.Release(ctx); err != nil {
			r.fail("release", err)
			return
		}
		r.pairs.Add(1)
	}
}

func httpLoop(h *http.Client, url string, r *run, i int, ready *sync.WaitGroup) {
	call := func(path string, doc any) (map[string]any, error) {
		b, _ := json.Marshal(doc)
		req, _ := http.NewRequest(http.MethodPost, url+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		resp, err := h.Do(req)
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("%s: %d %s", path, resp.StatusCode, data)
		}
		var out map[string]any
		return out, json.Unmarshal(data, &out)
	}
	sess, err := call("/v1/sessions", map[string]any{"name": fmt.Sprintf("bench-nethttp-%d", i), "ttl_ms": 60000})
	ready.Done()
	if err != nil {
		r.fail("session", err)
		return
	}
	sid, _ := sess["id"].(string)
	res := fmt.Sprintf("r-%d", i)
	for !r.stop.Load() {
		a, err := call("/v1/applocks/bench/acquire", map[string]any{"session": sid, "resource": res, "mode": "Exclusive",
			"owner": "Session", "timeout_ms": 0, "principal": "public"})
		if err != nil || a["result"] == nil {
			r.fail("acquire", fmt.Errorf("%v %v", a, err))
			return
		}
		if _, err := call("/v1/applocks/bench/release", map[string]any{"session": sid, "resource": res,
			"owner": "Session", "principal": "public"}); err != nil {
			r.fail("release", err)
			return
		}
		r.pairs.Add(1)
	}
	req, _ := http.NewRequest(http.MethodDelete, url+"/v1/sessions/"+sid, nil)
	if resp, err := h.Do(req); err == nil {
		resp.Body.Close()
	}
}

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "go-client" && os.Args[1] != "net-http") {
		fmt.Fprintln(os.Stderr, "usage: go_bench go-client|net-http --url URL [--callers N] [--seconds S] [--warmup S]")
		os.Exit(2)
	}
	driver := os.Args[1]
	fs := flag.NewFlagSet(driver, flag.ExitOnError)
	url := fs.String("url", "", "the server")
	callers := fs.Int("callers", 16, "concurrent callers")
	seconds := fs.Float64("seconds", 3, "measured seconds")
	warmup := fs.Float64("warmup", 0.5, "seconds before the clock starts")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the measured seconds to this file")
	_ = fs.Parse(os.Args[2:])

	r := &run{}
	var ready, done sync.WaitGroup
	ready.Add(*callers)
	done.Add(*callers)
	switch driver {
	case "go-client":
		c, err := leasehold.New(*url)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for i := range *callers {
			go func() { defer done.Done(); clientLoop(c, r, i, &ready) }()
		}
	case "net-http":
		h := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 64}}
		for i := range *callers {
			go func() { defer done.Done(); httpLoop(h, *url, r, i, &ready) }()
		}
	}
	ready.Wait()
	time.Sleep(time.Duration(*warmup * float64(time.Second)))
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	t0, c0, p0 := time.Now(), cpuSeconds(), r.pairs.Load()
	time.Sleep(time.Duration(*seconds * float64(time.Second)))
	p1, c1, t1 := r.pairs.Load(), cpuSeconds(), time.Now()
	if *cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	r.stop.Store(true)
	done.Wait()
	if r.err != nil {
		fmt.Fprintf(os.Stderr, "go_bench %s: %v\n", driver, r.err)
		os.Exit(1)
	}
	pairs, wall, cpu := p1-p0, t1.Sub(t0).Seconds(), c1-c0
	perCall := 0.0
	if pairs > 0 {
		perCall = cpu * 1e6 / float64(2*pairs)
	}
	line, _ := json.Marshal(struct {
		Driver       string  `json:"driver"`
		Callers      int     `json:"callers"`
		Pairs        int64   `json:"pairs"`
		Seconds      float64 `json:"seconds"`
		PairsPerS    float64 `json:"pairs_per_s"`
		CPUS         float64 `json:"cpu_s"`
		CPUUsPerCall float64 `json:"cpu_us_per_call"`
	}{driver, *callers, pairs, round(wall, 1000), round(float64(pairs)/wall, 10), round(cpu, 1000), round(perCall, 100)})
	fmt.Println(string(line))
}

func round(x, scale float64) float64 { return float64(int64(x*scale+0.5)) / scale }
