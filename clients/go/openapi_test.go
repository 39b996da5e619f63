package leasehold_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// The contract is not written twice: every answer the tests' clients receive
// is validated against docs/openapi.yaml.

const openapiPath = "../../docs/openapi.yaml"
const docURL = "file:///openapi.json"

type route struct {
	method, template string
	re               *regexp.Regexp
	params           int
}

type contract struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	routes   []route
	mu       sync.Mutex
	schemas  map[string]*jsonschema.Schema
}

var (
	contractOnce sync.Once
	theContract  *contract
	contractErr  error
)

func loadContract() (*contract, error) {
	contractOnce.Do(func() {
		data, err := os.ReadFile(openapiPath)
		if err != nil {
			contractErr = err
			return
		}
		var raw any
		if err := yaml.Unmarshal(data, &raw); err != nil {
			contractErr = err
			return
		}
		// YAML to the JSON data model (string keys, float64 numbers).
		js, err := json.Marshal(raw)
		if err != nil {
			contractErr = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
		if err != nil {
			contractErr = err
			return
		}
		c := &contract{doc: doc.(map[string]any), compiler: jsonschema.NewCompiler(), schemas: map[string]*jsonschema.Schema{}}
		c.compiler.DefaultDraft(jsonschema.Draft2020)
		if err := c.compiler.AddResource(docURL, doc); err != nil {
			contractErr = err
			return
		}
		paramRe := regexp.MustCompile(`\{[^}]+\}`)
		for tmpl, ops := range c.doc["paths"].(map[string]any) {
			n := len(paramRe.FindAllString(tmpl, -1))
			parts := paramRe.Split(tmpl, -1)
			for i := range parts {
				parts[i] = regexp.QuoteMeta(parts[i])
			}
			re := regexp.MustCompile("^" + strings.Join(parts, "[^/]+") + "$")
			for method := range ops.(map[string]any) {
				c.routes = append(c.routes, route{strings.ToUpper(method), tmpl, re, n})
			}
		}
		sort.Slice(c.routes, func(i, j int) bool { return c.routes[i].params < c.routes[j].params })
		theContract = c
	})
	return theContract, contractErr
}

func ptrEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// schemaFor answers the schema of the answer to method path with status, or
// an error when the contract has no such operation or status.
func (c *contract) schemaFor(method, path string, status int) (*jsonschema.Schema, error) {
	var rt *route
	for i := range c.routes {
		if c.routes[i].method == method && c.routes[i].re.MatchString(path) {
			rt = &c.routes[i]
			break
		}
	}
	if rt == nil {
		return nil, fmt.Errorf("no operation %s %s in openapi.yaml", method, path)
	}
	op := c.doc["paths"].(map[string]any)[rt.template].(map[string]any)[strings.ToLower(method)].(map[string]any)
	responses := op["responses"].(map[string]any)
	code := fmt.Sprint(status)
	key := ""
	for _, k := range []string{code, code[:1] + "XX", "default"} {
		if _, ok := responses[k]; ok {
			key = k
			break
		}
	}
	if key == "" {
		return nil, fmt.Errorf("%s %s: status %d is not in openapi.yaml", method, rt.template, status)
	}
	ptr := "#/paths/" + ptrEscape(rt.template) + "/" + strings.ToLower(method) + "/responses/" + key
	resp := responses[key].(map[string]any)
	if ref, ok := resp["$ref"].(string); ok {
		ptr = ref
		resp = c.doc["components"].(map[string]any)["responses"].(map[string]any)[strings.TrimPrefix(ref, "#/components/responses/")].(map[string]any)
	}
	content, _ := resp["content"].(map[string]any)
	if _, ok := content["application/json"]; !ok {
		return nil, nil // no JSON body promised (204, an event stream)
	}
	ptr += "/content/application~1json/schema"
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.schemas[ptr]; ok {
		return s, nil
	}
	s, err := c.compiler.Compile(docURL + ptr)
	if err != nil {
		return nil, err
	}
	c.schemas[ptr] = s
	return s, nil
}

// validating is a RoundTripper that checks every JSON answer against the contract.
type validating struct {
	next http.RoundTripper
	t    *testing.T
	c    *contract
}

func (v *validating) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := v.next.RoundTrip(req)
	if err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return resp, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	if err != nil {
		return resp, nil // the client sees the broken body as it would have
	}
	if err := v.check(req.Method, req.URL.Path, resp.StatusCode, data); err != nil {
		v.t.Errorf("answer not as openapi.yaml says: %v\n%s %s -> %d %s", err, req.Method, req.URL.Path, resp.StatusCode, data)
	}
	return resp, nil
}

func (v *validating) check(method, path string, status int, data []byte) error {
	if status == http.StatusTemporaryRedirect {
		return nil
	}
	s, err := v.c.schemaFor(method, path, status)
	if err != nil || s == nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

func validatingTransport(t *testing.T) func(http.RoundTripper) http.RoundTripper {
	t.Helper()
	c, err := loadContract()
	if err != nil {
		t.Fatalf("loading openapi.yaml: %v", err)
	}
	return func(next http.RoundTripper) http.RoundTripper { return &validating{next: next, t: t, c: c} }
}

func TestContractRejectsAWrongAnswer(t *testing.T) {
	c, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	v := &validating{t: t, c: c}
	if err := v.check("POST", "/v1/applocks/app/acquire", 200, []byte(`{"result":"zero"}`)); err == nil {
		t.Fatal("a grant with a string result passed the contract")
	}
	if err := v.check("POST", "/v1/sessions", 201, []byte(`{"id":"7","name":"w","ttl_ms":1000,"expires_at":"2026-01-01T00:00:00.000Z","deadlock_priority":0,"locks":0,"waiting":false,"transaction":null}`)); err != nil {
		t.Fatalf("a good session failed the contract: %v", err)
	}
}
