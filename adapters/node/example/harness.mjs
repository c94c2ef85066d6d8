#!/usr/bin/env node
// An example harness in JavaScript, served over the stdio protocol by `../index.mjs`.
//
// It has only the `tools` capability: `read`, `write` and `edit` with the BEHAVIOUR of SPEC
// §3–§4 (observation guard, per-file critical section, atomic publication, strict UTF-8) and
// its OWN wording, so the suite's behaviour level passes while every text differs from the
// spec's. It has no error taxonomy, so tool results carry no structured `error`.
//
//   node example/harness.mjs                       # serve on stdin/stdout
//   python -m conformance --harness-cmd 'node example/harness.mjs' --conformance-level behaviour

import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import util from 'node:util';
import { pathToFileURL } from 'node:url';

import { CallIds, HandleTable, KeyedMutex, serve, wireResult } from '../index.mjs';

const DEFAULT_LIMIT = 2000;
const MAX_LIMIT = 2000;
const MAX_LINE_CHARS = 2000;
const MAX_OUTPUT_BYTES = 51200;
const BINARY_SNIFF_BYTES = 8192;
const CHUNK_BYTES = 64 * 1024;
const RACY_WINDOW_NS = 2_000_000_000n;
const MAX_SYMLINK_HOPS = 40;
// Filesystems without hard links refuse link(2) with one of these; we then create exclusively.
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/** A refusal: its message is exactly what the model sees; `code` is its SPEC §1 code, if any. */
class ToolFailure extends Error {
  constructor(message, code) {
    super(message);
    this.code = code;
  }
}

/**
 * This harness's own words, by the suite's template keys (docs/wording-table.md), each a
 * function of the template's fields (and of a few more this wording uses: `bytes`, `count`).
 * A harness built on these tools passes its own words to `createHandlers({ words })`.
 */
export const EXAMPLE_WORDS = Object.freeze({
  'tool.unknown': ({ name }) => `Unknown tool: ${name} (this harness has read, write and edit)`,
  'args.invalid': ({ op, violations }) => `Bad arguments for ${op}: ${violations}`,
  'args.missing': ({ path }) => `"${path}" is required`,
  'args.type': ({ path, type }) => `"${path}" should be ${type}`,
  'args.undeclared': ({ path }) => `"${path}" is not a known parameter`,
  'args.not_object': () => 'expected a JSON object',
  'args.not_json': () => 'not valid JSON',
  'check.file_path': () => 'Bad arguments: file_path is empty',
  'check.nul': () => 'Bad arguments: file_path contains a NUL character',
  'check.offset': () => 'Bad arguments: offset must be 1 or more',
  'check.limit': () => 'Bad arguments: limit must be 1 or more',
  'check.limit_max': () => `Bad arguments: limit may be at most ${MAX_LIMIT}`,
  'check.old_string': () => 'Bad arguments: old_string is empty',
  'check.differ': () => 'Bad arguments: old_string and new_string are the same; nothing would change',
  'fs.path_unicode': ({ p }) => `Cannot use the path ${p}: it is not valid UTF-8`,
  'fs.parent_segment': ({ p }) => `Cannot use the path ${p}: one of its parent directories is a file`,
  'fs.read_missing': ({ p }) => `File not found: ${p}`,
  'fs.not_regular': ({ p }) => `${p} is not a regular file`,
  'fs.binary': ({ op, p }) => `${p} looks like a binary file; not ${op === 'edit' ? 'editing' : 'reading'} it`,
  'fs.invalid_utf8': ({ op, p, what }) => (what ? `Cannot ${op} ${p}: ${what} is not valid UTF-8 text` : `${p} is not valid UTF-8 text`),
  'fs.permission': ({ p }) => `Permission denied: ${p}`,
  'fs.io': ({ op, p, reason }) => `Could not ${op} ${p}: ${reason}`,
  'fs.write_vanished': ({ p }) => `${p} was deleted after you read it; read it again once it exists`,
  'fs.changed': ({ p }) => `${p} changed on disk since you read it; read it again`,
  'fs.exists_unread': ({ p }) => `Refusing to overwrite ${p}: read it first`,
  'policy.edit_unobserved': ({ p }) => `${p} has not been read in this session; read it before editing`,
  'fs.edit_not_found': ({ p }) => `Could not find old_string in ${p}`,
  'fs.ambiguous': ({ n, p }) => `old_string occurs ${n} times in ${p}; add surrounding text to pick one, or pass replace_all`,
  'fs.redirected': ({ op, p }) => `Cannot ${op} ${p}: its directory changed while it was being written`,
  'fs.sandbox': ({ op, p, mode }) => `Cannot ${op} ${p}: outside what ${mode} allows`,
  'read.offset_range': ({ offset, p, total }) => `Offset ${offset} is past the end of ${p} (${lines(total)})`,
  'read.output': ({ p, body }) => `File: ${p}\n${body}`,
  'read.body': ({ lines: shown, footer }) => `${shown}\n${footer}`,
  'read.body_empty': ({ footer }) => footer,
  'read.line': ({ n, text }) => `${String(n).padStart(6)}\t${text}`,
  'read.truncated': () => `[... line cut at ${MAX_LINE_CHARS} characters]`,
  'read.footer.capped': ({ a, b, next }) => `[output too long: showing lines ${a}-${b}; continue with offset=${next}]`,
  'read.footer.more': ({ a, b, total, next }) => `[showing lines ${a}-${b} of ${total}; continue with offset=${next}]`,
  'read.footer.end': ({ total }) => `[end of file: ${lines(total)}]`,
  'write.output': ({ p, created, bytes }) => (created ? `Created ${p} (${bytes} bytes)` : `Wrote ${bytes} bytes to ${p}`),
  'write.created': () => 'Created',
  'write.updated': () => 'Wrote',
  'edit.output': ({ p }) => `Edited ${p}`,
  'edit.output_all': ({ p, count }) => `Edited ${p} (${count} replacement${count === 1 ? '' : 's'})`,
  // An OS error's reason: libuv's words (util.getSystemErrorMap), in lower case.
  reason: ({ fallback }) => fallback,
});

