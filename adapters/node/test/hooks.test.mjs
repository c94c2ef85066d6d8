// The example's tools carrying another harness (createHandlers' hooks): its own words, its own
// errors and results, and a workspace-write fence with or without the temp directory.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';

import { createHandlers } from '../example/harness.mjs';
import { removeTempDirs, serveInMemory, tempDir } from '../test-support/helpers.mjs';

after(removeTempDirs);

/** A workspace `ws` beside a temp directory `tmp` (TMPDIR while it opens) and an `outside` one. */
function layout() {
  const base = tempDir();
  const dirs = Object.fromEntries(['ws', 'tmp', 'outside'].map((name) => [name, path.join(base, name)]));
  for (const dir of Object.values(dirs)) fs.mkdirSync(dir);
  return dirs;
}

function open(handlers, root, options, tmpdir) {
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = tmpdir;
  try {
    return handlers.openWorkspace(root, options);
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
}

const text = (result) => result.content[0].text;

describe('createHandlers hooks', { timeout: 20_000 }, () => {
  test('workspace-write grants the temp directory only with tempWritable', async () => {
    const dirs = layout();
    for (const tempWritable of [false, true]) {
      const handlers = createHandlers({ tempWritable });
      const session = open(handlers, dirs.ws, { sandbox: 'workspace-write' }, dirs.tmp);
      const inTemp = path.join(dirs.tmp, `grant-${tempWritable}.txt`);
      const temp = await handlers.callTool(session, 'write', { file_path: inTemp, content: 'x' });
      assert.equal(temp.isError, !tempWritable, text(temp));
      assert.equal(fs.existsSync(inTemp), tempWritable);
      const outside = await handlers.callTool(session, 'write', { file_path: path.join(dirs.outside, 'x.txt'), content: 'x' });
      assert.equal(outside.isError, true);
      assert.match(text(outside), /outside what workspace-write allows/);
      const inside = await handlers.callTool(session, 'write', { file_path: `in-${tempWritable}.txt`, content: 'x' });
      assert.equal(inside.isError, false, text(inside));
    }
    assert.deepEqual(fs.readdirSync(dirs.outside), []);
  });

  test('words, refusals and failed results are the harness’s own', async () => {
    const dirs = layout();
    const seen = [];
    const handlers = createHandlers({
      words: { 'fs.read_missing': ({ p }) => `${p}: no such file`, 'fs.sandbox': ({ mode }) => `fenced (${mode})` },
      refusal(details) {
        seen.push([details.key, details.code]);
        return Object.assign(new Error(details.message), { code: details.code });
      },
      failed: (callId, error, { op, mode }) => ({ callId, content: [{ type: 'text', text: `${op}/${mode}: ${error.message}` }], isError: true, error: { name: 'Own', code: error.code } }),
    });
    const session = open(handlers, dirs.ws, { sandbox: 'read-only' }, dirs.tmp);
    const missing = await handlers.callTool(session, 'read', { file_path: 'gone.txt' });
    assert.deepEqual(missing.error, { name: 'Own', code: 'FS_NOT_FOUND' });
    assert.equal(text(missing), `read/read-only: ${path.join(dirs.ws, 'gone.txt')}: no such file`);
    const fenced = await handlers.callTool(session, 'write', { file_path: 'a.txt', content: 'x' });
    assert.equal(text(fenced), 'write/read-only: fenced (read-only)');
    const checked = await handlers.callTool(session, 'read', { file_path: 'a.txt', offset: 0 });
    assert.equal(text(checked), 'read/read-only: Bad arguments: offset must be 1 or more');
    assert.deepEqual(seen, [['fs.read_missing', 'FS_NOT_FOUND'], ['fs.sandbox', 'FS_SANDBOX_DENIED'], ['check.offset', null]]);
  });

  test('a words entry or a hook that is not a function is refused at creation, naming it', () => {
    const mistakes = [
      [{ words: { 'fs.read_missing': 'File not found' } }, `createHandlers: words["fs.read_missing"] must be a function of the template's fields, got a string`],
      [{ words: { 'fs.sandbox': undefined } }, `createHandlers: words["fs.sandbox"] must be a function of the template's fields, got undefined`],
      [{ words: 'File not found' }, 'createHandlers: words must be an object of functions by wording-table key, got a string'],
      [{ refusal: new Error('x') }, 'createHandlers: hooks.refusal must be a function, got an object'],
      [{ failed: 'text' }, 'createHandlers: hooks.failed must be a function, got a string'],
      [null, 'createHandlers(hooks): hooks must be an object, got null'],
    ];
    for (const [hooks, message] of mistakes) assert.throws(() => createHandlers(hooks), { name: 'TypeError', message });
  });

  test('a refusal hook that returns no object fails the call with its key, never as the tool’s failure', async () => {
    const dirs = layout();
    fs.writeFileSync(path.join(dirs.ws, 'plain.txt'), 'a file, not a directory\n');
    const failed = [];
    const handlers = createHandlers({
      refusal: ({ message }) => message, // a string: the error was meant
      failed: (callId, error) => failed.push(error),
    });
    const session = open(handlers, dirs.ws, {}, dirs.tmp);
    await assert.rejects(handlers.callTool(session, 'read', { file_path: 'gone.txt' }), {
      name: 'TypeError',
      message: 'hooks.refusal must return an Error object for "fs.read_missing", got a string',
    });
    // Also from inside the path checks, which leave other errors for the operation to report.
    await assert.rejects(handlers.callTool(session, 'write', { file_path: 'plain.txt/x.txt', content: 'x' }), {
      message: 'hooks.refusal must return an Error object for "fs.parent_segment", got a string',
    });
    assert.deepEqual(failed, []);
    // Served, it is the kit's failure of the call, which the suite reports as the harness's.
    const server = serveInMemory(handlers);
    server.send({ id: 1, method: 'call_tool', params: { session, name: 'read', arguments: { file_path: 'gone.txt' } } });
    assert.deepEqual(await server.next(), {
      id: 1,
      error: { message: 'call_tool failed: hooks.refusal must return an Error object for "fs.read_missing", got a string' },
    });
    await server.end();
    assert.match(server.logged.join(''), /^call_tool failed: TypeError: hooks\.refusal must return an Error object/);
  });

  test('a words function that returns no string fails the call, naming its key', async () => {
    const dirs = layout();
    const handlers = createHandlers({ words: { 'fs.read_missing': ({ p }) => { `${p}: no such file`; } } }); // eslint-disable-line no-unused-expressions
    const session = open(handlers, dirs.ws, {}, dirs.tmp);
    await assert.rejects(handlers.callTool(session, 'read', { file_path: 'gone.txt' }), {
      name: 'TypeError',
      message: 'words["fs.read_missing"] must return a string, got undefined',
    });
  });
});
