package leasehold

import "testing"

// A node is one node however its URL is written: the scheme's default port is dropped.
func TestNodeOfDefaultPorts(t *testing.T) {
	for raw, want := range map[string]string{
		"https://db1":             "https://db1",
		"https://db1:443/v1/x?y":  "https://db1",
		"https://db1:7443":        "https://db1:7443",
		"https://[::1]:443":       "https://[::1]",
		"http://db1:80":           "http://db1",
		"http://db1:443":          "http://db1:443",
		"https://db1:80":          "https://db1:80",
		"http://127.0.0.1:7070/a": "http://127.0.0.1:7070",
	} {
		if got, ok := nodeOf(raw); !ok || got != want {
			t.Errorf("nodeOf(%q) = %q, %v; want %q", raw, got, ok, want)
		}
	}
}

// A redirect is followed to https always, to http only from http.
func TestRedirectTarget(t *testing.T) {
	for _, tc := range []struct {
		node, location, want string
		refused              bool
	}{
		{"https://a:1", "https://b:2/v1/sessions", "https://b:2", false},
		{"http://a:1", "https://b:2/v1/sessions", "https://b:2", false},
		{"http://a:1", "http://b:2/v1/sessions", "http://b:2", false},
		{"https://a:1", "http://b:2/v1/sessions", "", true},
		{"https://a:1", "", "", false},
		{"https://a:1", "ftp://b/x", "", false},
	} {
		got, err := redirectTarget(tc.node, tc.location)
		if got != tc.want || (err != nil) != tc.refused || (err != nil && (err.Code != "bad_url" || err.Status != 307)) {
			t.Errorf("redirectTarget(%q, %q) = %q, %v", tc.node, tc.location, got, err)
		}
	}
}
