// harness-conformance-node: serve a JavaScript/TypeScript harness over the stdio protocol of
// SPEC §6.3, so `python -m conformance --harness-cmd 'node adapter.mjs'` can test it.
//
// Zero dependencies. The protocol is JSON Lines: one request per line on stdin
// ({"id", "method", "params"}), one answer per line on stdout ({"id", "result"} or
// {"id", "error": {"message"}}), plus the `paused` notification of SPEC §6.4. Requests are
// handled concurrently and answered as they settle, in any order ({#proto.concurrent}); a
// `batch` of taxonomy requests runs one after another ({#proto.batch}).

import { Console } from 'node:console';

/** The protocol version this kit speaks (the `protocol` field of the `describe` answer). */
export const PROTOCOL_VERSION = 1;

/**
 * Wire method → the handler that implements it and the params it takes, in argument order.
 * Every listed param is required (it may be `null` where the protocol allows it).
 */
const METHODS = new Map([
  ['open_workspace', { handler: 'openWorkspace', params: ['root', 'options'] }],
  ['call_tool', { handler: 'callTool', params: ['session', 'name', 'arguments'] }],
  ['close_workspace', { handler: 'closeWorkspace', params: ['session'] }],
  ['make_error', { handler: 'makeError', params: ['spec'] }],
  ['inspect_error', { handler: 'inspectError', params: ['handle'] }],
  ['set_cause', { handler: 'setCause', params: ['handle', 'cause'] }],
  ['remediate', { handler: 'remediate', params: ['ref'] }],
  ['to_error', { handler: 'toError', params: ['ref'] }],
  ['error_chain', { handler: 'errorChain', params: ['ref'] }],
  ['tool_error', { handler: 'toolError', params: ['session', 'callId'] }],
  ['run_scenario', { handler: 'runScenario', params: ['root', 'scenario'] }],
  ['derive_messages', { handler: 'deriveMessages', params: ['events'] }],
]);

/** Capability → the handlers that must all be present for it to be inferred (SPEC §6.2). */
export const CAPABILITY_HANDLERS = Object.freeze({
  tools: ['openWorkspace', 'callTool', 'closeWorkspace'],
  taxonomy: ['makeError', 'inspectError', 'setCause', 'remediate', 'toError', 'errorChain'],
  loop: ['runScenario', 'deriveMessages'],
  toolErrors: ['toolError'],
  pause: ['armPause'],
});

/** The capabilities whose every handler `handlers` has, in the protocol's order. */
export function inferCapabilities(handlers) {
  return Object.entries(CAPABILITY_HANDLERS)
    .filter(([, names]) => names.every((name) => typeof handlers[name] === 'function'))
    .map(([capability]) => capability);
}

/**
 * Serve `handlers` over the stdio protocol until `input` ends; resolves once every pending
 * answer is written. When `input` is `process.stdin` the process then exits with status 0, or
 * with status 1 when a handler's promise never settles. A handler's failure is answered and its
 * stack written to `log` (stderr), one `<method> failed: <stack>` entry per failure.
 */
export function serve(handlers, options = {}) {
  // Checked before anything is read: otherwise the first request would blame `describe`.
  if (handlers === null || typeof handlers !== 'object') {
    const hint = typeof handlers === 'function' ? ' (did you forget to call it?)' : '';
    throw new TypeError(`serve(handlers): handlers must be an object of handler functions, got ${kindOf(handlers)}${hint}`);
  }
  if (typeof handlers.then === 'function') {
    throw new TypeError('serve(handlers): handlers is a promise, not an object of handler functions (did you forget await?)');
  }
  return serving(handlers, options);
}