/** The SPEC §1 code of each refusal; the post-schema checks are plain errors, with none. */
const CODES = Object.freeze({
  'tool.unknown': 'UNKNOWN_TOOL',
  'args.invalid': 'INVALID_ARGS',
  'fs.path_unicode': 'FS_NOT_FOUND',
  'fs.parent_segment': 'FS_NOT_FOUND',
  'fs.read_missing': 'FS_NOT_FOUND',
  'read.offset_range': 'FS_NOT_FOUND',
  'fs.not_regular': 'FS_NOT_REGULAR_FILE',
  'fs.binary': 'FS_NOT_TEXT',
  'fs.invalid_utf8': 'FS_NOT_TEXT',
  'fs.permission': 'FS_PERMISSION_DENIED',
  'fs.io': 'FS_IO_ERROR',
  'fs.write_vanished': 'FS_STALE_VERSION',
  'fs.changed': 'FS_STALE_VERSION',
  'fs.exists_unread': 'FS_NOT_OBSERVED',
  'policy.edit_unobserved': 'FS_NOT_OBSERVED',
  'fs.edit_not_found': 'FS_EDIT_NOT_FOUND',
  'fs.ambiguous': 'FS_AMBIGUOUS_EDIT',
  'fs.redirected': 'FS_SANDBOX_DENIED',
  'fs.sandbox': 'FS_SANDBOX_DENIED',
});

/**
 * A mistake in the hooks given to `createHandlers`. A call that meets one fails as a whole (the
 * kit answers `call_tool failed: <message>`) instead of being worded as the tool's own failure,
 * where it would look like a refusal and pass the behaviour level unnoticed.
 */
class HookMistake extends TypeError {}

/** The hooks that must be functions when given. */
const FUNCTION_HOOKS = ['refusal', 'failed', 'beforeCommit'];

/** Throw a HookMistake, at creation, for a hook or a `words` entry that is not a function. */
function checkHooks(hooks) {
  if (hooks === null || typeof hooks !== 'object') {
    throw new HookMistake(`createHandlers(hooks): hooks must be an object, got ${kindOf(hooks)}`);
  }
  for (const name of FUNCTION_HOOKS) {
    if (hooks[name] !== undefined && typeof hooks[name] !== 'function') {
      throw new HookMistake(`createHandlers: hooks.${name} must be a function, got ${kindOf(hooks[name])}`);
    }
  }
  if (hooks.words === undefined) return;
  if (hooks.words === null || typeof hooks.words !== 'object' || Array.isArray(hooks.words)) {
    throw new HookMistake(`createHandlers: words must be an object of functions by wording-table key, got ${kindOf(hooks.words)}`);
  }
  for (const [key, value] of Object.entries(hooks.words)) {
    if (typeof value !== 'function') {
      throw new HookMistake(`createHandlers: words[${JSON.stringify(key)}] must be a function of the template's fields, got ${kindOf(value)}`);
    }
  }
}

