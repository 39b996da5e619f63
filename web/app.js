// The leasehold dashboard: plain JavaScript over the public HTTP API.
// It reads each view once, then keeps it current from /v1/events: an event
// changes the DOM at once where it carries enough (checkouts, deadlocks,
// the rate chart) and otherwise asks for a fresh read of that one view, at
// most once a second. A full re-read every 30 s is only a safety net.
"use strict";

(() => {
  const TOKEN_KEY = "leasehold.token";
  const REFRESH_ALL_MS = 30000;
  const VIEW_THROTTLE_MS = 1000;
  const RECORD_LIMIT = 200;
  const CHART_BUCKET_S = 10;
  // GET /v1/applocks/{ns} lists every resource; beyond this many the page
  // shows the count instead of asking for a list that large every second.
  const LOCK_LIST_LIMIT = 1000;

  const $ = (id) => document.getElementById(id);

  const state = {
    // The server's clock minus this page's monotonic clock
    // (performance.now); this machine's wall clock until the server answers.
    offsetMs: Date.now() - performance.now(),
    bestRttMs: Infinity,  // the offset comes from the fastest round trip
    me: null,             // GET /v1/whoami
    namespaces: new Map(),  // ns -> {keys, active_checkouts, topics}
    records: new Map(),     // ns -> Map(key -> record)
    recordsMore: new Map(), // ns -> whether the list was cut
    locks: new Map(),       // ns -> lock list
    semaphores: new Map(),  // ns -> semaphore list
    outbox: new Map(),      // "ns\u0000topic" -> summary
    sessions: [],
    deadlocks: [],
    rate: new Map(),        // unix second -> {a, c}
    stats: null,
    online: null,         // null until the first answer or failure
    live: false,          // the events stream is open
    everLive: false,
  };

  // ---- Time ------------------------------------------------------------

  // The server's clock, counted on with the monotonic clock: a step of this
  // machine's wall clock moves no countdown.
  const serverNow = () => performance.now() + state.offsetMs;

  function noteServerTime(nowText, sentAt, receivedAt) {
    if (!nowText) return;
    const rtt = receivedAt - sentAt;
    if (rtt > state.bestRttMs * 2 + 50) return;  // a slow answer says little
    state.bestRttMs = Math.min(state.bestRttMs, rtt);
    state.offsetMs = Date.parse(nowText) - (sentAt + receivedAt) / 2;
  }

  function formatLeft(ms) {
    const s = Math.max(0, Math.ceil(ms / 1000));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    const ss = String(s % 60).padStart(2, "0");
    return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
  }

  function formatAgo(iso) {
    const s = Math.max(0, Math.round((serverNow() - Date.parse(iso)) / 1000));
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min`;
    return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  }

  const clockTime = (iso) =>
    new Date(iso).toLocaleTimeString([], { hour12: false });

  // ---- DOM helpers -------------------------------------------------------

  // el("td", {class: "x", dataset: {key: "17"}}, "text", childNode, …)
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "dataset") Object.assign(node.dataset, v);
      else if (k === "onclick") node.addEventListener("click", v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  const svgEl = (tag, attrs) => {
    const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    return node;
  };

  function table(caption, headers, rows, cls) {
    return el("table", { class: cls },
      el("caption", { class: "sr-only" }, caption),
      el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, rows));
  }

  // A cell that shows its column name when rows stack on a narrow screen.
  const td = (label, ...children) => el("td", { "data-label": label }, ...children);

  const isAdmin = () => state.me && state.me.role === "admin";

  // ---- HTTP --------------------------------------------------------------

  class HttpError extends Error {
    constructor(status, body) {
      super((body && body.error && body.error.message) || `HTTP ${status}`);
      this.status = status;
      this.body = body;
    }
  }

  function authHeaders() {
    const token = sessionStorage.getItem(TOKEN_KEY);
    return token ? { Authorization: `Bearer ${token}` } : {};
  }

  async function api(method, path, body) {
    const sentAt = performance.now();
    let res;
    try {
      res = await fetch(path, {
        method,
        headers: { ...authHeaders(), ...(body ? { "Content-Type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
        cache: "no-store",
      });
    } catch (e) {
      setOnline(false);
      throw e;
    }
    setOnline(true);
    const text = await res.text();
    const json = text ? JSON.parse(text) : null;
    if (json && json.now) noteServerTime(json.now, sentAt, performance.now());
    if (res.status === 401) askForToken();
    if (!res.ok) throw new HttpError(res.status, json);
    return json;
  }

  const enc = encodeURIComponent;

  // ---- Connection state ----------------------------------------------------

  function setOnline(online) {
    if (state.online === online) return;
    state.online = online;
    showConnection();
  }

  function showConnection() {
    const conn = $("conn"), banner = $("banner");
    let s, text, alert = "";
    if (state.online === false) {
      s = "offline";
      text = "Offline";
      alert = `The server at ${location.host} cannot be reached. ` +
        "What you see may be out of date; retrying every few seconds.";
    } else if (state.live) {
      s = "live";
      text = "Live";
    } else if (!state.everLive) {
      s = "connecting";
      text = "Connecting…";
    } else {
      s = "reconnecting";
      text = "Reconnecting…";
      alert = "Live updates were interrupted; reconnecting. " +
        "What you see may be out of date.";
    }
    conn.dataset.state = s;
    $("conn-text").textContent = text;
    document.body.dataset.conn = s;
    banner.hidden = !alert;
    banner.textContent = alert;
  }

  // ---- Token -------------------------------------------------------------

  let askingForToken = false;
  function askForToken() {
    $("signin").hidden = false;
    if (askingForToken) return;
    askingForToken = true;
    const dialog = $("token-dialog");
    $("token-input").value = "";
    dialog.returnValue = "";
    dialog.showModal();
  }

  $("token-dialog").addEventListener("close", () => {
    askingForToken = false;
    const dialog = $("token-dialog");
    const token = $("token-input").value.trim();
    if (dialog.returnValue === "ok" && token) {
      sessionStorage.setItem(TOKEN_KEY, token);
      $("signin").hidden = true;
      start();
    }
  });
  $("signin").addEventListener("click", askForToken);
  // Cancel is not a submit button, so that Enter in the token field signs in.
  for (const b of document.querySelectorAll("dialog [data-close]")) {
    b.addEventListener("click", () => b.closest("dialog").close("cancel"));
  }

  // ---- Confirmation ------------------------------------------------------

  function confirmAction(title, text, verb) {
    const dialog = $("confirm");
    $("confirm-title").textContent = title;
    $("confirm-text").textContent = text;
    $("confirm-ok").textContent = verb;
    dialog.returnValue = "";
    dialog.showModal();
    return new Promise((resolve) => {
      dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"),
        { once: true });
    });
  }

  async function adminAction(title, text, verb, method, path, body) {
    if (!(await confirmAction(title, text, verb))) return;
    try {
      await api(method, path, body);
    } catch (e) {
      flash(`${verb} failed: ${e.message}`);
    }
  }

  function flash(message) {
    const banner = $("banner");
    banner.hidden = false;
    banner.textContent = message;
    setTimeout(showConnection, 6000);
  }

  // ---- Loading -------------------------------------------------------------

  const timers = new Map();
  // Runs fn soon, at most once per VIEW_THROTTLE_MS for each key.
  function refreshSoon(key, fn) {
    const t = timers.get(key);
    if (t && t.pending) return;
    const wait = t ? Math.max(0, t.last + VIEW_THROTTLE_MS - performance.now()) : 0;
    const entry = { pending: true, last: t ? t.last : 0 };
    timers.set(key, entry);
    setTimeout(async () => {
      entry.pending = false;
      entry.last = performance.now();
      try { await fn(); } catch (e) { /* shown by the connection state */ }
    }, wait);
  }

  // Answers to reads started at different times may arrive in any order, so a
  // view keeps only the answer to its newest read: an older answer arriving
  // late would undo what a newer one or an event already showed.
  let readsStarted = 0;
  const newestShown = new Map();  // view -> number of the read it shows

  async function readView(view, path) {
    const number = ++readsStarted;
    const answer = await api("GET", path);
    if ((newestShown.get(view) ?? 0) > number) return null;
    newestShown.set(view, number);
    return answer;
  }

  // Record events change the records view directly, so a list read while one
  // arrived may lack it; such a list is read again rather than shown.
  const recordEvents = new Map();  // ns -> record events seen
  const recordEventsIn = (ns) => recordEvents.get(ns) ?? 0;

  async function loadStats() {
    const s = await readView("stats", "/v1/stats");
    if (!s) return;
    state.stats = s;
    if (s.rate) {
      state.rate.clear();
      const first = Date.parse(s.rate.first_at) / 1000;
      s.rate.applocks.forEach((a, i) => {
        if (a || s.rate.checkouts[i]) state.rate.set(first + i, { a, c: s.rate.checkouts[i] });
      });
    }
    renderOverview();
    renderChart();
  }

  async function loadNamespaces() {
    const eventsBefore = new Map(recordEvents);
    const changedSince = (ns) => recordEventsIn(ns) !== (eventsBefore.get(ns) ?? 0);
    const r = await readView("namespaces", "/v1/namespaces");
    if (!r) return;
    const seen = new Set();
    for (const n of r.namespaces) {
      seen.add(n.ns);
      state.namespaces.set(n.ns, n);
    }
    // What the server no longer has goes from the page too.
    // A namespace that records arrived in since the read began stays.
    for (const map of [state.namespaces, state.records, state.locks, state.semaphores]) {
      for (const ns of [...map.keys()]) if (!seen.has(ns) && !changedSince(ns)) map.delete(ns);
    }
    for (const [k, t] of [...state.outbox]) {
      const n = state.namespaces.get(t.ns);
      if (!n || !n.topics.includes(t.topic)) state.outbox.delete(k);
    }
    await Promise.all([...state.namespaces.values()].map((n) => Promise.all([
      n.keys > 0 || changedSince(n.ns) ? loadRecords(n.ns) : dropRecords(n.ns),
      n.lock_resources > 0 ? loadLocks(n.ns) : state.locks.delete(n.ns),
      n.semaphores > 0 ? loadSemaphores(n.ns) : state.semaphores.delete(n.ns),
      ...n.topics.map((t) => loadOutbox(n.ns, t)),
    ])));
    renderRecords();
    renderLocks();
    renderSemaphores();
    renderOutbox();
  }

  function knowNamespace(ns) {
    if (!ns || state.namespaces.has(ns)) return;
    state.namespaces.set(ns, { ns, keys: 0, active_checkouts: 0, lock_resources: 0, semaphores: 0,
      topics: [] });
  }

  async function loadRecords(ns) {
    const eventsBefore = recordEventsIn(ns);
    const r = await readView(`records:${ns}`, `/v1/records/${enc(ns)}?limit=${RECORD_LIMIT}`);
    if (!r) return;
    if (recordEventsIn(ns) !== eventsBefore) {
      refreshSoon(`records:${ns}`, () => loadRecords(ns));
      return;
    }
    const map = new Map();
    for (const rec of r.records) map.set(rec.key, rec);
    state.records.set(ns, map);
    state.recordsMore.set(ns, r.next !== null);
    renderRecords();
  }

  function dropRecords(ns) {
    state.records.delete(ns);
  }

  async function loadLocks(ns) {
    const known = state.namespaces.get(ns);
    if (known && known.lock_resources > LOCK_LIST_LIMIT) {
      state.locks.set(ns, { tooMany: known.lock_resources });
      renderLocks();
      return;
    }
    const r = await readView(`locks:${ns}`, `/v1/applocks/${enc(ns)}`);
    if (!r) return;
    if (r.locks.length) state.locks.set(ns, r.locks);
    else state.locks.delete(ns);
    renderLocks();
  }

  async function loadSemaphores(ns) {
    const known = state.namespaces.get(ns);
    if (known && known.semaphores > LOCK_LIST_LIMIT) {
      state.semaphores.set(ns, { tooMany: known.semaphores });
      renderSemaphores();
      return;
    }
    const r = await readView(`semaphores:${ns}`, `/v1/semaphores/${enc(ns)}`);
    if (!r) return;
    if (r.semaphores.length) state.semaphores.set(ns, r.semaphores);
    else state.semaphores.delete(ns);
    renderSemaphores();
  }

  async function loadOutbox(ns, topic) {
    const r = await readView(`outbox:${ns}:${topic}`, `/v1/outbox/${enc(ns)}/${enc(topic)}`);
    if (!r) return;
    state.outbox.set(`${ns}\u0000${topic}`, { ns, topic, ...r });
    renderOutbox();
  }

  async function loadSessions() {
    const r = await readView("sessions", "/v1/sessions");
    if (!r) return;
    state.sessions = r.sessions;
    renderSessions();
  }

  async function loadDeadlocks() {
    const r = await readView("deadlocks", "/v1/deadlocks");
    if (!r) return;
    state.deadlocks = r.deadlocks;
    renderDeadlocks();
  }

  // The server's version, in the footer; among several nodes (docs/ha.md):
  // this node's role, the leader, the epoch and the nodes. A node of its
  // own shows no cluster line.
  async function loadCluster() {
    const c = await readView("cluster", "/v1/cluster");
    if (!c) return;
    $("version").textContent = `leasehold ${c.version}`;
    const line = $("cluster");
    line.hidden = c.node === null;
    if (line.hidden) return;
    const nodes = c.nodes.map((n) => `${n.node.split("#")[0]} (${n.role})`).join(", ");
    const leader = c.leader
      ? el("a", { href: c.leader + "/" }, c.leader_node ? c.leader_node.split("#")[0] : c.leader)
      : "none yet";
    line.replaceChildren(
      c.role === "leader" ? "This node leads" : "Standby; the leader is ",
      c.role === "leader" ? "" : leader,
      ` · epoch ${c.epoch} · nodes: ${nodes || "–"}`);
    line.dataset.role = c.role;
  }

  async function loadAll() {
    await Promise.all([loadStats(), loadNamespaces(), loadSessions(), loadDeadlocks(),
      loadCluster()]);
  }

  // ---- Overview --------------------------------------------------------------

  function renderOverview() {
    const s = state.stats;
    if (!s) return;
    $("t-sessions").textContent = s.sessions;
    $("t-locks").textContent = s.granted_locks;
    $("t-waiting").textContent = s.waiting;
    $("t-checkouts").textContent = s.active_checkouts;
    $("t-deadlocks").textContent = s.deadlocks_last_hour ?? "–";
    $("t-timeouts").textContent = s.timeouts_last_hour ?? "–";
    $("t-waiting").parentElement.classList.toggle("alert", s.waiting > 0);
    $("t-deadlocks").parentElement.classList.toggle("alert", s.deadlocks_last_hour > 0);
  }

  function renderChart() {
    const svg = $("rate-chart");
    const nowS = Math.floor(serverNow() / 1000);
    const buckets = 600 / CHART_BUCKET_S;
    const first = nowS - 600 + 1;
    for (const s of state.rate.keys()) if (s < first) state.rate.delete(s);
    const bars = [];
    let peak = 0, total = 0;
    for (let b = 0; b < buckets; b++) {
      let a = 0, c = 0;
      for (let s = 0; s < CHART_BUCKET_S; s++) {
        const v = state.rate.get(first + b * CHART_BUCKET_S + s);
        if (v) { a += v.a; c += v.c; }
      }
      total += a + c;
      bars.push({ a: a / CHART_BUCKET_S, c: c / CHART_BUCKET_S });
      peak = Math.max(peak, (a + c) / CHART_BUCKET_S);
    }
    const top = Math.max(1, peak);
    const w = 600 / buckets;
    svg.replaceChildren(svgEl("line", { x1: 0, y1: 89.5, x2: 600, y2: 89.5, class: "axis" }));
    bars.forEach((bar, i) => {
      const ha = (bar.a / top) * 84, hc = (bar.c / top) * 84;
      if (ha > 0) svg.append(svgEl("rect", { x: i * w + 1, width: w - 2, y: 89 - ha, height: ha, class: "applock" }));
      if (hc > 0) svg.append(svgEl("rect", { x: i * w + 1, width: w - 2, y: 89 - ha - hc, height: hc, class: "checkout" }));
    });
    const last = bars[bars.length - 1];
    $("rate-summary").textContent = total === 0
      ? "No acquisitions in the last 10 minutes."
      : `${total} acquisitions in the last 10 minutes; peak ${peak.toFixed(1)}/s, ` +
        `last ${CHART_BUCKET_S} s ${(last.a + last.c).toFixed(1)}/s (10-second averages).`;
  }

  function countAcquisition(at, kind) {
    const s = Math.floor(Date.parse(at) / 1000);
    const v = state.rate.get(s) || { a: 0, c: 0 };
    v[kind] += 1;
    state.rate.set(s, v);
  }

  // ---- Records and checkouts ----------------------------------------------------

  function isLocked(rec) {
    return rec.lock_expires_at && Date.parse(rec.lock_expires_at) > serverNow();
  }

  function recordStatus(rec) {
    if (isLocked(rec)) {
      return el("span", { class: "holder" },
        el("strong", {}, rec.locked_by), " is editing ", el("q", {}, rec.key),
        " — ", el("span", { class: "left", dataset: { expires: rec.lock_expires_at } },
          formatLeft(Date.parse(rec.lock_expires_at) - serverNow())), " left");
    }
    return el("span", { class: "free" }, el("span", { class: "badge free" }, "Free"),
      rec.locked_by ? el("span", { class: "muted" }, ` last held by ${rec.locked_by}`) : null);
  }

  function recordRow(ns, rec) {
    const locked = isLocked(rec);
    const actions = locked && isAdmin()
      ? el("button", {
        type: "button", class: "danger small",
        onclick: () => adminAction("Break this checkout?",
          `${rec.locked_by} holds "${rec.key}" in ${ns}. Breaking it lets anyone ` +
          "check it out; their unsaved work cannot be saved.", "Break checkout",
          "POST", `/v1/records/${enc(ns)}/${enc(rec.key)}/break`),
      }, "Break", el("span", { class: "sr-only" }, ` checkout of ${rec.key}`))
      : null;
    return el("tr", { dataset: { key: rec.key, state: locked ? "locked" : "free" },
      class: locked ? "locked" : "free" },
      el("th", { scope: "row", "data-label": "Key" }, rec.key),
      td("Status", recordStatus(rec)),
      td("Version", rec.has_record ? `v${rec.version}`
        : el("span", { class: "muted" }, rec.write_fence ? "deleted (fenced)" : "lock only")),
      td("Fence", rec.fence ? String(rec.fence) : "–"),
      isAdmin() ? td("Action", actions) : null);
  }

  function renderRecords() {
    const body = $("records-body");
    const spaces = [...state.records.entries()].filter(([, m]) => m.size > 0)
      .sort(([a], [b]) => a.localeCompare(b));
    if (!spaces.length) {
      body.replaceChildren(el("p", { class: "empty" }, "No records or checkouts yet."));
      return;
    }
    body.replaceChildren(...spaces.map(([ns, map]) => {
      const recs = [...map.values()].sort((x, y) =>
        (isLocked(y) - isLocked(x)) || x.key.localeCompare(y.key));
      const held = recs.filter(isLocked).length;
      const headers = ["Key", "Status", "Version", "Fence"];
      if (isAdmin()) headers.push("Action");
      return el("section", { class: "ns", dataset: { ns }, "aria-label": `Namespace ${ns}` },
        el("h3", {}, "Namespace ", el("code", {}, ns),
          el("span", { class: "count" }, ` ${held} checked out of ${recs.length}`)),
        table(`Records and checkouts in ${ns}`, headers, recs.map((r) => recordRow(ns, r)), "records stack"),
        state.recordsMore.get(ns)
          ? el("p", { class: "muted" }, `Showing the first ${RECORD_LIMIT} keys.`) : null);
    }));
  }

  // Many events may arrive in one burst: draw once per frame.
  let recordsFrame = 0;
  function renderRecordsSoon() {
    if (recordsFrame) return;
    recordsFrame = requestAnimationFrame(() => {
      recordsFrame = 0;
      renderRecords();
    });
  }

  // Applies a checkout or record event to the row it names, at once.
  function applyRecordEvent(type, d) {
    recordEvents.set(d.ns, recordEventsIn(d.ns) + 1);
    knowNamespace(d.ns);
    const map = state.records.get(d.ns) || new Map();
    state.records.set(d.ns, map);
    const key = d.resource;
    const rec = map.get(key) || { key, version: 0, has_record: false, fence: 0, locked_by: null, lock_expires_at: null };
    switch (type) {
      case "checkout.granted":
      case "checkout.renewed":
        rec.locked_by = d.holder;
        rec.lock_expires_at = d.until;
        if (d.fence) rec.fence = d.fence;
        break;
      case "checkout.released":
        rec.lock_expires_at = null;
        if (!rec.has_record) { map.delete(key); renderRecordsSoon(); return; }
        break;
      case "checkout.expired":
        if (!rec.has_record && rec.lock_expires_at === null) break;
        rec.lock_expires_at = d.at;
        break;
      case "record.inserted":
      case "record.saved":
        rec.has_record = true;
        if (d.version) rec.version = d.version;
        break;
      case "record.deleted":
        map.delete(key);
        renderRecordsSoon();
        return;
    }
    // Beyond the first RECORD_LIMIT keys the list is cut, as when read.
    if (!map.has(key) && map.size >= RECORD_LIMIT) {
      state.recordsMore.set(d.ns, true);
      return;
    }
    map.set(key, rec);
    renderRecordsSoon();
  }

  // Counts leases down and turns rows free at expiry, without a reload.
  function tick() {
    const now = serverNow();
    let flipped = false;
    for (const node of document.querySelectorAll("[data-expires]")) {
      const left = Date.parse(node.dataset.expires) - now;
      if (left <= 0 && node.closest("#records-body")) flipped = true;
      node.textContent = formatLeft(left);
    }
    if (flipped) {
      renderRecords();
      if (state.stats) {
        state.stats.active_checkouts = [...state.records.values()]
          .reduce((n, m) => n + [...m.values()].filter(isLocked).length, 0);
        renderOverview();
      }
    }
  }

  // ---- Application locks ------------------------------------------------------

  // A holder's hold limit (docs/api.md, "Hold limits and breaks"), and the
  // administrator's break of what its session holds on `path`'s name.
  function holdNotes(h, what, path, body) {
    const who = h.session_name || `session ${h.session}`;
    return [
      h.hold_until ? el("span", { class: "muted" }, " · taken back in ",
        el("span", { dataset: { expires: h.hold_until } }, formatLeft(Date.parse(h.hold_until) - serverNow())))
        : null,
      isAdmin() ? el("button", {
        type: "button", class: "danger small",
        onclick: () => adminAction(`Break ${who}'s hold?`,
          `Breaking takes ${what} back from ${who}; its session goes on and is told at its next keepalive.`,
          "Break", "POST", path, { session: h.session, ...body }),
      }, "Break", el("span", { class: "sr-only" }, ` ${who}'s hold`)) : null,
    ];
  }

  function holderItem(g, ns, l) {
    return el("li", {},
      el("strong", {}, g.session_name || `session ${g.session}`), " ",
      el("span", { class: "mode" }, g.mode), ` · ${g.owner} · ×${g.count}`,
      el("span", { class: "muted" }, ` · since ${clockTime(g.since)} (${formatAgo(g.since)})`),
      ...holdNotes(g, `its lock on ${l.resource}`, `/v1/applocks/${enc(ns)}/break`,
        { resource: l.resource, principal: l.principal }));
  }

  function waiterItem(w) {
    return el("li", {},
      el("strong", {}, w.session_name || `session ${w.session}`), " wants ",
      el("span", { class: "mode" }, w.mode), w.conversion ? " (conversion)" : "",
      el("span", { class: "muted" }, ` · waiting ${formatAgo(w.since)}`),
      w.deadline ? el("span", { class: "muted" }, " · gives up in ",
        el("span", { dataset: { expires: w.deadline } }, formatLeft(Date.parse(w.deadline) - serverNow())))
        : el("span", { class: "muted" }, " · no time limit"));
  }

  function renderLocks() {
    const body = $("applocks-body");
    const spaces = [...state.locks.entries()].sort(([a], [b]) => a.localeCompare(b));
    if (!spaces.length) {
      body.replaceChildren(el("p", { class: "empty" }, "No application locks are held."));
      return;
    }
    body.replaceChildren(...spaces.map(([ns, locks]) =>
      el("section", { class: "ns", dataset: { ns }, "aria-label": `Locks in ${ns}` },
        el("h3", {}, "Namespace ", el("code", {}, ns)),
        locks.tooMany ? el("p", { class: "muted" }, `${locks.tooMany} resources are locked or ` +
          "awaited here: too many to list live. The overview counts them.") : table(`Application locks in ${ns}`, ["Resource", "Held by", "Waiting, in order"],
          locks.map((l) => el("tr", { dataset: { resource: l.resource } },
            el("th", { scope: "row", "data-label": "Resource" }, el("code", {}, l.resource),
              l.principal !== "public" ? el("span", { class: "muted" }, ` (${l.principal})`) : null),
            td("Held by", l.granted.length
              ? el("ul", { class: "plain" }, l.granted.map((g) => holderItem(g, ns, l)))
              : el("span", { class: "muted" }, "nobody")),
            td("Waiting, in order", l.waiting.length || l.lock_delay_until
              ? [lockDelayNote(l.lock_delay_until),
                l.waiting.length ? el("ol", { class: "queue" }, l.waiting.map(waiterItem)) : null]
              : el("span", { class: "muted" }, "nobody")))),
          "locks stack"))));
  }

  // Why waiters wait though nobody holds it: a lock-delay after its holder
  // was lost (docs/api.md, "Lock-delay").
  function lockDelayNote(until, permits) {
    if (!until) return null;
    return el("p", { class: "lock-delay" },
      el("span", { class: "badge warn" }, "lock-delay"), " ",
      permits ? `${permits} permit${permits === 1 ? "" : "s"} of a lost holder held back for ` :
        "a lost holder's lock is held back for ",
      el("span", { dataset: { expires: until } }, formatLeft(Date.parse(until) - serverNow())));
  }

  // ---- Semaphores -------------------------------------------------------------

  // Up to this many permits are drawn one slot each; a larger semaphore is
  // drawn as one bar in proportion.
  const SLOT_LIMIT = 40;

  // The semaphore as a bar of `limit` slots: held (one colour per holder,
  // labelled), held back by a lock-delay, and free.
  function permitBar(s) {
    const parts = [];
    s.holders.forEach((h, i) => parts.push({ n: h.permits, cls: `held h${i % 4}`,
      label: h.session_name || `session ${h.session}` }));
    if (s.lock_delay_permits) parts.push({ n: s.lock_delay_permits, cls: "delayed", label: "lock-delay" });
    const used = parts.reduce((a, p) => a + p.n, 0);
    if (s.limit > used) parts.push({ n: s.limit - used, cls: "free", label: "free" });
    const bar = el("div", { class: "permits", role: "img",
      "aria-label": `${s.held} of ${s.limit} permits held` +
        (s.lock_delay_permits ? `, ${s.lock_delay_permits} held back` : "") });
    for (const p of parts) {
      if (s.limit <= SLOT_LIMIT) {
        for (let i = 0; i < p.n; ++i) bar.append(el("span", { class: `slot ${p.cls}`, title: p.label }));
      } else {
        bar.append(el("span", { class: `slot ${p.cls}`, title: `${p.label}: ${p.n}`,
          style: `flex: ${p.n} 1 0` }));
      }
    }
    return bar;
  }

  function permitHolderItem(h, i, ns, s) {
    return el("li", {},
      el("span", { class: `swatch h${i % 4}`, "aria-hidden": "true" }), " ",
      el("strong", {}, h.session_name || `session ${h.session}`), ` · ${h.permits} permit` +
        (h.permits === 1 ? "" : "s") + ` · ${h.owner}`,
      el("span", { class: "muted" }, ` · since ${clockTime(h.since)} (${formatAgo(h.since)})`),
      ...holdNotes(h, `its permits of ${s.name}`, `/v1/semaphores/${enc(ns)}/${enc(s.name)}/break`,
        { principal: s.principal }));
  }

  function permitWaiterItem(w) {
    return el("li", {},
      el("strong", {}, w.session_name || `session ${w.session}`), ` wants ${w.permits}`,
      w.conversion ? " more" : "",
      el("span", { class: "muted" }, ` · waiting ${formatAgo(w.since)}`),
      w.deadline ? el("span", { class: "muted" }, " · gives up in ",
        el("span", { dataset: { expires: w.deadline } }, formatLeft(Date.parse(w.deadline) - serverNow())))
        : el("span", { class: "muted" }, " · no time limit"));
  }

  function renderSemaphores() {
    const body = $("semaphores-body");
    const spaces = [...state.semaphores.entries()].sort(([a], [b]) => a.localeCompare(b));
    if (!spaces.length) {
      body.replaceChildren(el("p", { class: "empty" }, "No semaphores are in use."));
      return;
    }
    body.replaceChildren(...spaces.map(([ns, sems]) =>
      el("section", { class: "ns", dataset: { ns }, "aria-label": `Semaphores in ${ns}` },
        el("h3", {}, "Namespace ", el("code", {}, ns)),
        sems.tooMany ? el("p", { class: "muted" }, `${sems.tooMany} semaphores are in use here: ` +
          "too many to list live.") : table(`Semaphores in ${ns}`, ["Semaphore", "Permits", "Waiting, in order"],
          sems.map((s) => el("tr", { dataset: { semaphore: s.name } },
            el("th", { scope: "row", "data-label": "Semaphore" }, el("code", {}, s.name),
              s.principal !== "public" ? el("span", { class: "muted" }, ` (${s.principal})`) : null,
              el("div", { class: "muted" }, `${s.held} of ${s.limit} held`)),
            td("Permits", permitBar(s), el("ul", { class: "plain" }, s.holders.map((h, i) => permitHolderItem(h, i, ns, s)))),
            td("Waiting, in order", s.waiting.length || s.lock_delay_until
              ? [lockDelayNote(s.lock_delay_until, s.lock_delay_permits),
                s.waiting.length ? el("ol", { class: "queue" }, s.waiting.map(permitWaiterItem)) : null]
              : el("span", { class: "muted" }, "nobody")))),
          "locks stack"))));
  }

  // ---- Deadlocks --------------------------------------------------------------

  // The cycle as a ring: each arrow runs from a waiter to the session it
  // waits for, labelled with what it wants.
  let diagrams = 0;
  function cycleDiagram(d) {
    const arrow = `arrow-${++diagrams}`;
    const names = [];
    const index = new Map();
    for (const e of d.cycle) {
      for (const [id, name] of [[e.waiter, e.waiter_name], [e.holder, e.holder_name]]) {
        if (!index.has(id)) { index.set(id, names.length); names.push({ id, name: name || `session ${id}` }); }
      }
    }
    const n = names.length, cx = 180, cy = n === 2 ? 62 : 105, r = n === 2 ? 110 : 70;
    const pos = names.map((_, i) => {
      const a = n === 2 ? Math.PI * i : (2 * Math.PI * i) / n - Math.PI / 2;
      return { x: cx + r * Math.cos(a), y: cy + (n === 2 ? 0 : r * Math.sin(a)) };
    });
    const svg = svgEl("svg", { viewBox: `0 0 360 ${n === 2 ? 124 : 210}`, class: "cycle",
      "aria-hidden": "true" });
    const defs = svgEl("defs");
    const marker = svgEl("marker", { id: arrow, viewBox: "0 0 10 10", refX: 9, refY: 5,
      markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
    marker.append(svgEl("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }));
    defs.append(marker);
    svg.append(defs);
    for (const e of d.cycle) {
      const a = pos[index.get(e.waiter)], b = pos[index.get(e.holder)];
      const dx = b.x - a.x, dy = b.y - a.y, len = Math.hypot(dx, dy) || 1;
      const ux = dx / len, uy = dy / len;
      const chordX = (a.x + b.x) / 2, chordY = (a.y + b.y) / 2;
      // Bend each arrow away from the ring's centre, so arrows and labels
      // stay apart; two sessions have one chord, so bend to its sides.
      let ox = chordX - cx, oy = chordY - cy;
      const olen = Math.hypot(ox, oy);
      if (olen < 1) { ox = uy; oy = -ux; } else { ox /= olen; oy /= olen; }
      const bend = n === 2 ? 46 : 34;
      const mx = chordX + ox * bend, my = chordY + oy * bend;
      const sx = a.x + ux * 34, sy = a.y + uy * 18, ex = b.x - ux * 34, ey = b.y - uy * 18;
      svg.append(svgEl("path", { d: `M${sx},${sy} Q${mx},${my} ${ex},${ey}`, class: "edge",
        "marker-end": `url(#${arrow})` }));
      // Just outside the curve's middle; the list below says the mode.
      const lx = chordX + ox * (bend / 2 + 10), ly = chordY + oy * (bend / 2 + 10) + 4;
      const anchor = ox > 0.35 ? "start" : ox < -0.35 ? "end" : "middle";
      const label = svgEl("text", { x: lx, y: ly, class: "edge-label", "text-anchor": anchor });
      label.textContent = e.resource.length > 22 ? `${e.resource.slice(0, 21)}…` : e.resource;
      svg.append(label);
    }
    names.forEach((s, i) => {
      const victim = s.id === d.victim;
      svg.append(svgEl("rect", { x: pos[i].x - 32, y: pos[i].y - 16, width: 64, height: 32, rx: 8,
        class: victim ? "node victim" : "node" }));
      const t = svgEl("text", { x: pos[i].x, y: pos[i].y + 5, "text-anchor": "middle", class: "node-label" });
      t.textContent = s.name.length > 9 ? `${s.name.slice(0, 8)}…` : s.name;
      svg.append(t);
    });
    return svg;
  }

  function renderDeadlocks() {
    const body = $("deadlocks-body");
    const hourAgo = serverNow() - 3600 * 1000;
    const list = state.deadlocks.filter((d) => Date.parse(d.at) >= hourAgo);
    if (!list.length) {
      body.replaceChildren(el("p", { class: "empty" }, "No deadlocks in the last hour."));
      return;
    }
    body.replaceChildren(el("ol", { class: "deadlocks plain" }, list.slice(0, 10).map((d) =>
      el("li", {}, el("article", { class: "deadlock", "aria-label": `Deadlock at ${clockTime(d.at)}` },
        el("h3", {}, `${clockTime(d.at)} in `, el("code", {}, d.ns || "?"),
          el("span", { class: "muted" }, ` · ${formatAgo(d.at)} ago`)),
        el("p", {}, el("strong", {}, d.victim_name || `session ${d.victim}`),
          " was chosen as the victim (answered -3) asking ", wants(d.permits, d.mode),
          " on ", el("code", {}, d.resource), "."),
        el("figure", {}, cycleDiagram(d),
          el("figcaption", {}, el("ol", { class: "cycle-text" }, d.cycle.map((e) =>
            el("li", {}, el("strong", {}, e.waiter_name || e.waiter), " waits for ",
              el("strong", {}, e.holder_name || e.holder), ": wants ",
              wants(e.permits, e.wanted), " on ", el("code", {}, e.resource)))))))))));
  }

  // What a request wanted: a mode, or permits of a semaphore.
  function wants(permits, mode) {
    return permits ? `${permits} permit${permits === 1 ? "" : "s"}` : el("span", { class: "mode" }, mode);
  }

  // ---- Outbox -------------------------------------------------------------------

  function renderOutbox() {
    const body = $("outbox-body");
    const topics = [...state.outbox.values()].sort((a, b) =>
      a.ns.localeCompare(b.ns) || a.topic.localeCompare(b.topic));
    if (!topics.length) {
      body.replaceChildren(el("p", { class: "empty" }, "No outbox topics."));
      return;
    }
    const dead = topics.flatMap((t) => t.dead_letters.map((m) => ({ ...m, ns: t.ns, topic: t.topic })));
    body.replaceChildren(...[
      table("Outbox topics", ["Topic", "Pending", "Claimed", "Dead"], topics.map((t) =>
        el("tr", { class: t.dead ? "has-dead" : null },
          el("th", { scope: "row", "data-label": "Topic" }, el("code", {}, `${t.ns}/${t.topic}`)),
          td("Pending", t.pending), td("Claimed", t.claimed),
          td("Dead", t.dead ? el("span", { class: "badge bad" }, t.dead) : "0"))), "counts stack"),
      dead.length ? el("h3", {}, "Dead letters") : null,
      dead.length ? table("Dead letters", ["Message", "Attempts", "Last consumer", "Gave up"],
        dead.slice(0, 50).map((m) => el("tr", {},
          el("th", { scope: "row", "data-label": "Message" }, el("code", {}, `${m.ns}/${m.topic} #${m.id}`),
            el("span", { class: "muted" }, ` key ${m.key}`)),
          td("Attempts", m.attempts), td("Last consumer", m.consumer || "–"),
          td("Gave up", m.last_lease_expired_at ? `${formatAgo(m.last_lease_expired_at)} ago` : "–"))),
        "stack") : null,
    ].filter(Boolean));
  }

  // ---- Sessions -----------------------------------------------------------------

  function renderSessions() {
    const body = $("sessions-body");
    if (!state.sessions.length) {
      body.replaceChildren(el("p", { class: "empty" }, "No open sessions."));
      return;
    }
    const headers = ["Name", "Locks", "State", "Expires in"];
    if (isAdmin()) headers.push("Action");
    const rows = [...state.sessions].sort((a, b) => (a.name || "").localeCompare(b.name || ""))
      .map((s) => el("tr", { dataset: { session: s.id } },
        el("th", { scope: "row", "data-label": "Name" }, s.name || el("span", { class: "muted" }, "(no name)"),
          el("span", { class: "muted id" }, ` #${s.id}`)),
        td("Locks", s.locks),
        td("State", s.waiting ? el("span", { class: "badge warn" }, "waiting")
          : s.transaction ? el("span", { class: "badge" }, `in transaction ${s.transaction.transaction}`)
            : el("span", { class: "muted" }, "idle")),
        td("Expires in", el("span", { dataset: { expires: s.expires_at } },
          formatLeft(Date.parse(s.expires_at) - serverNow()))),
        isAdmin() ? td("Action", el("button", {
          type: "button", class: "danger small",
          onclick: () => adminAction("End this session?",
            `Ending ${s.name || s.id} releases its ${s.locks} lock(s), rolls back its ` +
            "transaction and cancels its wait.", "End session", "DELETE", `/v1/sessions/${enc(s.id)}`),
        }, "End", el("span", { class: "sr-only" }, ` session ${s.name || s.id}`))) : null));
    body.replaceChildren(table("Open sessions", headers, rows, "sessions stack"));
  }

  // ---- Events ---------------------------------------------------------------

  function onEvent(type, d) {
    if (type === "cluster.leader") refreshSoon("cluster", loadCluster);
    if (d.ns) knowNamespace(d.ns);
    if (type.startsWith("checkout.") || type.startsWith("record.")) {
      applyRecordEvent(type, d);
      if (type === "checkout.granted") countAcquisition(d.at, "c");
    }
    if (type.startsWith("applock.")) {
      refreshSoon(`locks:${d.ns}`, () => loadLocks(d.ns));
      if (type === "applock.granted") countAcquisition(d.at, "a");
      if (type === "applock.deadlock" && d.deadlock) {
        state.deadlocks.unshift({ at: d.at, ns: d.ns, resource: d.resource, mode: d.mode,
          victim: d.deadlock.victim, victim_name: d.session_name, cycle: d.deadlock.cycle });
        renderDeadlocks();
      }
    }
    if (type.startsWith("semaphore.")) {
      refreshSoon(`semaphores:${d.ns}`, () => loadSemaphores(d.ns));
      if (type === "semaphore.deadlock" && d.deadlock) {
        state.deadlocks.unshift({ at: d.at, ns: d.ns, resource: d.resource, permits: d.permits,
          victim: d.deadlock.victim, victim_name: d.session_name, cycle: d.deadlock.cycle });
        renderDeadlocks();
      }
    }
    if (type.startsWith("outbox.") && d.topic) {
      refreshSoon(`outbox:${d.ns}:${d.topic}`, () => loadOutbox(d.ns, d.topic));
    }
    if (type.startsWith("session.") || type.startsWith("transaction.") ||
        type.startsWith("applock.") || type.startsWith("semaphore.")) {
      refreshSoon("sessions", loadSessions);
    }
    refreshSoon("stats", loadStats);
  }

  // EventSource cannot send an Authorization header, so the stream is read
  // with fetch, which can; tokens then never appear in a URL or a log.
  async function readStream(path, signal) {
    const res = await fetch(path, { headers: authHeaders(), signal, cache: "no-store" });
    if (res.status === 401) { askForToken(); throw new Error("unauthorized"); }
    if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
    setOnline(true);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    let opened = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      if (!opened) {
        opened = true;
        streamOpened();
      }
      buffer += value.replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let type = "message", data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) type = line.slice(6).trim();
          else if (line.startsWith("data:")) data += line.slice(5).trimStart();
        }
        if (data) {
          try { onEvent(type, JSON.parse(data)); } catch (e) { console.error(e); }
        }
      }
    }
  }

  let streamAbort = null;
  let streamGeneration = 0;

  function streamOpened() {
    const reconnected = state.live === false && state.everLive;
    state.live = true;
    state.everLive = true;
    document.body.dataset.live = "true";
    showConnection();
    // Events may have been missed while the stream was down: read all again.
    if (reconnected) loadAll().catch(() => {});
  }

  async function keepStreaming(generation) {
    let delay = 1000;
    while (generation === streamGeneration) {
      streamAbort = new AbortController();
      const all = !state.me || state.me.all_namespaces;
      const paths = all ? ["/v1/events"]
        : state.me.namespaces.map((ns) => `/v1/events?ns=${enc(ns)}`);
      try {
        // A token limited to some namespaces watches each of them.
        await Promise.race(paths.map((p) => readStream(p, streamAbort.signal)));
        delay = 1000;
      } catch (e) {
        if (String(e).includes("Failed to fetch") || e instanceof TypeError) setOnline(false);
      }
      streamAbort.abort();
      if (generation !== streamGeneration) return;
      state.live = false;
      document.body.dataset.live = "false";
      showConnection();
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 8000);
    }
  }

  // ---- Start --------------------------------------------------------------------

  function renderWho() {
    const me = state.me;
    $("who").textContent = !me ? "" : me.authentication
      ? `Signed in as ${me.principal} (${me.role})` : "Authentication off";
  }

  async function start() {
    streamGeneration += 1;
    if (streamAbort) streamAbort.abort();
    for (;;) {
      try {
        state.me = await api("GET", "/v1/whoami");
        break;
      } catch (e) {
        if (e instanceof HttpError && e.status === 401) return;  // waits for a token
        await new Promise((r) => setTimeout(r, 3000));
      }
    }
    renderWho();
    keepStreaming(streamGeneration);
    try { await loadAll(); } catch (e) { /* shown by the connection state */ }
  }

  setInterval(tick, 1000);
  setInterval(renderChart, 5000);
  setInterval(() => {
    renderDeadlocks();
    if (state.online !== false) loadAll().catch(() => {});
  }, REFRESH_ALL_MS);
  // While offline, look again every 5 s so that the page recovers on its own.
  setInterval(() => {
    if (state.online === false) api("GET", "/v1/whoami").then(() => loadAll()).catch(() => {});
  }, 5000);

  showConnection();
  start();
})();
