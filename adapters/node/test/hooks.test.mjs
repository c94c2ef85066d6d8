// The example's tools carrying another harness (createHandlers' hooks): its own words, its own
// errors and results, and a workspace-write fence with or without the temp directory.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';

import { createHandlers } from '../example/harness.mjs';
import { removeTempDirs, tempDir } from '../test-support/helpers.mjs';

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
});