async function serving(
  handlers,
  { input = process.stdin, output = process.stdout, exitOnEnd = input === process.stdin, log = process.stderr } = {},
) {
  const restoreStdout = output === process.stdout ? divertStrayStdout() : null;
  // Protocol lines bypass the diversion: they are written with the stream's own write.
  const rawWrite = restoreStdout ? restoreStdout.write : output.write.bind(output);
  const restoreConsole = divertConsole();

  let lastWrite = Promise.resolve();
  const send = (message) => {
    let text;
    try {
      text = JSON.stringify(message);
    } catch (error) {
      // Checked serializable before, but a toJSON or getter may answer otherwise the second time.
      const why = `the answer could not be written as JSON: ${describeThrown(error)}`;
      text = JSON.stringify(failure(Number.isInteger(message.id) ? message.id : null, why));
    }
    const line = `${text}\n`;
    lastWrite = new Promise((resolve) => rawWrite(line, () => resolve()));
  };
  const server = { handlers, pauses: new PauseBoard(send), send, log };
  // Each task in flight → its request's id, once its line is parsed (to name what never ends).
  const pending = new Map();

  const closed = readLines(input, log, (bytes) => {
    const request = { id: null };
    // Not awaited: the next line is read while this one is still being handled.
    const task = answer(server, bytes, request).catch((error) => {
      // Not meant to happen (answer() catches what a handler throws): still answer, never crash.
      log.write(`serve: answering failed: ${stackOf(error) ?? describeThrown(error)}\n`);
      send(failure(request.id, `serve failed to answer: ${describeThrown(error)}`));
    });
    pending.set(task, request);
    task.finally(() => pending.delete(task));
  });

  // With stdin gone, a handler promise that never settles would leave nothing for the event
  // loop to do, and Node would end the process silently with status 13: say which requests.
  const onBeforeExit = () => {
    if (pending.size === 0) return;
    const ids = [...pending.values()].map((request) => JSON.stringify(request.id)).join(', ');
    log.write(`serve: stdin ended with ${pending.size} unanswered request(s) (ids ${ids}): a handler's promise never settled\n`);
    process.exit(1);
  };
  // A promise the harness left rejected with no handler (a fire-and-forget call that failed)
  // would end the process under Node's default, when it is detected: the call in flight then,
  // often of a later case, would fail for it. As conformance.serve does with an exception in a
  // thread of the harness, it is logged and serving goes on; the suite judges the calls.
  const onUnhandled = (reason) => {
    log.write(`serve: a promise rejected and nothing handled it (serving goes on): ${stackOf(reason) ?? describeThrown(reason)}\n`);
  };
  if (exitOnEnd) process.on('unhandledRejection', onUnhandled);
  try {
    await closed;
    // Nobody is left to send `resume`: let paused calls finish instead of waiting forever.
    server.pauses.releaseAll();
    if (exitOnEnd) process.on('beforeExit', onBeforeExit);
    while (pending.size > 0) await Promise.allSettled([...pending.keys()]);
    await lastWrite;
  } finally {
    process.off('beforeExit', onBeforeExit);
    process.off('unhandledRejection', onUnhandled);
    restoreConsole();
    restoreStdout?.();
  }
  if (exitOnEnd) process.exit(0);
}

/**
 * Handle one request line and send its answer; the returned promise never rejects. The line's
 * id is put in `request.id` as soon as it is known.
 */
