// ServerProcess for the JavaScript tests (tests/browser, tests/contract): a
// real `leasehold serve` in its own temporary directory, on 127.0.0.1. It
// listens on a free port the first time and on the same port and data when
// started again (a restart); start() returns once /healthz answers. With
// {manualClock: true} it serves from memory with a manual clock
// (`--store memory --clock manual`, docs/testing.md) instead. With
// {tls: {cert, key, ca}} (PEM files) it serves HTTPS only, and its URL is
// https://localhost:PORT (the name the test certificates carry).
import {spawn} from 'node:child_process';
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import https from 'node:https';
import {tmpdir} from 'node:os';
import path from 'node:path';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export class ServerProcess {
  // `binary`: the leasehold executable; `config`: a config object, or none.
  constructor(
      binary, config, prefix = 'leasehold-test-',
      {manualClock = false, tls = null} = {}) {
    this.binary = binary;
    this.manualClock = manualClock;
    this.tls = tls;
    this.dir = mkdtempSync(path.join(tmpdir(), prefix));
    this.port = 0;
    this.process = null;
    this.config = null;
    if (config) {
      this.config = path.join(this.dir, 'config.json');
      writeFileSync(this.config, JSON.stringify(config));
    }
  }

  get url() {
    return this.tls ? `https://localhost:${this.port}` :
                      `http://127.0.0.1:${this.port}`;
  }

  // Whether GET /healthz answers 200 (over TLS, trusting tls.ca only).
  async healthy() {
    if (!this.tls) return (await fetch(`${this.url}/healthz`)).ok;
    const ca = readFileSync(this.tls.ca);
    return new Promise((resolve, reject) => {
      https.get(`${this.url}/healthz`, {ca}, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      }).on('error', reject);
    });
  }

  async start() {
    const portFile = path.join(this.dir, 'port');
    rmSync(portFile, {force: true});
    const args = [
      'serve', '--listen', `127.0.0.1:${this.port}`, '--port-file', portFile,
      ...(this.manualClock ? ['--store', 'memory', '--clock', 'manual'] :
                             ['--data', path.join(this.dir, 'data')])
    ];
    if (this.config) args.push('--config', this.config);
    if (this.tls) {
      args.push('--tls-cert', this.tls.cert, '--tls-key', this.tls.key);
    }
    this.process =
        spawn(this.binary, args, {stdio: ['ignore', 'ignore', 'inherit']});
    const until = Date.now() + 15000;
    while (!existsSync(portFile) ||
           readFileSync(portFile, 'utf8').trim() === '') {
      if (Date.now() > until) throw new Error('the server wrote no port file');
      await sleep(25);
    }
    this.port = Number(readFileSync(portFile, 'utf8').trim());
    while (Date.now() < until) {
      try {
        if (await this.healthy()) return;
      } catch { /* not yet */
      }
      await sleep(50);
    }
    throw new Error('the server did not become healthy');
  }

  // SIGKILL, as a crash would; the data directory stays for a restart.
  kill() {
    return this.signal('SIGKILL');
  }

  // SIGTERM (a clean stop), then the directory is removed.
  async stop() {
    await this.signal('SIGTERM');
    rmSync(this.dir, {recursive: true, force: true});
  }

  signal(name) {
    return new Promise((resolve) => {
      if (!this.process || this.process.exitCode !== null) return resolve();
      this.process.once('exit', resolve);
      this.process.kill(name);
    });
  }
}
