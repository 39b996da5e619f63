// The dashboard over HTTPS in a real browser: a `leasehold serve` with TLS
// (certificates made for this run by scripts/test-certs), and Debian's
// chromium trusting exactly that server's key (--ignore-certificate-errors-
// spki-list pins it; nothing else is waved through). The page, its assets
// and its live event stream all come over TLS: a checkout made through the
// page's own origin shows its owner from the events stream, and a plaintext
// request to the same port is told to use https://.
//
// Environment: LEASEHOLD_BINARY (the server), ARTIFACTS_DIR (screenshots),
// CHROMIUM (default /usr/bin/chromium).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash, X509Certificate } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { ServerProcess } from "../testing/server_process.mjs";

const binary = process.env.LEASEHOLD_BINARY;
const artifacts = process.env.ARTIFACTS_DIR || path.resolve("artifacts");
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
assert.ok(binary && existsSync(binary), "set LEASEHOLD_BINARY to the leasehold binary");
mkdirSync(artifacts, { recursive: true });

const here = path.dirname(fileURLToPath(import.meta.url));
const certs = mkdtempSync(path.join(tmpdir(), "leasehold-browser-certs-"));
execFileSync(path.join(here, "../../scripts/test-certs"), [certs]);
const file = (name) => path.join(certs, name);

// Chromium's pin: the base64 SHA-256 of the server key's SubjectPublicKeyInfo.
const spki = createHash("sha256")
  .update(new X509Certificate(readFileSync(file("server.pem"))).publicKey
    .export({ type: "spki", format: "der" }))
  .digest("base64");

const server = new ServerProcess(binary, null, "leasehold-browser-https-", {
  tls: { cert: file("server.pem"), key: file("server.key"), ca: file("ca.pem") },
});

let browser = null;
let page = null;

// A call from the page, on its https:// origin.
const call = (method, target, body) => page.evaluate(async ([m, t, b]) => {
  const res = await fetch(t, {
    method: m,
    headers: b ? { "Content-Type": "application/json" } : {},
    body: b ? JSON.stringify(b) : undefined,
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}, [method, target, body]);

before(async () => {
  await server.start();
  browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-dev-shm-usage", `--ignore-certificate-errors-spki-list=${spki}`],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("pageerror", (e) => { throw e; });
  await page.goto(`${server.url}/`);
  await page.locator("body[data-live='true']").waitFor({ timeout: 10000 });
});

after(async () => {
  if (browser) await browser.close();
  await server.stop();
  rmSync(certs, { recursive: true, force: true });
});

describe("the dashboard over HTTPS", () => {
  test("is served over TLS, and its event stream is live", async () => {
    assert.equal(await page.evaluate(() => location.protocol), "https:");
    assert.equal(await page.locator("h1").textContent(), "leasehold");
  });

  test("a checkout shows its owner, from the events stream over TLS", async () => {
    assert.equal((await call("PUT", "/v1/records/docs/17", { body: "Garden note 17" })).status, 201);
    const r = await call("POST", "/v1/records/docs/17/checkout", { owner: "Asha", ttl_ms: 60000 });
    assert.equal(r.status, 200);
    const row = page.locator("#records-body section[data-ns='docs'] tr[data-key='17'][data-state='locked']");
    await row.filter({ hasText: "Asha is editing" }).waitFor({ timeout: 5000 });
    await page.screenshot({ path: path.join(artifacts, "dashboard-https.png") });
  });

  test("a plaintext request to the TLS port is told to use https://", async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/healthz`);
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.equal(body.error.code, "bad_request");
    assert.match(body.error.message, /https:\/\//);
  });
});