async function answer(server, bytes, request) {
  const { pauses, send } = server;
  let line;
  try {
    line = STRICT_UTF8.decode(bytes);
  } catch {
    // Read leniently, the text would reach the handler with U+FFFD in place of the bytes sent.
    return send(failure(null, `request is not valid UTF-8: ${abbreviate(LENIENT_UTF8.decode(bytes))}`));
  }
  if (line.trim() === '') return undefined; // tolerate blank lines (e.g. a trailing "\n\n")
  let parsed;
  try {
    parsed = JSON.parse(line);
  } catch {
    return send(failure(null, `request is not valid JSON: ${abbreviate(line)}`));
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return send(failure(null, `request must be a JSON object: ${abbreviate(line)}`));
  }
  const { id, method } = parsed;
  if (!Number.isInteger(id)) {
    return send(failure(null, `request id must be an integer: ${abbreviate(line)}`));
  }
  request.id = id;
  if (typeof method !== 'string') return send(failure(id, 'request method must be a string'));
  const params = parsed.params ?? {};
  if (typeof params !== 'object' || Array.isArray(params)) {
    return send(failure(id, `${method}: params must be an object`));
  }
  if (method === 'resume') {
    // Answered by the kit itself, synchronously, so that the answer is on the wire before the
    // paused call continues (SPEC §6.4: answer resume, continue, then answer the tool call).
    const resumed = pauses.take(params);
    if (resumed === null) return send(failure(id, 'resume failed: no call is paused'));
    send({ id, result: null });
    return resumed();
  }
  if (method === 'batch') return send({ id, ...(await batch(server, params)) });
  return send({ id, ...(await outcome(server, method, params)) });
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const LENIENT_UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });
const LF = 0x0a;

/**
 * Call `onLine(bytes)` for each line of `input` (split at LF only, as JSON Lines are: a CR is
 * JSON whitespace, and a line is decoded whole, so a character cut between chunks survives);
 * resolves once the input ends, errs or is destroyed, after its last line (newline or not).
 */
function readLines(input, log, onLine) {
  return new Promise((resolve) => {
    let parts = []; // the current line's bytes so far, when it spans chunks
    const onData = (chunk) => {
      const data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      let start = 0;
      for (let end = data.indexOf(LF); end >= 0; end = data.indexOf(LF, start)) {
        const piece = data.subarray(start, end);
        const line = parts.length === 0 ? piece : Buffer.concat([...parts, piece]);
        parts = [];
        start = end + 1;
        onLine(line);
      }
      // Copied: the stream may hand out a buffer it reuses.
      if (start < data.length) parts.push(Buffer.from(data.subarray(start)));
    };
    let ended = false;
    const onEnd = () => {
      if (ended) return;
      ended = true;
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('close', onEnd);
      if (parts.length > 0) onLine(Buffer.concat(parts));
      parts = [];
      resolve();
    };
    // An input that cannot be read any more is its end, not a crash of the harness.
    const onError = (error) => {
      log.write(`serve: reading requests failed, taken as their end: ${describeThrown(error)}\n`);
      onEnd();
    };
    input.on('data', onData);
    input.on('end', onEnd);
    input.on('close', onEnd);
    input.on('error', onError); // kept after the end: a late error is logged, never thrown
  });
}

/** `{result}` or `{error}` of one request, as the protocol answers it; never rejects. */
async function outcome(server, method, params) {
  try {
    return { result: toJson(await invoke(server.handlers, method, params, server.pauses)) };
  } catch (error) {
    const text = describeThrown(error);
    // Every look at a thrown value is guarded: it may be a revoked proxy, or have throwing getters.
    const ours = attempt(() => error instanceof ProtocolError, false);
    // The answer carries only the message; where it was thrown is for the harness's log
    // (which the suite's --conformance-trace records), as a traceback is for a Python harness.
    if (!ours) server.log.write(`${method} failed: ${stackOf(error) ?? text}\n`);
    const message = failure(null, ours ? text : `${method} failed: ${text}`);
    // SPEC {#proto.unknown}: a method the harness does not have is said so, machine-readably.
    if (ours && error instanceof UnknownMethod) message.error.unknown = true;
    // An interruption that escaped the call (SPEC §2.1) is named by the thrower, e.g.
    // `Object.assign(new Error('interrupted'), {propagated: 'KeyboardInterrupt'})`.
    const propagated = attempt(() => error?.propagated, undefined);
    if (typeof propagated === 'string') message.error.propagated = propagated;
    return { error: message.error };
  }
}

/** The methods a batch may hold (SPEC {#proto.batch}). */
const BATCHABLE = ['make_error', 'error_chain'];