/** How an unexpected value reads in a HookMistake: "a string", "null", "an array", … */
function kindOf(value) {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

/**
 * How the tools speak: `say` fills in a text, `fail` makes the error a refusal throws (through
 * `hooks.refusal({ key, code, message, fields, cause, violations })` when given, a ToolFailure
 * otherwise), and `refused` tells a refusal from an unexpected error.
 */
function makeVoice(hooks) {
  checkHooks(hooks);
  const words = { ...EXAMPLE_WORDS, ...hooks.words };
  const made = new WeakSet();
  const say = (key, fields) => {
    const used = key.startsWith('reason.') && words[key] === undefined ? 'reason' : key;
    const text = words[used](fields);
    if (typeof text !== 'string') {
      throw new HookMistake(`words[${JSON.stringify(used)}] must return a string, got ${kindOf(text)}`);
    }
    return text;
  };
  const refuse = (details) => {
    const error = hooks.refusal ? hooks.refusal(details) : new ToolFailure(details.message, details.code);
    if (error === null || typeof error !== 'object') {
      throw new HookMistake(`hooks.refusal must return an Error object for ${JSON.stringify(details.key)}, got ${kindOf(error)}`);
    }
    made.add(error);
    return error;
  };
  return {
    say,
    fail: (key, fields, cause) => refuse({ key, code: CODES[key] ?? null, message: say(key, fields), fields, cause }),
    argsFailure: (op, violations) =>
      refuse({ key: 'args.invalid', code: CODES['args.invalid'], violations, message: say('args.invalid', { op, violations: violations.join('; ') }) }),
    refused: (error) => made.has(error),
  };
}

// Module-wide, so that two sessions of this process serialize their mutations of one file.
const locks = new KeyedMutex();

// -- arguments ---------------------------------------------------------------------------------

// Closed schemas: every property with its type; `required` lists the mandatory ones.
const SCHEMAS = {
  read: {
    properties: { file_path: 'string', offset: 'integer', limit: 'integer' },
    required: ['file_path'],
  },
  write: { properties: { file_path: 'string', content: 'string' }, required: ['file_path', 'content'] },
  edit: {
    properties: { file_path: 'string', old_string: 'string', new_string: 'string', replace_all: 'boolean' },
    required: ['file_path', 'old_string', 'new_string'],
  },
};

const TYPE_CHECKS = {
  string: (value) => typeof value === 'string',
  boolean: (value) => typeof value === 'boolean',
  // JSON `2.0` parses to the number 2, which is an integer here too.
  integer: (value) => typeof value === 'number' && Number.isInteger(value),
};

/** The validated arguments of `tool`; throws a ToolFailure listing every violation. */
function validateArguments(voice, tool, raw) {
  const args = typeof raw === 'string' ? parseModelJson(voice, tool, raw) : raw;
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    throw voice.argsFailure(tool, [voice.say('args.not_object', {})]);
  }
  const { properties, required } = SCHEMAS[tool];
  const problems = [];
  for (const name of required) {
    if (!Object.hasOwn(args, name)) problems.push(voice.say('args.missing', { path: name }));
  }
  for (const [name, type] of Object.entries(properties)) {
    if (Object.hasOwn(args, name) && !TYPE_CHECKS[type](args[name])) {
      problems.push(voice.say('args.type', { path: name, type: `${type === 'integer' ? 'an' : 'a'} ${type}` }));
    }
  }
  for (const name of Object.keys(args)) {
    if (!Object.hasOwn(properties, name)) problems.push(voice.say('args.undeclared', { path: name }));
  }
  if (problems.length > 0) throw voice.argsFailure(tool, problems);

  // Checks beyond the schema, before anything touches the disk.
  if (args.file_path === '') throw voice.fail('check.file_path', {});
  if (args.file_path.includes('\0')) throw voice.fail('check.nul', {});
  for (const name of ['offset', 'limit']) {
    if (Object.hasOwn(args, name) && args[name] < 1) {
      throw voice.fail(`check.${name}`, {});
    }
  }
  if (Object.hasOwn(args, 'limit') && args.limit > MAX_LIMIT) {
    throw voice.fail('check.limit_max', {});
  }
  if (tool === 'edit') {
    if (args.old_string === '') throw voice.fail('check.old_string', {});
    if (args.old_string === args.new_string) {
      throw voice.fail('check.differ', {});
    }
  }
  return args;
}

/**
 * Parse the raw argument text a model sent. JSON.parse alone is too lenient for SPEC
 * {#args.limits}: it turns `1e999` into Infinity and accepts nesting and digits without bound.
 */
function parseModelJson(voice, tool, text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    throw voice.argsFailure(tool, [voice.say('args.not_json', {})]);
  }
  // Number literals outside strings: none may have more than 100 digits.
  const literals = text.replace(/"(?:[^"\\]|\\.)*"/g, '""').match(/-?\d[\d.eE+-]*/g) ?? [];
  if (literals.some((literal) => literal.replace(/\D/g, '').length > 100) || !withinLimits(value, 0)) {
    throw voice.argsFailure(tool, [voice.say('args.not_json', {})]);
  }
  return value;
}

function withinLimits(value, depth) {
  if (typeof value === 'number') return Number.isFinite(value);
  if (value === null || typeof value !== 'object') return true;
  if (depth >= 100) return false;
  return Object.values(value).every((item) => withinLimits(item, depth + 1));
}

// -- paths, versions ---------------------------------------------------------------------------

