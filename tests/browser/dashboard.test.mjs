// The dashboard in a real browser (Debian's chromium, driven by
// playwright-core) against a real `leasehold serve` on an ephemeral loopback
// port: the footer names the server's version; a checkout shows its owner
// within a second (an event, not a poll), turns free at expiry without a
// reload, a deadlock is drawn, and the page says so when the server goes
// away and recovers when it is back, showing the sessions, locks and leases
// that outlived the restart.
//
// A step of the wall clock of the machine the page runs on changes none of it.
//
// Environment: LEASEHOLD_BINARY (the server), ARTIFACTS_DIR (screenshots),
// CHROMIUM (default /usr/bin/chromium).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";
import { ServerProcess } from "../testing/server_process.mjs";

const binary = process.env.LEASEHOLD_BINARY;
const artifacts = process.env.ARTIFACTS_DIR || path.resolve("artifacts");
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
assert.ok(binary && existsSync(binary), "set LEASEHOLD_BINARY to the leasehold binary");
mkdirSync(artifacts, { recursive: true });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- The server ------------------------------------------------------------

// A `leasehold serve` in its own temp dir (tests/testing/server_process.mjs),
// with a call() that answers parsed JSON.
class Server extends ServerProcess {
  constructor(config) { super(binary, config, "leasehold-browser-"); }

  async call(method, target, body, token) {
    const headers = body ? { "Content-Type": "application/json" } : {};
    if (token) headers.Authorization = `Bearer ${token}`;
    const res = await fetch(`${this.url}${target}`,
      { method, headers, body: body ? JSON.stringify(body) : undefined });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  }
}

// "jobs" holds a lost holder's locks and permits back for a minute.
const server = new Server({ namespaces: { jobs: { lock_delay_ms: 60000 } } });
const call = (...args) => server.call(...args);

async function openSession(name) {
  const r = await call("POST", "/v1/sessions", { name, ttl_ms: 120000 });
  assert.equal(r.status, 201);
  return r.json.id;
}

const acquire = (session, resource, timeout_ms = -1, ns = "bank") =>
  call("POST", `/v1/applocks/${ns}/acquire`,
    { session, resource, mode: "Exclusive", owner: "Session", timeout_ms });

// ---- The browser ---------------------------------------------------------------

let browser = null;
let page = null;