/**
 * Run a batch's requests one after another until one fails (SPEC {#proto.batch}); a ref
 * `{"answer": k}` (the `spec.cause` of make_error, the `ref` of error_chain) stands for the
 * handle request k answered. Any harness gets batches from this kit.
 */
async function batch(server, params) {
  const { requests } = params;
  if (!Array.isArray(requests)) return { error: { message: 'batch: params.requests must be a list' } };
  const answers = [];
  const results = [];
  for (const request of requests) {
    const method = request?.method;
    if (!BATCHABLE.includes(method)) {
      const only = BATCHABLE.join(', ');
      answers.push({ error: { message: `batch: ${JSON.stringify(method ?? null)} cannot be batched (only ${only})` } });
      break;
    }
    let resolved;
    try {
      resolved = resolveAnswerRef(method, request.params ?? {}, results);
    } catch (error) {
      answers.push({ error: { message: `${method}: ${error.message}` } });
      break;
    }
    const one = await outcome(server, method, resolved);
    answers.push(one);
    if ('error' in one) break;
    results.push(one.result);
  }
  return { result: { answers } };
}

function isAnswerRef(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    && Object.keys(value).length === 1 && Number.isInteger(value.answer);
}

/** `params` with its ref `{"answer": k}` replaced by `{"handle": h}`; a value is never touched. */
function resolveAnswerRef(method, params, results) {
  const handleOf = ({ answer: index }) => {
    const handle = index >= 0 && index < results.length ? results[index]?.handle : undefined;
    if (typeof handle !== 'string') throw new Error(`request ${index} of the batch answered no handle`);
    return { handle };
  };
  if (method === 'make_error' && isAnswerRef(params.spec?.cause)) {
    return { ...params, spec: { ...params.spec, cause: handleOf(params.spec.cause) } };
  }
  if (method === 'error_chain' && isAnswerRef(params.ref)) return { ...params, ref: handleOf(params.ref) };
  return params;
}

/** Run the handler behind `method`; throws (with a message) for anything that goes wrong. */
async function invoke(handlers, method, params, pauses) {
  if (method === 'describe') return describe(handlers);
  if (method === 'arm_pause') {
    requireParams(method, params, ['session', 'point']);
    const armPause = handler(handlers, method, 'armPause');
    const { session, point } = params;
    return armPause.call(handlers, session, point, () => pauses.pause(session, point));
  }
  const spec = METHODS.get(method);
  if (spec === undefined) throw new UnknownMethod(`unknown method ${JSON.stringify(method)}`);
  requireParams(method, params, spec.params);
  const fn = handler(handlers, method, spec.handler);
  return fn.apply(handlers, spec.params.map((name) => params[name]));
}

/** The `describe` answer: the harness's own, plus the protocol and, if absent, capabilities. */
async function describe(handlers) {
  const describeFn = handler(handlers, 'describe', 'describe');
  const own = await describeFn.call(handlers);
  if (own === null || typeof own !== 'object' || Array.isArray(own)) {
    throw new Error('handlers.describe() must return an object');
  }
  const { name, version, language = 'javascript', capabilities, inferred, ...rest } = own;
  const described = { name, version, language, protocol: PROTOCOL_VERSION };
  if (capabilities === undefined) {
    // SPEC §6.2: a harness that declares nothing has its capabilities inferred, and says so.
    described.capabilities = inferCapabilities(handlers);
    described.inferred = true;
  } else {
    described.capabilities = capabilities;
    if (inferred !== undefined) described.inferred = inferred;
  }
  // The harness's other fields (options, paths, …) follow; `protocol` is always the kit's.
  // Batches are taken (this kit runs them for any harness) unless the harness says `batch: false`.
  return Object.assign(described, { batch: true }, rest, { protocol: PROTOCOL_VERSION });
}

function handler(handlers, method, name) {
  const fn = handlers[name];
  if (typeof fn !== 'function') {
    throw new UnknownMethod(`${method} is not supported by this harness (no handlers.${name})`);
  }
  return fn;
}

