// docs/openapi.yaml as the contract tests use it: the document, its
// operations, a check of answers against the document's schemas (Ajv, JSON
// Schema 2020-12, the dialect of OpenAPI 3.1), and the comparison of the
// endpoints a server serves with the ones the document describes.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { parse } from "yaml";

const here = path.dirname(fileURLToPath(import.meta.url));
export const documentPath = path.resolve(here, "../../docs/openapi.yaml");

export const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"];

export function loadDocument(file = documentPath) {
  return parse(readFileSync(file, "utf8"));
}

// "/v1/records/{ns}/{key}" and "/v1/records/{a}/{b}" name the same endpoint.
export function normalizeTemplate(template) {
  return template.replace(/\{[^}]*\}/g, "{}");
}

const routeKey = (method, template) => `${method.toUpperCase()} ${normalizeTemplate(template)}`;

// Every operation: {method: "GET", template, operationId}.
export function operations(document) {
  const out = [];
  for (const [template, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      if (item[method]) {
        out.push({ method: method.toUpperCase(), template, operationId: item[method].operationId });
      }
    }
  }
  return out;
}

// The (method, template) pairs of `routes` that `document` lacks, as
// "METHOD /template" strings; empty when the document covers them all.
export function routesMissingFromDocument(routes, document) {
  const documented = new Set(operations(document).map((o) => routeKey(o.method, o.template)));
  return routes
    .filter(([method, template]) => !documented.has(routeKey(method, template)))
    .map(([method, template]) => `${method.toUpperCase()} ${template}`);
}

// The operation whose template matches a concrete path (literal segments
// win over parameters, as OpenAPI says), or null.
export function findOperation(document, method, pathname) {
  const segments = pathname.split("/").slice(1);
  let best = null;
  let bestLiterals = -1;
  for (const op of operations(document)) {
    if (op.method !== method.toUpperCase()) continue;
    const parts = op.template.split("/").slice(1);
    if (parts.length !== segments.length) continue;
    let literals = 0;
    const ok = parts.every((p, i) => {
      if (/^\{[^}]*\}$/.test(p)) return segments[i].length > 0;
      literals += 1;
      return p === decodeURIComponent(segments[i]);
    });
    if (ok && literals > bestLiterals) {
      best = op;
      bestLiterals = literals;
    }
  }
  return best;
}

const pointerPart = (s) => s.replace(/~/g, "~0").replace(/\//g, "~1");
const DOCUMENT_ID = "urn:leasehold:openapi";

// Checks answers against the document: the status must be documented for
// the operation, the content type must be one it lists, and a JSON body
// must satisfy the schema.
export class AnswerChecker {
  constructor(document) {
    this.document = document;
    // The document's top-level fields are known to Ajv as annotations, so
    // that strict mode still refuses unknown keywords inside the schemas.
    this.ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false,
      keywords: Object.keys(document) });
    addFormats(this.ajv);
    // The whole document under one id, so that "#/components/..." inside
    // its schemas resolves; only schema fragments are ever compiled.
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
    this.validators = new Map();
  }

  // The response object and its JSON pointer, following one $ref.
  response(op, status) {
    const responses = this.document.paths[op.template][op.method.toLowerCase()].responses;
    let pointer = `#/paths/${pointerPart(op.template)}/${op.method.toLowerCase()}/responses/${status}`;
    let response = responses[String(status)];
    if (!response) return null;
    if (response.$ref) {
      pointer = response.$ref;
      response = pointer.slice(2).split("/").reduce((o, k) => o[k.replace(/~1/g, "/").replace(/~0/g, "~")],
        this.document);
    }
    return { response, pointer };
  }

  // Problems with one answer, as strings; empty when it conforms.
  check(op, status, contentType, bodyText) {
    const found = this.response(op, status);
    if (!found) return [`${op.operationId}: status ${status} is not documented`];
    const { response, pointer } = found;
    if (!response.content) {
      return bodyText.length === 0 ? [] : [`${op.operationId} ${status}: documented without a body, got ${bodyText.length} bytes`];
    }
    const media = (contentType || "").split(";")[0].trim();
    if (!response.content[media]) {
      return [`${op.operationId} ${status}: content type "${media}" is not documented (${Object.keys(response.content).join(", ")})`];
    }
    if (media !== "application/json") return [];
    let body;
    try {
      body = JSON.parse(bodyText);
    } catch (e) {
      return [`${op.operationId} ${status}: the body is not JSON (${e.message})`];
    }
    return this.checkValue(`${pointer}/content/${pointerPart(media)}/schema`, body)
      .map((e) => `${op.operationId} ${status}: ${e}`);
  }

  // Problems with `value` against the schema at `pointer` in the document.
  checkValue(pointer, value) {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
      this.validators.set(pointer, validate);
    }
    if (validate(value)) return [];
    return validate.errors.map((e) => `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)} in ${JSON.stringify(value).slice(0, 300)}`);
  }
}