/**
 * Resolve `filePath` for `session`: `display` is the path lexically joined to the root (what
 * the model is shown), `key` its non-strict realpath (what the guard and publication use).
 */
function resolveTarget(session, filePath, op) {
  const { voice } = session;
  if (!filePath.isWellFormed()) {
    throw voice.fail('fs.path_unicode', { op, p: path.resolve(session.root, filePath.toWellFormed()) });
  }
  const display = path.resolve(session.root, filePath);
  let key;
  try {
    key = looseRealpath(display);
  } catch (error) {
    throw osFailure(voice, op, display, error);
  }
  try {
    if (!fs.statSync(path.dirname(key)).isDirectory()) throw notADirectory(voice, op, display);
  } catch (error) {
    if (voice.refused(error) || error.code === 'ENOTDIR') throw notADirectory(voice, op, display);
    if (error instanceof HookMistake) throw error;
    // A missing parent is created by write; anything else surfaces in the operation itself.
  }
  return { display, key };
}

function notADirectory(voice, op, display) {
  return voice.fail('fs.parent_segment', { op, p: display });
}

/**
 * Python's non-strict `os.path.realpath`: symlinks are followed wherever they exist (also a
 * dangling one, to its target), and the part of the path that does not exist is kept as is.
 */
function looseRealpath(absolute, hops = { count: 0 }) {
  const parts = absolute.split(path.sep).filter(Boolean);
  let resolved = path.parse(absolute).root;
  for (let i = 0; i < parts.length; i += 1) {
    const next = path.join(resolved, parts[i]);
    let st;
    try {
      st = fs.lstatSync(next);
    } catch (error) {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return path.join(next, ...parts.slice(i + 1));
      throw error;
    }
    if (!st.isSymbolicLink()) {
      resolved = next;
      continue;
    }
    hops.count += 1;
    if (hops.count > MAX_SYMLINK_HOPS) {
      throw Object.assign(new Error('too many symbolic links'), { code: 'ELOOP', errno: -os.constants.errno.ELOOP });
    }
    resolved = looseRealpath(path.resolve(resolved, fs.readlinkSync(next)), hops);
  }
  return resolved;
}

/** What the guard remembers of a file: its stat stamp, and a content digest when racy. */
function versionOf(st, content) {
  return { stamp: stampOf(st), sha256: isRacy(st) ? sha256(content()) : null };
}