function requireParams(method, params, names) {
  for (const name of names) {
    if (!Object.hasOwn(params, name)) throw new ProtocolError(`${method}: missing param "${name}"`);
  }
}

/** Convert a handler's result for the wire: `undefined` is `null`; it must survive JSON. */
function toJson(result) {
  if (result === undefined) return null;
  let text;
  try {
    text = JSON.stringify(result);
  } catch (error) {
    throw new Error(`the result is not JSON-serializable (${describeThrown(error)})`);
  }
  if (text === undefined) throw new Error(`the result is not JSON-serializable (${typeof result})`);
  return result;
}

/** A refusal by the kit itself; its message is answered without the "<method> failed:" prefix. */
class ProtocolError extends Error {}

/** A method the harness does not implement; answered with `unknown: true`. */
class UnknownMethod extends ProtocolError {}

function failure(id, message) {
  return { id, error: { message } };
}

/** `fn()`, or `otherwise` when it throws. */
function attempt(fn, otherwise) {
  try {
    return fn();
  } catch {
    return otherwise;
  }
}

/** The message of a thrown value: an Error's, a plain object's `message`, else its JSON. */
function describeThrown(error) {
  try {
    if (error instanceof Error) {
      const text = error.message || error.name;
      if (typeof text === 'string') return text;
    }
  } catch {
    return '<unprintable thrown value>';
  }
  try {
    // `reject({ code, message })` is common in older libraries; String() would say [object Object].
    if (error !== null && typeof error === 'object') {
      if (typeof error.message === 'string' && error.message !== '') return error.message;
      const json = JSON.stringify(error);
      if (json !== undefined && json !== '{}') return abbreviate(json, 200);
    }
  } catch {
    // A throwing getter or a cycle: String() below may still say something.
  }
  try {
    return String(error);
  } catch {
    return '<unprintable thrown value>';
  }
}

/** The stack of a thrown value, when it carries one (an Error does; a thrown string does not). */
function stackOf(error) {
  try {
    return typeof error?.stack === 'string' && error.stack !== '' ? error.stack : null;
  } catch {
    return null;
  }
}

