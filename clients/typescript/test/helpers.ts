// Spawns real `leasehold serve` processes for the tests (LEASEHOLD_BINARY).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "../src/index.js";

export const binary = process.env.LEASEHOLD_BINARY;

export function requireBinary() {
  if (!binary) throw new Error("LEASEHOLD_BINARY is not set: point it at a built `leasehold` executable");
  return binary;
}

/** A server of the test's own; restart() keeps its port and data. */
export interface ServerOptions {
  /** serve's --config, as JSON. */
  config?: unknown;
  /** More arguments of `leasehold serve`; with `--tls-cert` among them it serves https. */
  args?: string[];
}

export class TestServer {
  readonly dir: string;
  args: string[];
  readonly configFile: string | undefined;
  port: number;
  proc: ChildProcess | undefined;

  constructor({ config, args = [] }: ServerOptions = {}) {
    this.dir = mkdtempSync(join(tmpdir(), "leasehold-ts-"));
    this.args = args;
    this.configFile = undefined;
    if (config !== undefined) {
      this.configFile = join(this.dir, "config.json");
      writeFileSync(this.configFile, JSON.stringify(config));
    }
    this.port = 0;
    this.proc = undefined;
  }

  static async start(options?: ServerOptions): Promise<TestServer> {
    const server = new TestServer(options);
    await server.launch();
    return server;
  }

  get url(): string {
    return `${this.args.includes("--tls-cert") ? "https" : "http"}://127.0.0.1:${this.port}`;
  }

  /** /healthz answers 200; over https (whose certificate may be one a test means to be refused) the port accepting connections is enough. */
  private async ready(): Promise<boolean> {
    if (this.url.startsWith("https:")) {
      return new Promise((done) => {
        const socket = connect(this.port, "127.0.0.1");
        socket.once("connect", () => {
          socket.destroy();
          done(true);
        });
        socket.once("error", () => done(false));
      });
    }
    const res = await fetch(`${this.url}/healthz`);
    await res.arrayBuffer();
    return res.status === 200;
  }

  async launch() {
    const portFile = join(this.dir, "port");
    rmSync(portFile, { force: true });
    const args = ["serve", "--listen", `127.0.0.1:${this.port}`, "--port-file", portFile, "--log-level", "warn"];
    if (!this.args.includes("--store")) args.push("--data", join(this.dir, "data"));
    if (this.configFile) args.push("--config", this.configFile);
    args.push(...this.args);
    this.proc = spawn(requireBinary(), args, { stdio: ["ignore", "ignore", "inherit"] });
    const proc = this.proc;
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) throw new Error(`leasehold exited with ${proc.exitCode}`);
      try {
        this.port = Number(readFileSync(portFile, "utf8").trim());
        if (this.port > 0 && (await this.ready())) return;
      } catch {}
      await sleep(20);
    }
    throw new Error("leasehold did not become healthy");
  }

  /** kill -9: nothing flushed, connections broken. */
  async kill() {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGKILL");
    await exited;
  }

  async restart() {
    await this.kill();
    await this.launch();
  }

  async stop() {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** A raw API call, bypassing the client. */
  async api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(this.url + path, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
}

/**
 * A server of the test file's own and a client of it: started before the
 * file's tests, stopped after them. Read both through the returned object.
 */
export function serverAndClient(options?: ServerOptions): { server: TestServer; client: Client } {
  const fixture = {} as { server: TestServer; client: Client };
  before(async () => {
    fixture.server = await TestServer.start(options);
    fixture.client = new Client({ url: fixture.server.url });
  });
  after(async () => {
    await fixture.server?.stop();
  });
  return fixture;
}

/**
 * The TLS tests' throwaway certificates, made by scripts/test-certs in a
 * folder of their own (its header lists them: ca.pem, server.pem,
 * server-expired.pem, client-billing.pem, …). Remove the folder after.
 */
export function makeCerts(): string {
  const dir = mkdtempSync(join(tmpdir(), "leasehold-certs-"));
  execFileSync(resolve(import.meta.dirname, "../../../../scripts/test-certs"), [dir], { stdio: "ignore" });
  return dir;
}

/** Waits until `predicate()` is true, or throws after `ms`. */
export async function eventually(predicate: () => unknown, ms = 10_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await sleep(25);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Resolves when `signal` aborts. */
export function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener("abort", () => resolve(signal.reason), { once: true });
  });
}