function stampOf(st) {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

// SPEC {#fs.version.racy}: timestamps may tick more coarsely than a read-then-rewrite, so within
// 2 s of the file's ctime the stamp alone cannot prove that nothing changed.
function isRacy(st) {
  return BigInt(Date.now()) * 1_000_000n - st.ctimeNs < RACY_WINDOW_NS;
}

function sha256(data) {
  return crypto.createHash('sha256').update(data).digest('hex');
}

/** Throw the stale refusal unless the file (`st`, content on demand) is still at `observed`. */
function checkVersion(voice, op, observed, st, content, display) {
  const stale = () => voice.fail('fs.changed', { op, p: display });
  if (stampOf(st) !== observed.stamp) throw stale();
  if (observed.sha256 !== null && sha256(content()) !== observed.sha256) throw stale();
}

function statOrNull(key) {
  try {
    return fs.statSync(key, { bigint: true });
  } catch (error) {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
    throw error;
  }
}

function requireRegularWritable(voice, op, st, key, display) {
  if (!st.isFile()) throw voice.fail('fs.not_regular', { op, p: display });
  // Replacing the file would succeed (the directory is writable), but a read-only file is the
  // user's wish: honour it rather than silently swapping the inode. EROFS surfaces here too.
  fs.accessSync(key, fs.constants.W_OK);
}

/** Open a file already stat'ed as regular without ever blocking, and confirm it still is. */
function openRegular(voice, op, key, display) {
  const fd = fs.openSync(key, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  const st = fs.fstatSync(fd, { bigint: true });
  if (!st.isFile()) {
    fs.closeSync(fd);
    throw voice.fail('fs.not_regular', { op, p: display });
  }
  return { fd, st };
}

/** The whole content of a regular file and the fstat of the descriptor it was read from. */
function readRegularFile(voice, op, key, display) {
  const { fd, st } = openRegular(voice, op, key, display);
  try {
    let data = Buffer.alloc(Number(st.size) + 1);
    let size = readFully(fd, data);
    // The file may have grown since the fstat: keep reading until the end.
    const parts = [];
    while (size === data.length) {
      parts.push(data);
      data = Buffer.alloc(CHUNK_BYTES);
      size = readFully(fd, data);
    }
    return { data: Buffer.concat([...parts, data.subarray(0, size)]), st };
  } finally {
    fs.closeSync(fd);
  }
}

/** Fill `buffer` from `fd` as far as the file goes; returns the number of bytes read. */
function readFully(fd, buffer) {
  let filled = 0;
  while (filled < buffer.length) {
    const n = fs.readSync(fd, buffer, filled, buffer.length - filled, null);
    if (n === 0) break;
    filled += n;
  }
  return filled;
}

// -- read ----------------------------------------------------------------------------------------

/**
 * Collects the lines a read shows while counting every line, holding only the window: lines
 * split on "\n" only, a final "\n" starts no new line, one trailing "\r" is not shown, a line
 * over 2000 characters (code points) is cut, and the shown text stays within the byte cap.
 */
class LineWindow {
  // Enough UTF-16 units to hold 2001 code points whatever they are (2 units at most each).
  static HEAD_UNITS = 2 * (MAX_LINE_CHARS + 1);

  constructor(voice, offset, limit) {
    Object.assign(this, { voice, offset, limit, total: 0, shown: [], capped: false, bytes: 0 });
    this.#reset();
  }

  #reset() {
    Object.assign(this, { head: '', units: 0, chars: 0, lastChar: '', partial: false });
  }

  #collecting() {
    return !this.capped && this.shown.length < this.limit && this.total + 1 >= this.offset;
  }

  /** Consume the next piece of decoded text. */
  feed(text) {
    let pos = 0;
    while (pos < text.length) {
      const newline = text.indexOf('\n', pos);
      const stop = newline === -1 ? text.length : newline;
      if (stop > pos) this.#extend(text.slice(pos, stop));
      if (newline === -1) return;
      this.#complete();
      pos = newline + 1;
    }
  }

  /** Count the last line when the text did not end with "\n". */
  finish() {
    if (this.partial) this.#complete();
  }

  #extend(piece) {
    this.partial = true;
    if (!this.#collecting()) return; // outside the window a line is only counted
    if (this.head.length < LineWindow.HEAD_UNITS) this.head += piece.slice(0, LineWindow.HEAD_UNITS - this.head.length);
    this.units += piece.length;
    this.chars += codePoints(piece);
    this.lastChar = piece[piece.length - 1];
  }

  #complete() {
    const collecting = this.#collecting();
    this.total += 1;
    if (collecting) this.#show();
    this.#reset();
  }

  #show() {
    let { head, chars } = this;
    if (this.lastChar === '\r') {
      chars -= 1;
      if (this.units <= LineWindow.HEAD_UNITS) head = head.slice(0, -1);
    }
    const text = chars > MAX_LINE_CHARS ? `${firstCodePoints(head, MAX_LINE_CHARS)}${this.voice.say('read.truncated', {})}` : head;
    const cost = Buffer.byteLength(text) + (this.shown.length > 0 ? 1 : 0);
    if (this.bytes + cost > MAX_OUTPUT_BYTES) {
      this.capped = true;
      return;
    }
    this.bytes += cost;
    this.shown.push(this.voice.say('read.line', { n: this.total, text }));
  }

  /** The closing line of the output. */
  footer() {
    const first = this.offset;
    const last = this.offset + this.shown.length - 1;
    const { voice } = this;
    if (this.capped) return voice.say('read.footer.capped', { a: first, b: last, next: last + 1 });
    if (this.shown.length > 0 && last < this.total) {
      return voice.say('read.footer.more', { a: first, b: last, total: this.total, next: last + 1 });
    }
    return voice.say('read.footer.end', { total: this.total });
  }
}

function lines(count) {
  return `${count} line${count === 1 ? '' : 's'}`;
}

function codePoints(text) {
  let pairs = 0;
  for (let i = 0; i < text.length - 1; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const nextUnit = text.charCodeAt(i + 1);
      if (nextUnit >= 0xdc00 && nextUnit <= 0xdfff) pairs += 1;
    }
  }
  return text.length - pairs;
}

function firstCodePoints(text, count) {
  let index = 0;
  for (let seen = 0; seen < count && index < text.length; seen += 1) {
    index += text.codePointAt(index) > 0xffff ? 2 : 1;
  }
  return text.slice(0, index);
}

