package leasehold

import (
	"encoding/json"
	"net/url"
	"reflect"
	"testing"
)

// The hand-built bodies and URLs of the hot path are byte for byte what
// encoding/json and url.Parse make.
func TestHandBuiltBodiesAndURLs(t *testing.T) {
	for _, s := range []string{"r-1", "", "a\"b\\c", "<tag>&", "ünï", "tab\there", "\x00\x7f", "\xff"} {
		doc := map[string]any{"session": "12", "resource": s, "mode": "Exclusive",
			"owner": "Session", "timeout_ms": int64(-1), "principal": s}
		want, _ := json.Marshal(doc)
		if got := lockBody("12", s, "Exclusive", "Session", s, -1, 0); string(got) != string(want) {
			t.Errorf("lockBody(%q) = %s, want %s", s, got, want)
		}
		doc["max_hold_ms"] = int64(60000)
		want, _ = json.Marshal(doc)
		if got := lockBody("12", s, "Exclusive", "Session", s, -1, 60000); string(got) != string(want) {
			t.Errorf("lockBody(%q) with a hold limit = %s, want %s", s, got, want)
		}
		rel := map[string]string{"session": "12", "resource": s, "owner": "Transaction", "principal": "public"}
		want, _ = json.Marshal(rel)
		if got := lockBody("12", s, "", "Transaction", "public", 0, 0); string(got) != string(want) {
			t.Errorf("release body(%q) = %s, want %s", s, got, want)
		}
		for _, node := range []string{"http://127.0.0.1:8080", "https://[::1]:9"} {
			path := "/v1/records/" + seg(s) + "/" + seg("k/ä b") + "?principal=" + seg(s)
			want, err1 := url.Parse(node + path)
			got, err2 := requestURL(node, path)
			if (err1 == nil) != (err2 == nil) || (err1 == nil && !reflect.DeepEqual(got, want)) {
				t.Errorf("requestURL(%q, %q) = %#v, %v; want %#v, %v", node, path, got, err2, want, err1)
			}
		}
	}
}

// The hand decoder of grants agrees with encoding/json, or leaves it to it.
func TestParseFlatGrant(t *testing.T) {
	for _, body := range []string{
		`{"result":0,"status":"granted","fence":308497,"mode":"Exclusive","count":1}`,
		` { "result" : 1 , "fence" : -3, "permits": 2, "x": null, "y": true, "z": 1.5e3 } `,
		`{}`, `{"result":null}`, `{"mode":"Sh\u0061red"}`, `{"deadlock":{"victim":"1"}}`, `{"result":01}`,
		`{"result":0,}`, `{"result":0`, `[1]`, `{"a":[1,2]}`, `{"fence":"7"}`, `{"result":-}`,
	} {
		var fast, slow grantDoc
		ok := parseFlatGrant([]byte(body), &fast)
		err := json.Unmarshal([]byte(body), &slow)
		if ok && (err != nil || !reflect.DeepEqual(fast, slow)) {
			t.Errorf("%s: fast %+v, encoding/json %+v (%v)", body, fast, slow, err)
		}
	}
	var doc grantDoc
	if !parseFlatGrant([]byte(`{"result":0,"status":"granted","fence":308497,"mode":"Exclusive","count":1}`), &doc) {
		t.Error("the usual grant fell back to encoding/json")
	}
}
