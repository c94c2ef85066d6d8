// Shared test helpers: protocol clients over in-memory streams and over a child process, and a
// byte-exact snapshot of a directory tree. (Outside test/, so `node --test` does not run it.)

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { serve } from '../index.mjs';

/** The adapters/node directory. */
export const PACKAGE_DIR = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** A promise with its resolve function exposed, to drive ordering without sleeps. */
export function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Collects parsed JSON lines from a readable stream; `next()` waits for the next one. */
class LineQueue {
  #queue = [];
  #waiters = [];

  constructor(readable) {
    this.raw = [];
    createInterface({ input: readable, crlfDelay: Infinity }).on('line', (line) => {
      this.raw.push(line);
      const message = JSON.parse(line); // a non-JSON line fails the test loudly
      const waiter = this.#waiters.shift();
      if (waiter) waiter(message);
      else this.#queue.push(message);
    });
  }

  next() {
    if (this.#queue.length > 0) return Promise.resolve(this.#queue.shift());
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Messages received but not yet taken with `next()`. */
  get unread() {
    return [...this.#queue];
  }
}

/**
 * Serve `handlers` over in-memory streams; the client writes lines and reads answers, and what
 * the kit logs (a failing handler's stack) is kept in `logged` instead of reaching stderr.
 */
export function serveInMemory(handlers) {
  const input = new PassThrough();
  const output = new PassThrough();
  const logged = [];
  const done = serve(handlers, { input, output, log: { write: (text) => logged.push(text) } });
  const lines = new LineQueue(output);
  return {
    done,
    lines,
    logged,
    /** Send a request object, or a raw line given as a string. */
    send(message) {
      input.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
    },
    /** Write raw bytes (a Buffer), newlines and all, exactly as given. */
    sendBytes(bytes) {
      input.write(bytes);
    },
    next: () => lines.next(),
    /** End the input and wait until `serve` has finished. */
    async end() {
      input.end();
      await done;
      output.end();
    },
  };
}

/**
 * Spawn `node <script>` and speak the protocol with it. `request` resolves with the whole
 * answer (`{id, result}` or `{id, error}`); `call` with the result, throwing on an error answer.
 */
export function spawnHarness(script) {
  const child = spawn(process.execPath, [script], { cwd: PACKAGE_DIR, stdio: ['pipe', 'pipe', 'pipe'] });
  const waiting = new Map();
  const unexpected = [];
  const stdoutLines = [];
  let stderr = '';
  let nextId = 1;
  child.stderr.setEncoding('utf8').on('data', (text) => {
    stderr += text;
  });
  createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
    stdoutLines.push(line);
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      unexpected.push(line);
      return;
    }
    const resolve = waiting.get(message.id);
    if (resolve === undefined) {
      unexpected.push(message);
      return;
    }
    waiting.delete(message.id);
    resolve(message);
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const harness = {
    request(method, params = {}) {
      const id = nextId++;
      const answered = new Promise((resolve) => waiting.set(id, resolve));
      child.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
      return answered;
    },
    async call(method, params = {}) {
      const answer = await harness.request(method, params);
      if (answer.error) throw new Error(answer.error.message);
      return answer.result;
    },
    /** Call a tool; resolves with the wire result. */
    tool(session, name, args) {
      return harness.call('call_tool', { session, name, arguments: args });
    },
    /** Send a raw line. */
    sendRaw(line) {
      child.stdin.write(`${line}\n`);
    },
    /** End stdin and wait for the exit; returns what the process did besides answering. */
    async close() {
      child.stdin.end();
      const { code, signal } = await exited;
      return { code, signal, unexpected, stdoutLines, stderr, unanswered: [...waiting.keys()] };
    },
  };
  return harness;
}

const madeDirs = [];

/** A fresh temporary directory (its realpath, so displayed paths are predictable). */
export function tempDir(prefix = 'hc-node-') {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  madeDirs.push(dir);
  return dir;
}

/** Remove every directory `tempDir` made. */
export function removeTempDirs() {
  for (const dir of madeDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * Every entry under `root`, byte-exact: `{relpath: "file:<base64>" | "dir" | "link:<target>" |
 * "fifo" | "other"}`, sorted. Two equal snapshots mean nothing changed and no file appeared.
 */
export function snapshot(root) {
  const entries = {};
  const walk = (dir) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const rel = path.relative(root, full);
      const st = fs.lstatSync(full);
      if (st.isSymbolicLink()) entries[rel] = `link:${fs.readlinkSync(full)}`;
      else if (st.isDirectory()) {
        entries[rel] = 'dir';
        walk(full);
      } else if (st.isFile()) entries[rel] = `file:${fs.readFileSync(full).toString('base64')}`;
      else if (st.isFIFO()) entries[rel] = 'fifo';
      else entries[rel] = 'other';
    }
  };
  walk(root);
  return entries;
}

/** The snapshot entry of a file holding `content` (a string, UTF-8, or a Buffer). */
export function fileEntry(content) {
  return `file:${Buffer.from(content).toString('base64')}`;
}