before(async () => {
  await server.start();
  browser = await chromium.launch({
    executablePath,
    headless: true,
    // --disable-dev-shm-usage: containers often have a small /dev/shm.
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-dev-shm-usage"],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("pageerror", (e) => { throw e; });
  await page.goto(`${server.url}/`);
  await page.locator("body[data-live='true']").waitFor({ timeout: 10000 });
  // A reload would lose this mark; the checks below look for it.
  await page.evaluate(() => { window.notReloaded = true; });
});

after(async () => {
  if (browser) await browser.close();
  await server.stop();
});

// The row of one key; `state` "locked" or "free" narrows it.
const row = (ns, key, state) => page.locator(`#records-body section[data-ns='${ns}'] ` +
  `tr[data-key='${key}']${state ? `[data-state='${state}']` : ""}`);

describe("the dashboard", () => {
  test("serves its page and assets from the binary, without a token", async () => {
    const res = await fetch(`${server.url}/assets/app.js`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type"), /javascript/);
    const etag = res.headers.get("etag");
    assert.ok(etag);
    const again = await fetch(`${server.url}/assets/app.js`,
      { headers: { "If-None-Match": etag } });
    assert.equal(again.status, 304);
    assert.equal(await page.locator("h1").textContent(), "leasehold");
  });

  test("its footer names the server's version, as --version prints it", async () => {
    const printed = execFileSync(binary, ["--version"], { encoding: "utf8" }).trim();
    assert.match(printed, /^leasehold [0-9][0-9A-Za-z.+~-]*$/);
    const health = await call("GET", "/healthz");
    assert.equal(`leasehold ${health.json.version}`, printed);
    const footer = page.locator("#version");
    await footer.filter({ hasText: /\S/ }).waitFor({ timeout: 5000 });
    assert.equal(await footer.textContent(), printed);
  });

  test("a checkout shows its owner within 1 s, from the events stream", async () => {
    assert.equal((await call("PUT", "/v1/records/docs/17", { body: "Garden note 17" })).status, 201);
    const r = await call("POST", "/v1/records/docs/17/checkout", { owner: "Asha", ttl_ms: 3000 });
    assert.equal(r.status, 200);
    const shownBy = Date.now() + 1000;
    await row("docs", "17", "locked").filter({ hasText: "Asha is editing" }).waitFor({ timeout: 1000 });
    assert.ok(Date.now() <= shownBy + 50);
    const text = await row("docs", "17").textContent();
    assert.match(text, /Asha is editing.*17.*0:0\d left/s);
  });

  test("a list read before an event, answered after it, does not undo the event", async () => {
    const slow = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      // Lists are read at once but handed to the page 800 ms later, so the
      // first ones predate the checkout below and arrive after its event.
      await slow.route(/\/v1\/(namespaces|records\/)/, async (route) => {
        const response = await route.fetch();
        await sleep(800);
        await route.fulfill({ response });
      });
      await slow.goto(`${server.url}/`);
      await slow.locator("body[data-live='true']").waitFor({ timeout: 10000 });
      await call("POST", "/v1/records/drafts/1/checkout", { owner: "Lena", ttl_ms: 60000 });
      const lena = slow.locator("#records-body section[data-ns='drafts'] tr[data-key='1']")
        .filter({ hasText: "Lena is editing" });
      await lena.waitFor({ timeout: 2000 });
      await sleep(2500);  // every late list has arrived by now
      assert.equal(await lena.count(), 1);
    } finally {
      await slow.close();
    }
  });

  test("the row turns free at expiry, without a reload", async () => {
    // The lease above runs 3 s; allow the countdown's one-second tick.
    await row("docs", "17", "free").waitFor({ timeout: 5000 });
    assert.match(await row("docs", "17").textContent(), /Free/);
    assert.equal(await page.evaluate(() => window.notReloaded), true);
  });

  test("a deadlock is shown with its cycle", async () => {
    const asha = await openSession("Asha");
    const ravi = await openSession("Ravi");
    assert.equal((await acquire(asha, "account:A")).json.result, 0);
    assert.equal((await acquire(ravi, "account:B")).json.result, 0);
    const ashaWaits = acquire(asha, "account:B");  // parks
    await sleep(200);
    const closing = await acquire(ravi, "account:A");
    assert.equal(closing.json.result, -3, JSON.stringify(closing.json));
    const card = page.locator("#deadlocks-body article.deadlock");
    await card.first().waitFor({ timeout: 2000 });
    const text = await card.first().textContent();
    assert.match(text, /Ravi/);
    assert.match(text, /Asha waits for Ravi: wants Exclusive on account:B/);
    assert.match(text, /Ravi waits for Asha: wants Exclusive on account:A/);
    assert.equal(await card.first().locator("svg.cycle path.edge").count(), 2);
    // Asha's wait, still queued behind Ravi, shows in the lock's queue.
    await page.locator("#applocks-body tr[data-resource='account:B'] ol.queue li")
      .filter({ hasText: "Asha" }).waitFor({ timeout: 2000 });
    await page.locator("#t-deadlocks").filter({ hasText: "1" }).waitFor({ timeout: 2000 });
    await call("DELETE", `/v1/sessions/${ravi}`);
    assert.equal((await ashaWaits).json.result, 1);
  });

  test("a semaphore is a bar of its permits, with holders, queue and a lock-delay", async () => {
    const take = (session, permits, timeout_ms = 0, name = "payments", ns = "billing") =>
      call("POST", `/v1/semaphores/${ns}/${name}/acquire`,
        { session, permits, limit: 4, owner: "Session", timeout_ms });
    const mei = await openSession("Mei");
    const tomas = await openSession("Tomas");
    const ines = await openSession("Ines");
    assert.equal((await take(mei, 2)).json.result, 0);
    assert.equal((await take(tomas, 1)).json.result, 0);
    const inesWaits = take(ines, 2, 60000);  // 3 of 4 held: 2 more do not fit
    const row = page.locator("#semaphores-body tr[data-semaphore='payments']");
    await row.locator("ol.queue li").filter({ hasText: "Ines wants 2" }).waitFor({ timeout: 2000 });
    assert.equal(await row.locator(".permits .slot").count(), 4);
    assert.equal(await row.locator(".permits .slot.free").count(), 1);
    assert.equal(await row.locator(".permits .slot.h0").count(), 2);  // Mei's two
    assert.match(await row.textContent(), /3 of 4 held/);
    await call("POST", "/v1/semaphores/billing/payments/release", { session: mei, owner: "Session" });
    assert.equal((await inesWaits).json.result, 1);
    await row.locator("ol.queue").waitFor({ state: "detached", timeout: 2000 });

    // A holder whose session expires in "jobs": its permits are held back.
    const short = await call("POST", "/v1/sessions", { name: "Lost", ttl_ms: 300 });
    assert.equal((await take(short.json.id, 3, 0, "exports", "jobs")).json.result, 0);
    const held = page.locator("#semaphores-body tr[data-semaphore='exports']");
    await held.locator(".lock-delay").waitFor({ timeout: 5000 });
    assert.match(await held.locator(".lock-delay").textContent(), /3 permits of a lost holder held back/);
    assert.equal(await held.locator(".permits .slot.delayed").count(), 3);
    for (const s of [tomas, ines]) await call("DELETE", `/v1/sessions/${s}`);
  });

  test("screenshots at 1280 and 390 px wide", async () => {
    // A scene a person should understand at a glance.
    await call("PUT", "/v1/records/docs/18", { body: "Plant list" });
    await call("PUT", "/v1/records/docs/19", { body: "Watering rota" });
    await call("POST", "/v1/records/docs/17/checkout", { owner: "Asha", ttl_ms: 252000 });
    await call("POST", "/v1/records/docs/18/checkout", { owner: "Ravi", ttl_ms: 95000 });
    await call("POST", "/v1/records/billing/invoice-481/checkout", { owner: "Mei", ttl_ms: 600000 });
    const mei = await openSession("Mei");
    const tomas = await openSession("Tomas");
    await call("POST", "/v1/applocks/billing/acquire",
      { session: mei, resource: "nightly-report", mode: "Shared", owner: "Session", timeout_ms: 0 });
    const tomasWaits = call("POST", "/v1/applocks/billing/acquire",
      { session: tomas, resource: "nightly-report", mode: "Exclusive", owner: "Session", timeout_ms: 60000 });
    await call("POST", "/v1/outbox/billing/emails", { key: "invoice-481", payload: { to: "mei@example.org" } });
    await call("POST", "/v1/outbox/billing/emails", { key: "invoice-482", payload: { to: "ravi@example.org" } });
    await row("billing", "invoice-481").filter({ hasText: "Mei" }).waitFor({ timeout: 2000 });
    await page.locator("#applocks-body tr[data-resource='nightly-report'] ol.queue li")
      .filter({ hasText: "Tomas" }).waitFor({ timeout: 3000 });
    await page.locator("#outbox-body").filter({ hasText: "billing/emails" }).waitFor({ timeout: 3000 });
    await sleep(1200);  // one countdown tick, so that every clock shows
    await page.screenshot({ path: path.join(artifacts, "dashboard-1280.png"), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await sleep(300);
    const overflow = await page.evaluate(() =>
      document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than a 390 px screen`);
    await page.screenshot({ path: path.join(artifacts, "dashboard-390.png"), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    await call("DELETE", `/v1/sessions/${tomas}`);
    await tomasWaits;
  });

  test("says when the server is unreachable, and recovers after a restart", async () => {
    // A session holding a lock across the restart.
    const hana = await openSession("Hana");
    assert.equal((await acquire(hana, "ledger", 0)).status, 200);
    const hanaRow = page.locator(`#sessions-body tr[data-session='${hana}']`);
    await hanaRow.filter({ hasText: "Hana" }).waitFor({ timeout: 3000 });
    // Marked, so that only a row drawn from the restarted server counts.
    await hanaRow.evaluate((tr) => { tr.dataset.beforeRestart = "1"; });
    await server.kill();
    await page.locator("#banner").filter({ hasText: /cannot be reached|interrupted/ })
      .waitFor({ timeout: 10000 });
    await page.locator("body[data-conn='offline']").waitFor({ timeout: 15000 });
    await server.start();  // same port, same data
    await page.locator("body[data-conn='live']").waitFor({ timeout: 20000 });
    assert.equal(await page.locator("#banner").isHidden(), true);
    // The durable lease outlived the restart, and the page shows it.
    await row("docs", "18").filter({ hasText: "Ravi is editing" }).waitFor({ timeout: 5000 });
    // So did the session, with its lock: a row drawn anew after the restart.
    await page.locator(`#sessions-body tr[data-session='${hana}']:not([data-before-restart])`)
      .filter({ hasText: "Hana" }).waitFor({ timeout: 5000 });
    const held = await call("GET", "/v1/applocks/bank");
    assert.ok(JSON.stringify(held.json).includes("ledger"), JSON.stringify(held.json));
    // Live again: a new checkout appears at once.
    await call("POST", "/v1/records/docs/19/checkout", { owner: "Noor", ttl_ms: 60000 });
    await row("docs", "19").filter({ hasText: "Noor is editing" }).waitFor({ timeout: 1000 });
    assert.equal(await page.evaluate(() => window.notReloaded), true);
    await call("DELETE", `/v1/sessions/${hana}`);
  });
});

describe("the dashboard with tokens", () => {
  const readToken = "docs-reader-token-0001";
  const adminToken = "ops-admin-token-000001";
  const secured = new Server({
    tokens: [
      { token: readToken, principal: "docs", namespaces: ["docs"], role: "read" },
      { token: adminToken, principal: "ops", namespaces: ["*"], role: "admin" },
    ],
  });
  let context = null;
  let tab = null;

  before(async () => {
    await secured.start();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    tab = await context.newPage();
  });
  after(async () => {
    if (context) await context.close();
    await secured.stop();
  });

  test("asks for a token, and a reader sees rows but no administrator actions", async () => {
    await tab.goto(`${secured.url}/`);
    await tab.locator("#token-dialog[open]").waitFor({ timeout: 5000 });
    await tab.locator("#token-input").fill(readToken);
    await tab.keyboard.press("Enter");
    await tab.locator("body[data-live='true']").waitFor({ timeout: 5000 });
    assert.match(await tab.locator("#who").textContent(), /docs \(read\)/);
    await secured.call("PUT", "/v1/records/docs/7", { body: "Seed order" }, adminToken);
    await secured.call("POST", "/v1/records/docs/7/checkout", { owner: "Asha", ttl_ms: 60000 }, adminToken);
    const held = tab.locator("#records-body tr[data-key='7'][data-state='locked']");
    await held.filter({ hasText: "Asha is editing" }).waitFor({ timeout: 1000 });
    assert.equal(await held.locator("button").count(), 0);
    assert.equal(await tab.locator("#records-body th", { hasText: "Action" }).count(), 0);
  });

  test("an administrator breaks a checkout after confirming", async () => {
    await tab.evaluate(() => sessionStorage.clear());
    await tab.goto(`${secured.url}/`);
    await tab.locator("#token-dialog[open]").waitFor({ timeout: 5000 });
    await tab.locator("#token-input").fill(adminToken);
    await tab.locator("#token-dialog button[value='ok']").click();
    await tab.locator("body[data-live='true']").waitFor({ timeout: 5000 });
    assert.match(await tab.locator("#who").textContent(), /ops \(admin\)/);
    const held = tab.locator("#records-body tr[data-key='7'][data-state='locked']");
    await held.waitFor({ timeout: 2000 });
    // From the keyboard: the button opens the dialog; Escape cancels it,
    // and nothing changes.
    await held.locator("button", { hasText: "Break" }).focus();
    await tab.keyboard.press("Enter");
    await tab.locator("#confirm[open]").waitFor({ timeout: 1000 });
    await tab.keyboard.press("Escape");
    await tab.locator("#confirm:not([open])").waitFor({ state: "attached", timeout: 1000 });
    await sleep(300);
    assert.equal((await secured.call("GET", "/v1/records/docs/7", null, adminToken)).json.state, "locked");
    // Confirming breaks it, and the row turns free from the event.
    await held.locator("button", { hasText: "Break" }).click();
    await tab.locator("#confirm[open]").waitFor({ timeout: 1000 });
    await tab.locator("#confirm-ok").click();
    await tab.locator("#records-body tr[data-key='7'][data-state='free']").waitFor({ timeout: 2000 });
    assert.equal((await secured.call("GET", "/v1/records/docs/7", null, adminToken)).json.state, "free");
  });

  test("an administrator ends a session after confirming", async () => {
    const opened = await secured.call("POST", "/v1/sessions", { name: "Kofi", ttl_ms: 60000 }, adminToken);
    assert.equal(opened.status, 201);
    const sessionRow = tab.locator(`#sessions-body tr[data-session='${opened.json.id}']`);
    await sessionRow.filter({ hasText: "Kofi" }).waitFor({ timeout: 3000 });
    await sessionRow.locator("button", { hasText: "End" }).click();
    await tab.locator("#confirm[open]").filter({ hasText: "End this session?" }).waitFor({ timeout: 1000 });
    await tab.locator("#confirm-ok").click();
    await sessionRow.waitFor({ state: "detached", timeout: 3000 });
    const gone = await secured.call("POST", `/v1/sessions/${opened.json.id}/keepalive`, null, adminToken);
    assert.equal(gone.status, 404);
  });

  test("a holder's hold limit counts down, and an administrator breaks its lock", async () => {
    const opened = await secured.call("POST", "/v1/sessions", { name: "Lena", ttl_ms: 60000 }, adminToken);
    assert.equal(opened.status, 201);
    const id = opened.json.id;
    const took = await secured.call("POST", "/v1/applocks/jobs/acquire", { session: id, resource: "nightly",
      mode: "Exclusive", owner: "Session", max_hold_ms: 600000 }, adminToken);
    assert.equal(took.status, 200);
    const row = tab.locator("#applocks-body tr[data-resource='nightly']");
    await row.filter({ hasText: "Lena" }).filter({ hasText: "taken back in" }).waitFor({ timeout: 3000 });
    await row.locator("button", { hasText: "Break" }).click();
    await tab.locator("#confirm[open]").filter({ hasText: "Break Lena's hold?" }).waitFor({ timeout: 1000 });
    await tab.locator("#confirm-ok").click();
    await row.waitFor({ state: "detached", timeout: 3000 });
    const told = await secured.call("POST", `/v1/sessions/${id}/keepalive`, null, adminToken);
    assert.deepEqual(told.json.lost.map((l) => [l.resource, l.reason]), [["nightly", "broken"]]);
  });
});

// This machine's wall clock stepped an hour each way under an open page
// (Playwright's clock: setSystemTime moves Date.now, and neither
// performance.now nor the timers, as a step of the machine's clock does):
// countdowns run on, and an event still refreshes its view at once.
describe("the dashboard when this machine's clock steps", () => {
  const stepped = new Server();
  let context = null;
  let tab = null;
  const hour = 3600 * 1000;

  before(async () => {
    await stepped.start();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    tab = await context.newPage();
    tab.on("pageerror", (e) => { throw e; });
    await tab.clock.install();  // the real time, running
    await tab.goto(`${stepped.url}/`);
    await tab.locator("body[data-live='true']").waitFor({ timeout: 10000 });
  });
  after(async () => {
    if (context) await context.close();
    await stepped.stop();
  });

  const lease = (key) => tab.locator(`#records-body section[data-ns='docs'] tr[data-key='${key}']`);
  // Held, with at most its minute left (not free, not an hour more).
  const withinAMinute = /Asha is editing.* — (0:[0-5]\d|1:00) left/s;
  const lock = (resource) => tab.locator(`#applocks-body tr[data-resource='${resource}']`);

  test("an hour forward: a lease counts down from its ttl, not from an hour later", async () => {
    const r = await stepped.call("POST", "/v1/records/docs/1/checkout", { owner: "Asha", ttl_ms: 60000 });
    assert.equal(r.status, 200);
    await lease("1").filter({ hasText: "Asha is editing" }).waitFor({ timeout: 2000 });
    await tab.clock.setSystemTime(Date.now() + hour);
    await sleep(1500);  // past a countdown tick
    assert.match(await lease("1").textContent(), withinAMinute);
  });

  test("an hour back: an event still refreshes its view at once", async () => {
    const session = await stepped.call("POST", "/v1/sessions", { name: "Ravi", ttl_ms: 120000 });
    const grant = (resource) => stepped.call("POST", "/v1/applocks/bank/acquire",
      { session: session.json.id, resource, mode: "Exclusive", owner: "Session", timeout_ms: 0 });
    assert.equal((await grant("before-the-step")).json.result, 0);
    await lock("before-the-step").waitFor({ timeout: 3000 });
    await tab.clock.setSystemTime(Date.now());  // from an hour ahead
    assert.equal((await grant("after-the-step")).json.result, 0);
    await lock("after-the-step").waitFor({ timeout: 3000 });
    assert.match(await lease("1").textContent(), withinAMinute);
  });
});