/** `read`: a numbered window of a text file; a successful read records an observation. */
function readTool(session, args) {
  const { voice } = session;
  const { display, key } = resolveTarget(session, args.file_path, 'read');
  const offset = args.offset ?? 1;
  const limit = args.limit ?? DEFAULT_LIMIT;
  return withOsErrors(voice, 'read', display, () => {
    const found = statOrNull(key);
    if (found === null) throw voice.fail('fs.read_missing', { op: 'read', p: display });
    if (!found.isFile()) throw voice.fail('fs.not_regular', { op: 'read', p: display });
    const { fd, st } = openRegular(voice, 'read', key, display);
    const window = new LineWindow(voice, offset, limit);
    let digest = null;
    try {
      const hasher = isRacy(st) ? crypto.createHash('sha256') : null;
      // ignoreBOM keeps a byte-order mark as ordinary text (U+FEFF at the start of line 1).
      const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
      let chunk = Buffer.alloc(Math.max(BINARY_SNIFF_BYTES, CHUNK_BYTES));
      let size = readFully(fd, chunk);
      if (chunk.subarray(0, Math.min(size, BINARY_SNIFF_BYTES)).includes(0)) {
        throw voice.fail('fs.binary', { op: 'read', p: display });
      }
      try {
        // Streamed: memory stays bounded by a chunk and the window, however large the file.
        while (size > 0) {
          const bytes = chunk.subarray(0, size);
          hasher?.update(bytes);
          window.feed(decoder.decode(bytes, { stream: true }));
          chunk = Buffer.alloc(CHUNK_BYTES);
          size = readFully(fd, chunk);
        }
        window.feed(decoder.decode());
      } catch (error) {
        if (error.code === 'ERR_ENCODING_INVALID_ENCODED_DATA') throw voice.fail('fs.invalid_utf8', { op: 'read', p: display });
        throw error;
      }
      digest = hasher?.digest('hex') ?? null;
    } finally {
      fs.closeSync(fd);
    }
    window.finish();
    if (offset > Math.max(window.total, 1)) {
      throw voice.fail('read.offset_range', { op: 'read', offset, p: display, total: window.total });
    }
    session.guard?.set(key, { stamp: stampOf(st), sha256: digest });
    const footer = window.footer();
    const body = window.shown.length > 0 ? voice.say('read.body', { lines: window.shown.join('\n'), footer }) : voice.say('read.body_empty', { footer });
    return voice.say('read.output', { op: 'read', p: display, body });
  });
}

// -- write, edit ---------------------------------------------------------------------------------

/** `write`: create a file, or replace one this session has read and nobody changed since. */
function writeTool(session, args, hooks) {
  const { voice } = session;
  const { display, key } = resolveTarget(session, args.file_path, 'write');
  fence(session, key, 'write', display);
  const guarded = session.guard !== null;
  const observed = session.guard?.get(key); // undefined: never observed (or unguarded)
  return withOsErrors(voice, 'write', display, () =>
    locks.run(key, async () => {
      const st = statOrNull(key);
      if (st === null) {
        // Read, then deleted by someone else: fail closed, create nothing (SPEC §4.1 dead end).
        if (observed) throw voice.fail('fs.write_vanished', { op: 'write', p: display });
      } else {
        requireRegularWritable(voice, 'write', st, key, display);
        if (guarded && !observed) throw voice.fail('fs.exists_unread', { op: 'write', p: display });
        if (observed) checkVersion(voice, 'write', observed, st, () => readRegularFile(voice, 'write', key, display).data, display);
      }
      if (!args.content.isWellFormed()) throw voice.fail('fs.invalid_utf8', { op: 'write', p: display, what: 'the content' });
      const data = Buffer.from(args.content, 'utf8');
      const createdDirs = st === null ? makeParents(path.dirname(key)) : [];
      try {
        const mode = st === null ? null : Number(st.mode & 0o7777n);
        // A guarded create publishes with link(2), which never clobbers a file that appeared
        // after the check; an unguarded write replaces whatever is there.
        await publish(key, data, { mode, exclusive: guarded && st === null, op: 'write', display, hooks, session });
      } catch (error) {
        removeDirs(createdDirs);
        throw error;
      }
      recordAfterPublish(session, key, data);
      const outcome = voice.say(st === null ? 'write.created' : 'write.updated', { bytes: data.length });
      return voice.say('write.output', { op: 'write', p: display, outcome, created: st === null, bytes: data.length });
    }),
  );
}

/** `edit`: replace exact text in a file this session has read and nobody changed since. */
function editTool(session, args, hooks) {
  const { voice } = session;
  const { display, key } = resolveTarget(session, args.file_path, 'edit');
  fence(session, key, 'edit', display);
  const observed = session.guard?.get(key);
  if (session.guard !== null && !observed) {
    throw voice.fail('policy.edit_unobserved', { op: 'edit', p: display });
  }
  const { old_string: oldText, new_string: newText, replace_all: replaceAll = false } = args;
  return withOsErrors(voice, 'edit', display, () =>
    locks.run(key, async () => {
      const found = statOrNull(key);
      if (found === null) throw voice.fail('fs.changed', { op: 'edit', p: display });
      requireRegularWritable(voice, 'edit', found, key, display);
      const { data, st } = readRegularFile(voice, 'edit', key, display);
      // The version is checked before any matching: an edit based on an old read is stale,
      // never "not found" against content it has not seen.
      if (observed) checkVersion(voice, 'edit', observed, st, () => data, display);
      if (data.includes(0)) throw voice.fail('fs.binary', { op: 'edit', p: display });
      let text;
      try {
        text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(data);
      } catch {
        throw voice.fail('fs.invalid_utf8', { op: 'edit', p: display });
      }
      if (!oldText.isWellFormed() || !newText.isWellFormed()) {
        throw voice.fail('fs.invalid_utf8', { op: 'edit', p: display, what: 'old_string or new_string' });
      }
      // split() finds non-overlapping occurrences left to right: "aa" occurs once in "aaa".
      const pieces = text.split(oldText);
      const count = pieces.length - 1;
      if (count === 0) throw voice.fail('fs.edit_not_found', { op: 'edit', p: display });
      if (count > 1 && !replaceAll) {
        throw voice.fail('fs.ambiguous', { op: 'edit', n: count, p: display });
      }
      const updated = Buffer.from(pieces.join(newText), 'utf8');
      await publish(key, updated, { mode: Number(st.mode & 0o7777n), exclusive: false, op: 'edit', display, hooks, session });
      recordAfterPublish(session, key, updated);
      return voice.say(replaceAll ? 'edit.output_all' : 'edit.output', { op: 'edit', p: display, count });
    }),
  );
}