/** How an unexpected argument reads in a TypeError: "a string", "null", "an array", … */
function kindOf(value) {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

function abbreviate(line, max = 80) {
  return line.length <= max ? line : `${line.slice(0, max)}…`;
}

/**
 * Pause points (SPEC §6.4): `pause` announces a paused mutation and waits; `take` finds the
 * pause a `resume` request releases (the one of `params.session` when given, else the oldest)
 * and returns the function that lets it continue, or `null` when no call is paused.
 */
class PauseBoard {
  #send;
  #waiting = [];
  #released = false;

  constructor(send) {
    this.#send = send;
  }

  pause(session, point) {
    // Once input has ended nobody can send `resume`: a call reaching its point later goes on.
    if (this.#released) return Promise.resolve();
    return new Promise((resolve) => {
      this.#waiting.push({ session, resolve });
      this.#send({ method: 'paused', params: { session, point } });
    });
  }

  take(params) {
    const index =
      params.session === undefined
        ? 0
        : this.#waiting.findIndex((entry) => entry.session === params.session);
    if (index < 0 || index >= this.#waiting.length) return null;
    const [entry] = this.#waiting.splice(index, 1);
    return () => entry.resolve();
  }

  releaseAll() {
    this.#released = true;
    for (const entry of this.#waiting.splice(0)) entry.resolve();
  }
}

// -- keeping stdout clean ----------------------------------------------------------------------

const CONSOLE_METHODS = ['log', 'info', 'debug', 'warn', 'dir', 'dirxml', 'table', 'trace'];
let consoleDiversions = 0;
let savedConsole = null;

/** Route the console's stdout methods to stderr until the returned function is called. */
function divertConsole() {
  if (consoleDiversions++ === 0) {
    const toStderr = new Console({ stdout: process.stderr, stderr: process.stderr });
    savedConsole = Object.fromEntries(CONSOLE_METHODS.map((name) => [name, console[name]]));
    for (const name of CONSOLE_METHODS) console[name] = toStderr[name].bind(toStderr);
  }
  let restored = false;
  return () => {
    if (restored) return;
    restored = true;
    if (--consoleDiversions === 0) Object.assign(console, savedConsole);
  };
}

/**
 * Send every other write to `process.stdout` (a library's `process.stdout.write`, a console
 * captured before `serve` started) to stderr; returns a restore function whose `.write`
 * property is the original, for protocol lines.
 */
function divertStrayStdout() {
  const stdout = process.stdout;
  const original = stdout.write;
  const write = original.bind(stdout);
  stdout.write = (chunk, encoding, callback) => process.stderr.write(chunk, encoding, callback);
  const restore = () => {
    stdout.write = original;
  };
  restore.write = write;
  return restore;
}

// -- helpers for harness authors ---------------------------------------------------------------

/**
 * Opaque, stable string handles for objects (SPEC §6.1): the same value always gets the same
 * handle, and a handle looks its value up again. Values are held strongly, so a handle never
 * dangles and is never reused.
 */
export class HandleTable {
  #prefix;
  #next = 1;
  #byHandle = new Map();
  #byValue = new Map();

  /** A table whose handles read `<prefix>_1`, `<prefix>_2`, … */
  constructor(prefix = 'h') {
    this.#prefix = prefix;
  }

  /** The handle of `value`, minting one the first time it is seen. */
  handle(value) {
    let handle = this.#byValue.get(value);
    if (handle === undefined) {
      handle = `${this.#prefix}_${this.#next++}`;
      this.#byValue.set(value, handle);
      this.#byHandle.set(handle, value);
    }
    return handle;
  }

  /** The value behind `handle`; throws an Error naming the handle when there is none. */
  get(handle) {
    if (!this.#byHandle.has(handle)) {
      throw new Error(`unknown handle ${JSON.stringify(handle)} (no ${this.#prefix} has it)`);
    }
    return this.#byHandle.get(handle);
  }

  /** Whether `handle` names a value. */
  has(handle) {
    return this.#byHandle.has(handle);
  }

  /** Forget `handle` and its value (a closed session); returns whether it existed. */
  delete(handle) {
    if (!this.#byHandle.has(handle)) return false;
    this.#byValue.delete(this.#byHandle.get(handle));
    this.#byHandle.delete(handle);
    return true;
  }

  /** How many values the table holds. */
  get size() {
    return this.#byHandle.size;
  }
}

/** A tool result in wire form (SPEC §2.1): one text block; `error` only when given. */
export function wireResult(callId, text, isError, error) {
  const result = { callId, content: [{ type: 'text', text }], isError: Boolean(isError) };
  if (error !== undefined && error !== null) result.error = error;
  return result;
}

/** Call ids per session: `call_1`, `call_2`, … counted separately for each session. */
export class CallIds {
  #counts = new Map();

  /** The next call id of `session`. */
  next(session) {
    const count = (this.#counts.get(session) ?? 0) + 1;
    this.#counts.set(session, count);
    return `call_${count}`;
  }

  /** Forget `session`'s count (when it closes). */
  forget(session) {
    this.#counts.delete(session);
  }
}

/**
 * One async critical section per key (SPEC {#fs.cas.one-winner}): `run(key, fn)` waits for
 * every earlier `run` of the same key to settle, then runs `fn` (sync or async).
 */
export class KeyedMutex {
  #tails = new Map();

  /** Run `fn` while holding `key`'s lock; resolves or rejects with `fn`'s outcome. */
  async run(key, fn) {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release;
    const held = new Promise((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => held);
    this.#tails.set(key, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      // Drop the entry when nobody queued behind us, so the map does not grow per file.
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}
