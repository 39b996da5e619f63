// The contract test's own tools, on the real document: the route check
// fails on an endpoint the document lacks, and the answer check refuses
// answers that break the schemas. No server needed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AnswerChecker, findOperation, loadDocument, operations, routesMissingFromDocument } from "./openapi.mjs";
import { serverRoutes } from "./server_routes.mjs";

const document = loadDocument();
const checker = new AnswerChecker(document);
const op = (method, pathname) => findOperation(document, method, pathname);

test("every operation has a unique operationId", () => {
  const ids = operations(document).map((o) => o.operationId);
  assert.ok(ids.length >= serverRoutes.length, `${ids.length} operations`);
  assert.equal(new Set(ids).size, ids.length);
});

test("the server's routes are all in the document", () => {
  assert.deepEqual(routesMissingFromDocument(serverRoutes, document), []);
});

test("a route the document lacks is reported, whatever its parameter names", () => {
  const routes = [...serverRoutes, ["POST", "/v1/barriers/{ns}/{name}/arrive"],
    ["GET", "/v1/records/{namespace}/{k}"]];
  assert.deepEqual(routesMissingFromDocument(routes, document),
    ["POST /v1/barriers/{ns}/{name}/arrive"]);
});

test("literal path segments win over parameters", () => {
  assert.equal(op("POST", "/v1/records/docs/purge").operationId, "purgeExpiredLeases");
  assert.equal(op("PUT", "/v1/records/docs/purge").operationId, "insertRecord");
  assert.equal(op("POST", "/v1/records/docs/k/checkout").operationId, "checkout");
  assert.equal(op("PATCH", "/v1/records/docs/k"), null);
});

test("a conforming answer passes", () => {
  assert.deepEqual(checker.check(op("PUT", "/v1/records/d/k"), 201, "application/json", '{"version":1}'), []);
  assert.deepEqual(checker.check(op("GET", "/v1/records/d/k"), 404, "application/json",
    '{"error":{"code":"not_found","message":"no key k"}}'), []);
  assert.deepEqual(checker.check(op("DELETE", "/v1/sessions/1"), 204, "application/json", ""), []);
});

test("answers that break the document are refused", () => {
  const put = op("PUT", "/v1/records/d/k");
  const cases = [
    [put, 200, "application/json", '{"version":1}'], // undocumented status
    [put, 201, "text/plain", '{"version":1}'], // undocumented content type
    [put, 201, "application/json", '{"version":"1"}'], // wrong type
    [put, 201, "application/json", '{"version":1,"extra":true}'], // undocumented field
    [put, 201, "application/json", "{}"], // missing field
    [put, 409, "application/json", '{"error":{"code":"not_found","message":"m"}}'], // code of another status
    [put, 409, "application/json", '{"code":"exists"}'], // not the error shape
    [op("DELETE", "/v1/sessions/1"), 204, "application/json", "{}"], // a body where none is documented
    [op("GET", "/v1/sessions"), 200, "application/json", '{"sessions":[{"id":"1"}]}'],
  ];
  for (const [o, status, type, body] of cases) {
    assert.notDeepEqual(checker.check(o, status, type, body), [], `${o.operationId} ${status} ${body}`);
  }
});