/**
 * Atomic publication (SPEC {#fs.publish.atomic}): stage `data` in an exclusively created temp
 * file beside `key`, fsync it, then rename it onto `key` (an update) or link it to `key` (a new
 * file, never clobbering). The temp file never outlives the call; on any failure before the
 * commit `key` is untouched.
 */
async function publish(key, data, { mode, exclusive, op, display, hooks, session }) {
  const directory = path.dirname(key);
  const temp = path.join(directory, `.${path.basename(key).slice(0, 200)}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  const fd = fs.openSync(temp, 'wx', 0o666); // 0o666: the umask applies to a new file
  try {
    try {
      writeAll(fd, data);
      if (mode !== null) fs.fchmodSync(fd, mode); // an update keeps the target's permission bits
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    // A test seam, and where a pause point can wait (SPEC §6.4 `staged`): awaited.
    await hooks.beforeCommit?.(key, session.handle);
    // Node has no renameat/linkat: re-check that the directory we staged in is still the real
    // one (not swapped for a symlink since resolution) right before committing.
    if (fs.realpathSync(directory) !== directory) {
      throw session.voice.fail('fs.redirected', { op, p: display });
    }
    if (exclusive) linkNew(session.voice, temp, key, data, display);
    else fs.renameSync(temp, key);
  } finally {
    removeQuietly(temp);
  }
  // After the commit point a failure is only logged: the content is published.
  try {
    const dirFd = fs.openSync(directory, 'r');
    try {
      fs.fsyncSync(dirFd);
    } finally {
      fs.closeSync(dirFd);
    }
  } catch (error) {
    console.error(`example harness: could not sync ${directory}: ${error.message}`);
  }
}

function writeAll(fd, data) {
  let written = 0;
  while (written < data.length) written += fs.writeSync(fd, data, written);
}

function linkNew(voice, temp, key, data, display) {
  try {
    fs.linkSync(temp, key);
    return;
  } catch (error) {
    if (error.code === 'EEXIST') throw lostCreateRace(voice, key, display);
    if (!NO_HARD_LINKS.has(error.code)) throw error;
  }
  // No hard links here: an exclusive create never clobbers either (but is not atomic).
  let fd;
  try {
    fd = fs.openSync(key, 'wx', 0o666);
  } catch (error) {
    if (error.code === 'EEXIST') throw lostCreateRace(voice, key, display);
    throw error;
  }
  try {
    writeAll(fd, data);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    removeQuietly(key);
    throw error;
  }
}

// Someone created the file between our check and publication: theirs stays.
function lostCreateRace(voice, key, display) {
  const st = statOrNull(key);
  if (st !== null && !st.isFile()) return voice.fail('fs.not_regular', { op: 'write', p: display });
  return voice.fail('fs.exists_unread', { op: 'write', p: display });
}

/** Record the session's own mutation as a fresh observation (after the commit point). */
function recordAfterPublish(session, key, data) {
  if (session.guard === null) return;
  try {
    session.guard.set(key, versionOf(fs.statSync(key, { bigint: true }), () => data));
  } catch (error) {
    // Published but not re-stat'able: forget the observation rather than fail the call; the
    // next mutation then asks for a read, which is safe.
    session.guard.delete(key);
    console.error(`example harness: could not stat ${key} after publishing: ${error.message}`);
  }
}

/** Create the missing directories down to `directory`; returns those made, outermost first. */
function makeParents(directory) {
  const missing = [];
  for (let current = directory; statOrNull(current) === null; current = path.dirname(current)) {
    missing.push(current);
    if (path.dirname(current) === current) break;
  }
  const created = [];
  try {
    for (const dir of missing.reverse()) {
      try {
        fs.mkdirSync(dir);
        created.push(dir);
      } catch (error) {
        if (error.code !== 'EEXIST') throw error; // made by someone else: not ours to remove
      }
    }
  } catch (error) {
    removeDirs(created);
    throw error;
  }
  return created;
}

function removeDirs(created) {
  for (const dir of [...created].reverse()) {
    try {
      fs.rmdirSync(dir);
    } catch {
      return; // not empty (someone else put something there) or gone: leave the rest too
    }
  }
}

function removeQuietly(file) {
  try {
    fs.unlinkSync(file);
  } catch (error) {
    if (error.code !== 'ENOENT') console.error(`example harness: could not remove ${file}: ${error.message}`);
  }
}

/** Run `fn`, turning an OS error into a refusal worded for the model. */
async function withOsErrors(voice, op, display, fn) {
  try {
    return await fn();
  } catch (error) {
    throw osFailure(voice, op, display, error);
  }
}

/** An OS error (one with a numeric errno) as a refusal: the reason, no errno, no file name. */
function osFailure(voice, op, display, error) {
  if (voice.refused(error) || typeof error?.errno !== 'number') return error;
  if (error.code === 'EACCES' || error.code === 'EPERM') return voice.fail('fs.permission', { op, p: display }, error);
  const reason = util.getSystemErrorMap().get(error.errno)?.[1] ?? error.message;
  return voice.fail('fs.io', { op, p: display, reason: voice.say(`reason.${error.code}`, { fallback: reason.toLowerCase() }) }, error);
}

// -- the sandbox -------------------------------------------------------------------------------

/**
 * The fence of a session opened with `options`: `mode`, and the real paths a mutation may touch
 * (`writable`; null: anywhere). Under workspace-write that is the root, the extra writable roots
 * and, for a harness built with `tempWritable`, the system temp directory (TMPDIR).
 */
function fenceOf(root, options, hooks) {
  const mode = options.sandbox ?? 'danger-full-access';
  if (mode === 'danger-full-access') return { mode, writable: null };
  if (mode === 'read-only') return { mode, writable: [] };
  if (mode !== 'workspace-write') throw new Error(`unknown sandbox mode ${JSON.stringify(mode)}`);
  const roots = [root, ...(options.writableRoots ?? []), ...(hooks.tempWritable ? [os.tmpdir()] : [])];
  return { mode, writable: roots.map((dir) => looseRealpath(path.resolve(dir))) };
}

/** Refuse a mutation of `key` outside the session's fence (judged on the real path). */
function fence(session, key, op, display) {
  const { writable, mode } = session;
  if (writable === null || writable.some((dir) => key === dir || key.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep))) return;
  throw session.voice.fail('fs.sandbox', { op, p: display, mode });
}

// -- the handlers ------------------------------------------------------------------------------

const TOOLS = new Map([
  ['read', readTool],
  ['write', writeTool],
  ['edit', editTool],
]);

/**
 * The example's protocol handlers. `hooks.beforeCommit(key, sessionHandle)` is a test seam: it
 * runs (and is awaited) inside the critical section after the new content is staged and before
 * it is published.
 */
export function createHandlers(hooks = {}) {
  const voice = makeVoice(hooks);
  const sessions = new HandleTable('ws');
  const callIds = new CallIds();
  return {
    describe() {
      return {
        name: 'example-node-harness',
        version: '0.1.0',
        language: 'javascript',
        capabilities: ['tools'],
        options: {
          sandbox: ['danger-full-access'],
          writableRoots: false,
          maxReadBytes: false,
          probe: false,
          probeInterrupt: false,
          replaceAll: true,
          readWindow: true,
          unguarded: true,
          surrogates: false,
        },
        paths: 'any',
      };
    },

    openWorkspace(root, options = {}) {
      if (typeof root !== 'string' || root === '') throw new Error('root must be a non-empty string');
      // `policy: false` turns the observation guard off entirely.
      const session = { root, voice, guard: options?.policy === false ? null : new Map(), ...fenceOf(root, options ?? {}, hooks) };
      session.handle = sessions.handle(session);
      return session.handle;
    },

    async callTool(handle, name, rawArguments) {
      const session = sessions.get(handle); // an unknown session is a protocol error
      const callId = callIds.next(handle);
      const tool = TOOLS.get(name);
      try {
        if (tool === undefined) throw voice.fail('tool.unknown', { name });
        const text = await tool(session, validateArguments(voice, name, rawArguments), hooks);
        return wireResult(callId, text, false);
      } catch (error) {
        if (error instanceof HookMistake) throw error;
        if (hooks.failed) return hooks.failed(callId, error, { op: name, mode: session.mode });
        const text = voice.refused(error) ? error.message : `Unexpected failure: ${error?.message ?? String(error)}`;
        return wireResult(callId, text, true);
      }
    },

    closeWorkspace(handle) {
      sessions.get(handle);
      sessions.delete(handle);
      callIds.forget(handle);
    },
  };
}

// Serve on stdio when run as a program (not when imported, e.g. by a test fixture).
if (process.argv[1] && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href) {
  await serve(createHandlers());
}
