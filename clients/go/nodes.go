package leasehold

import (
	"net/url"
	"strings"
	"sync"
)

const maxNodes = 32

// nodes are a cluster's nodes: the one believed to lead is asked first, nodes
// that could not be connected (or did not answer in time) last, until they
// answer again (docs/client.md, "Clusters"). Safe for concurrent use.
type nodes struct {
	mu      sync.Mutex
	urls    []string
	leader  string
	demoted map[string]bool
	ordered []string // immutable once published; replaced on change
}

func parseURLs(list string) (*nodes, error) {
	var urls []string
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		node, ok := nodeOf(part)
		if !ok {
			return nil, newError(nil, "bad_url", 0, "not an http(s) URL: %q", part)
		}
		urls = append(urls, node)
	}
	if len(urls) == 0 {
		return nil, newError(nil, "bad_url", 0, "no URL given")
	}
	n := &nodes{urls: urls, leader: urls[0], demoted: map[string]bool{}}
	n.reorder()
	return n, nil
}

// nodeOf answers scheme://host[:port] of an http(s) URL, without the
// scheme's default port (80, 443), so that a node is one node however it is
// written.
func nodeOf(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	host := u.Host
	if (u.Scheme == "https" && u.Port() == "443") || (u.Scheme == "http" && u.Port() == "80") {
		host = strings.TrimSuffix(host, ":"+u.Port())
	}
	return u.Scheme + "://" + host, true
}

func (n *nodes) reorder() {
	order := make([]string, 0, len(n.urls))
	if !n.demoted[n.leader] {
		order = append(order, n.leader)
	}
	for _, u := range n.urls {
		if u != n.leader && !n.demoted[u] {
			order = append(order, u)
		}
	}
	for _, u := range n.urls {
		if n.demoted[u] {
			order = append(order, u)
		}
	}
	n.ordered = order
}

func (n *nodes) order() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ordered
}

func (n *nodes) answered(node string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if node == n.leader && !n.demoted[node] {
		return
	}
	n.leader = node
	delete(n.demoted, node)
	n.reorder()
}

func (n *nodes) demote(node string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.demoted[node] = true
	n.reorder()
}

// learn makes node (from a redirect) the leader, adding it when new; false
// when it is new and the list is full.
func (n *nodes) learn(node string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	known := false
	for _, u := range n.urls {
		known = known || u == node
	}
	if !known {
		if len(n.urls) >= maxNodes {
			return false
		}
		n.urls = append(n.urls, node)
	}
	n.leader = node
	n.reorder()
	return true
}
