// End-to-end tests of example/harness.mjs: spawned as a child process and driven through the
// stdio protocol, over temporary directories whose every byte is checked.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { PACKAGE_DIR, fileEntry, removeTempDirs, snapshot, spawnHarness, tempDir } from '../test-support/helpers.mjs';

const EXAMPLE = path.join(PACKAGE_DIR, 'example', 'harness.mjs');
const RACING = path.join(PACKAGE_DIR, 'test-support', 'racing-harness.mjs');
const UMASK = process.umask(); // inherited by the child

/** `{callId, content: [one text block], isError}`: the only shape this harness returns. */
function result(callId, text, isError) {
  return { callId, content: [{ type: 'text', text }], isError };
}

/**
 * A workspace in a fresh temp directory with `files` ({relpath: content}) in it, and a session
 * over it; `call(name, args)` calls a tool and numbers the expected call ids for the test.
 */
async function workspace(harness, files = {}, options = { policy: true, sandbox: 'danger-full-access' }) {
  const root = tempDir();
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), content);
  }
  const session = await harness.call('open_workspace', { root, options });
  let calls = 0;
  return {
    root,
    session,
    p: (rel) => path.join(root, rel),
    call: (name, args) => harness.tool(session, name, args),
    /** The call id the next call will get. */
    nextId: () => `call_${++calls}`,
    /** The wire result expected of the next call. */
    expect: (text, isError) => result(`call_${++calls}`, text, isError),
  };
}

/** The sessions the tests call after they are gone, in order. */
const unknownSessions = [];

let harness;
before(() => {
  harness = spawnHarness(EXAMPLE);
});
after(async () => {
  removeTempDirs();
  const outcome = await harness.close();
  // Nothing but answers on stdout, every request answered, and a clean exit at EOF; on stderr
  // only the stacks of the two calls on an unknown session (the protocol tests make them).
  const logged = outcome.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('    at '));
  assert.deepEqual(
    { code: outcome.code, unexpected: outcome.unexpected, unanswered: outcome.unanswered, logged },
    { code: 0, unexpected: [], unanswered: [], logged: unknownSessions.map((session) => `call_tool failed: Error: unknown handle "${session}" (no ws has it)`) },
  );
});

describe('protocol', { timeout: 20_000 }, () => {
  test('describe: tools only, its options, any paths', async () => {
    assert.deepEqual(await harness.request('describe'), {
      id: 1,
      result: {
        name: 'example-node-harness',
        version: '0.1.0',
        language: 'javascript',
        protocol: 1,
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
        batch: true,
      },
    });
  });

  test('an unknown session is a protocol error, not a tool result', async () => {
    unknownSessions.push('ws_999');
    const answer = await harness.request('call_tool', { session: 'ws_999', name: 'read', arguments: {} });
    assert.deepEqual(answer.error, { message: 'call_tool failed: unknown handle "ws_999" (no ws has it)' });
  });

  test('call ids count per session; closing forgets the session', async () => {
    const one = await workspace(harness, { 'a.txt': 'a\n' });
    const two = await workspace(harness, { 'a.txt': 'a\n' });
    assert.equal((await one.call('read', { file_path: 'a.txt' })).callId, 'call_1');
    assert.equal((await one.call('read', { file_path: 'a.txt' })).callId, 'call_2');
    assert.equal((await two.call('read', { file_path: 'a.txt' })).callId, 'call_1');
    assert.equal(await harness.call('close_workspace', { session: one.session }), null);
    unknownSessions.push(one.session);
    const answer = await harness.request('call_tool', { session: one.session, name: 'read', arguments: {} });
    assert.equal(answer.error.message, `call_tool failed: unknown handle "${one.session}" (no ws has it)`);
  });
});

describe('read', { timeout: 20_000 }, () => {
  test('numbers lines split on \\n only, strips one \\r, and windows with offset/limit', async () => {
    const ws = await workspace(harness, { 'a.txt': 'one\ntwo\r\nthree\vx\u2028y', 'empty.txt': '', 'nl.txt': '\n' });
    const p = ws.p('a.txt');
    assert.deepEqual(
      await ws.call('read', { file_path: 'a.txt' }),
      ws.expect(`File: ${p}\n     1\tone\n     2\ttwo\n     3\tthree\vx\u2028y\n[end of file: 3 lines]`, false),
    );
    assert.deepEqual(
      await ws.call('read', { file_path: p, offset: 2, limit: 1 }), // an absolute path works too
      ws.expect(`File: ${p}\n     2\ttwo\n[showing lines 2-2 of 3; continue with offset=3]`, false),
    );
    assert.deepEqual(
      await ws.call('read', { file_path: 'empty.txt' }),
      ws.expect(`File: ${ws.p('empty.txt')}\n[end of file: 0 lines]`, false),
    );
    assert.deepEqual(
      await ws.call('read', { file_path: './sub/../nl.txt' }),
      ws.expect(`File: ${ws.p('nl.txt')}\n     1\t\n[end of file: 1 line]`, false),
    );
  });

  test('an offset past the end, a missing file, a directory are refused', async () => {
    const ws = await workspace(harness, { 'a.txt': 'one\ntwo\n', 'd/x.txt': 'x' });
    assert.deepEqual(
      await ws.call('read', { file_path: 'a.txt', offset: 3 }),
      ws.expect(`Offset 3 is past the end of ${ws.p('a.txt')} (2 lines)`, true),
    );
    assert.deepEqual(await ws.call('read', { file_path: 'nope.txt' }), ws.expect(`File not found: ${ws.p('nope.txt')}`, true));
    assert.deepEqual(await ws.call('read', { file_path: 'd' }), ws.expect(`${ws.p('d')} is not a regular file`, true));
    assert.deepEqual(
      await ws.call('read', { file_path: 'a.txt/b' }),
      ws.expect(`Cannot use the path ${ws.p('a.txt/b')}: one of its parent directories is a file`, true),
    );
  });

  test('a long line is cut at 2000 characters (code points)', async () => {
    const line = '\u{1F600}'.repeat(2001); // 2001 code points, 4002 UTF-16 units
    const ws = await workspace(harness, { 'long.txt': `${line}\n${'b'.repeat(2000)}\n` });
    assert.deepEqual(
      await ws.call('read', { file_path: 'long.txt' }),
      ws.expect(
        `File: ${ws.p('long.txt')}\n     1\t${'\u{1F600}'.repeat(2000)}[... line cut at 2000 characters]\n     2\t${'b'.repeat(2000)}\n[end of file: 2 lines]`,
        false,
      ),
    );
  });

  test('a FIFO is refused without blocking, by read, write and edit', { timeout: 10_000 }, async () => {
    const ws = await workspace(harness);
    execFileSync('mkfifo', [ws.p('pipe')]);
    const before = snapshot(ws.root);
    assert.deepEqual(await ws.call('read', { file_path: 'pipe' }), ws.expect(`${ws.p('pipe')} is not a regular file`, true));
    assert.deepEqual(
      await ws.call('write', { file_path: 'pipe', content: 'x' }),
      ws.expect(`${ws.p('pipe')} is not a regular file`, true),
    );
    const unguarded = await workspace(harness, {}, { policy: false, sandbox: 'danger-full-access' });
    assert.deepEqual(
      await unguarded.call('edit', { file_path: ws.p('pipe'), old_string: 'a', new_string: 'b' }),
      unguarded.expect(`${ws.p('pipe')} is not a regular file`, true),
    );
    assert.deepEqual(snapshot(ws.root), before);
  });
});

describe('text is strict UTF-8', { timeout: 20_000 }, () => {
  test('invalid UTF-8 anywhere, even far past the window, is refused and records nothing', async () => {
    const far = Buffer.concat([Buffer.from('ok\n'.repeat(3000)), Buffer.from([0xc3, 0x28, 0x0a])]);
    const ws = await workspace(harness, { 'bad.txt': Buffer.from([0x61, 0xff, 0x0a]), 'far.txt': far });
    const before = snapshot(ws.root);
    assert.deepEqual(await ws.call('read', { file_path: 'bad.txt' }), ws.expect(`${ws.p('bad.txt')} is not valid UTF-8 text`, true));
    assert.deepEqual(
      await ws.call('read', { file_path: 'far.txt', limit: 1 }),
      ws.expect(`${ws.p('far.txt')} is not valid UTF-8 text`, true),
    );
    // The failed read recorded nothing: the file still counts as never read.
    assert.deepEqual(
      await ws.call('write', { file_path: 'bad.txt', content: 'fixed\n' }),
      ws.expect(`Refusing to overwrite ${ws.p('bad.txt')}: read it first`, true),
    );
    assert.deepEqual(
      await ws.call('edit', { file_path: 'far.txt', old_string: 'ok', new_string: 'ko' }),
      ws.expect(`${ws.p('far.txt')} has not been read in this session; read it before editing`, true),
    );
    assert.deepEqual(snapshot(ws.root), before);
  });

  test('a NUL byte makes a file binary: read (first 8192 bytes) and edit (anywhere) refuse it', async () => {
    const late = Buffer.from(`${'a'.repeat(99)}\n`.repeat(90) + '\u0000\n'); // the NUL at byte 9000
    const ws = await workspace(harness, { 'bin.dat': Buffer.from([0x61, 0x00, 0x62]), 'late.txt': late });
    assert.deepEqual(
      await ws.call('read', { file_path: 'bin.dat' }),
      ws.expect(`${ws.p('bin.dat')} looks like a binary file; not reading it`, true),
    );
    // Past the first 8192 bytes a NUL is a character for read, but edit refuses the file.
    const read = await ws.call('read', { file_path: 'late.txt' });
    assert.deepEqual([read.isError, read.content[0].text.endsWith('    91\t\u0000\n[end of file: 91 lines]')], [false, true]);
    ws.nextId();
    assert.deepEqual(
      await ws.call('edit', { file_path: 'late.txt', old_string: 'aaa', new_string: 'b', replace_all: true }),
      ws.expect(`${ws.p('late.txt')} looks like a binary file; not editing it`, true),
    );
    assert.deepEqual(snapshot(ws.root)['late.txt'], fileEntry(late));
  });

  test('CRLF and a byte-order mark survive read, edit and write untouched', async () => {
    const ws = await workspace(harness, { 'crlf.txt': '\uFEFFalpha\r\nbeta\r\n' });
    assert.deepEqual(
      await ws.call('read', { file_path: 'crlf.txt' }),
      ws.expect(`File: ${ws.p('crlf.txt')}\n     1\t\uFEFFalpha\n     2\tbeta\n[end of file: 2 lines]`, false),
    );
    assert.deepEqual(
      await ws.call('edit', { file_path: 'crlf.txt', old_string: 'alpha\r\nbeta', new_string: 'gamma\r\ndelta' }),
      ws.expect(`Edited ${ws.p('crlf.txt')}`, false),
    );
    assert.deepEqual(snapshot(ws.root), { 'crlf.txt': fileEntry('\uFEFFgamma\r\ndelta\r\n') });
    // A "\n" in old_string does not match the "\r\n" of the file.
    assert.deepEqual(
      await ws.call('edit', { file_path: 'crlf.txt', old_string: 'gamma\ndelta', new_string: 'x' }),
      ws.expect(`Could not find old_string in ${ws.p('crlf.txt')}`, true),
    );
    assert.deepEqual(
      await ws.call('write', { file_path: 'crlf.txt', content: '\uFEFFone\r\ntwo\r\n' }),
      ws.expect(`Wrote 13 bytes to ${ws.p('crlf.txt')}`, false),
    );
    assert.deepEqual(snapshot(ws.root), { 'crlf.txt': fileEntry('\uFEFFone\r\ntwo\r\n') });
  });
});

describe('the observation guard', { timeout: 20_000 }, () => {
  test('write of an existing never-read file and edit of a never-read path are refused', async () => {
    const ws = await workspace(harness, { 'a.txt': 'original\n' });
    const before = snapshot(ws.root);
    assert.deepEqual(
      await ws.call('write', { file_path: 'a.txt', content: 'clobber\n' }),
      ws.expect(`Refusing to overwrite ${ws.p('a.txt')}: read it first`, true),
    );
    assert.deepEqual(
      await ws.call('edit', { file_path: 'a.txt', old_string: 'original', new_string: 'x' }),
      ws.expect(`${ws.p('a.txt')} has not been read in this session; read it before editing`, true),
    );
    assert.deepEqual(
      await ws.call('edit', { file_path: 'missing.txt', old_string: 'a', new_string: 'b' }),
      ws.expect(`${ws.p('missing.txt')} has not been read in this session; read it before editing`, true),
    );
    assert.deepEqual(snapshot(ws.root), before);
    // Another session's read does not count.
    const other = await workspace(harness);
    await harness.tool(other.session, 'read', { file_path: ws.p('a.txt') });
    assert.deepEqual(
      await ws.call('write', { file_path: 'a.txt', content: 'clobber\n' }),
      ws.expect(`Refusing to overwrite ${ws.p('a.txt')}: read it first`, true),
    );
    assert.deepEqual(snapshot(ws.root), before);
  });

  test('a new file needs no read; after a read, writes and edits go through and count as reads', async () => {
    const ws = await workspace(harness, { 'a.txt': 'one two two\n' });
    assert.deepEqual(
      await ws.call('write', { file_path: 'new/deep/b.txt', content: 'fresh\n' }),
      ws.expect(`Created ${ws.p('new/deep/b.txt')} (6 bytes)`, false),
    );
    ws.nextId();
    assert.equal((await ws.call('read', { file_path: 'a.txt' })).isError, false);
    assert.deepEqual(
      await ws.call('write', { file_path: 'a.txt', content: 'one two two three\n' }),
      ws.expect(`Wrote 18 bytes to ${ws.p('a.txt')}`, false),
    );
    assert.deepEqual(
      await ws.call('edit', { file_path: 'a.txt', old_string: 'three', new_string: 'four' }),
      ws.expect(`Edited ${ws.p('a.txt')}`, false),
    );
    assert.deepEqual(
      await ws.call('edit', { file_path: 'new/deep/b.txt', old_string: 'fresh', new_string: 'stale' }),
      ws.expect(`Edited ${ws.p('new/deep/b.txt')}`, false),
    );
    assert.deepEqual(snapshot(ws.root), {
      'a.txt': fileEntry('one two two four\n'),
      new: 'dir',
      'new/deep': 'dir',
      'new/deep/b.txt': fileEntry('stale\n'),
    });
  });

  test('an outside change after the read makes write and edit stale; a fresh read recovers', async () => {
    const ws = await workspace(harness, { 'a.txt': 'mine\n' });
    await ws.call('read', { file_path: 'a.txt' });
    ws.nextId();
    fs.writeFileSync(ws.p('a.txt'), 'theirs, longer\n');
    const stale = `${ws.p('a.txt')} changed on disk since you read it; read it again`;
    assert.deepEqual(await ws.call('write', { file_path: 'a.txt', content: 'mine 2\n' }), ws.expect(stale, true));
    assert.deepEqual(
      await ws.call('edit', { file_path: 'a.txt', old_string: 'theirs', new_string: 'ours' }),
      ws.expect(stale, true),
    );
    assert.deepEqual(snapshot(ws.root), { 'a.txt': fileEntry('theirs, longer\n') });
    await ws.call('read', { file_path: 'a.txt' });
    ws.nextId();
    assert.deepEqual(
      await ws.call('edit', { file_path: 'a.txt', old_string: 'theirs', new_string: 'ours' }),
      ws.expect(`Edited ${ws.p('a.txt')}`, false),
    );
    assert.deepEqual(snapshot(ws.root), { 'a.txt': fileEntry('ours, longer\n') });
  });

  test('a same-size rewrite in place with the mtime restored is still detected', async () => {
    const ws = await workspace(harness, { 'a.txt': 'hello\n' });
    // Whole-second timestamps, so that they can be restored exactly (utimes takes no ns).
    const stamp = 1_700_000_000;
    fs.utimesSync(ws.p('a.txt'), stamp, stamp);
    await ws.call('read', { file_path: 'a.txt' });
    ws.nextId();
    const seen = fs.statSync(ws.p('a.txt'), { bigint: true });
    const fd = fs.openSync(ws.p('a.txt'), 'r+');
    fs.writeSync(fd, 'HELLO\n', 0);
    fs.futimesSync(fd, seen.atime, stamp); // the atime to the millisecond; it is no part of a version
    fs.closeSync(fd);
    const now = fs.statSync(ws.p('a.txt'), { bigint: true });
    assert.deepEqual([now.ino, now.size, now.mtimeNs], [seen.ino, seen.size, seen.mtimeNs]);
    const stale = `${ws.p('a.txt')} changed on disk since you read it; read it again`;
    assert.deepEqual(await ws.call('write', { file_path: 'a.txt', content: 'bye\n' }), ws.expect(stale, true));
    assert.deepEqual(
      await ws.call('edit', { file_path: 'a.txt', old_string: 'HELLO', new_string: 'bye' }),
      ws.expect(stale, true),
    );
    assert.deepEqual(snapshot(ws.root), { 'a.txt': fileEntry('HELLO\n') });
  });

  test('a file read and then deleted is a dead end until it exists again and is re-read', async () => {
    const ws = await workspace(harness, { 'a.txt': 'v1\n' });
    await ws.call('read', { file_path: 'a.txt' });
    ws.nextId();
    fs.unlinkSync(ws.p('a.txt'));
    const deleted = `${ws.p('a.txt')} was deleted after you read it; read it again once it exists`;
    const stale = `${ws.p('a.txt')} changed on disk since you read it; read it again`;
    assert.deepEqual(await ws.call('write', { file_path: 'a.txt', content: 'v2\n' }), ws.expect(deleted, true));
    assert.deepEqual(await ws.call('edit', { file_path: 'a.txt', old_string: 'v1', new_string: 'v2' }), ws.expect(stale, true));
    assert.deepEqual(await ws.call('read', { file_path: 'a.txt' }), ws.expect(`File not found: ${ws.p('a.txt')}`, true));
    assert.deepEqual(await ws.call('write', { file_path: 'a.txt', content: 'v2\n' }), ws.expect(deleted, true));
    assert.deepEqual(snapshot(ws.root), {}); // nothing was created
    fs.writeFileSync(ws.p('a.txt'), 'v1 again\n');
    assert.deepEqual(await ws.call('write', { file_path: 'a.txt', content: 'v2\n' }), ws.expect(stale, true));
    await ws.call('read', { file_path: 'a.txt' });
    ws.nextId();
    assert.deepEqual(await ws.call('write', { file_path: 'a.txt', content: 'v2\n' }), ws.expect(`Wrote 3 bytes to ${ws.p('a.txt')}`, false));
    assert.deepEqual(snapshot(ws.root), { 'a.txt': fileEntry('v2\n') });
  });

  test('symlink aliases share one guard, and writing through a link keeps the link', async () => {
    const ws = await workspace(harness, { 'real.txt': 'real\n' });
    fs.symlinkSync('real.txt', ws.p('link.txt'));
    fs.symlinkSync('created-later.txt', ws.p('dangling.txt'));
    await ws.call('read', { file_path: 'link.txt' });
    ws.nextId();
    // Read through the link, written through the real name: the same observation.
    assert.deepEqual(await ws.call('write', { file_path: 'real.txt', content: 'one\n' }), ws.expect(`Wrote 4 bytes to ${ws.p('real.txt')}`, false));
    assert.deepEqual(await ws.call('write', { file_path: 'link.txt', content: 'two\n' }), ws.expect(`Wrote 4 bytes to ${ws.p('link.txt')}`, false));
    // A dangling link resolves to its target: writing it creates the target.
    assert.deepEqual(
      await ws.call('write', { file_path: 'dangling.txt', content: 'new\n' }),
      ws.expect(`Created ${ws.p('dangling.txt')} (4 bytes)`, false),
    );
    assert.deepEqual(snapshot(ws.root), {
      'created-later.txt': fileEntry('new\n'),
      'dangling.txt': 'link:created-later.txt',
      'link.txt': 'link:real.txt',
      'real.txt': fileEntry('two\n'),
    });
  });

  test('with policy false there is no guard at all', async () => {
    const ws = await workspace(harness, { 'a.txt': 'unread\n' }, { policy: false, sandbox: 'danger-full-access' });
    assert.deepEqual(await ws.call('write', { file_path: 'a.txt', content: 'over\n' }), ws.expect(`Wrote 5 bytes to ${ws.p('a.txt')}`, false));
    fs.writeFileSync(ws.p('a.txt'), 'changed outside\n');
    assert.deepEqual(
      await ws.call('edit', { file_path: 'a.txt', old_string: 'outside', new_string: 'inside' }),
      ws.expect(`Edited ${ws.p('a.txt')}`, false),
    );
    assert.deepEqual(
      await ws.call('edit', { file_path: 'gone.txt', old_string: 'a', new_string: 'b' }),
      ws.expect(`${ws.p('gone.txt')} changed on disk since you read it; read it again`, true),
    );
    assert.deepEqual(snapshot(ws.root), { 'a.txt': fileEntry('changed inside\n') });
  });
});

describe('edit matching', { timeout: 20_000 }, () => {
  test('0 occurrences and ambiguity are refused; replace_all replaces non-overlapping ones', async () => {
    const ws = await workspace(harness, { 'a.txt': 'x aaa x aaa\n' });
    await ws.call('read', { file_path: 'a.txt' });
    ws.nextId();
    assert.deepEqual(
      await ws.call('edit', { file_path: 'a.txt', old_string: 'zzz', new_string: 'y' }),
      ws.expect(`Could not find old_string in ${ws.p('a.txt')}`, true),
    );
    assert.deepEqual(
      await ws.call('edit', { file_path: 'a.txt', old_string: 'aa', new_string: 'b' }),
      ws.expect(`old_string occurs 2 times in ${ws.p('a.txt')}; add surrounding text to pick one, or pass replace_all`, true),
    );
    assert.deepEqual(snapshot(ws.root), { 'a.txt': fileEntry('x aaa x aaa\n') });
    assert.deepEqual(
      await ws.call('edit', { file_path: 'a.txt', old_string: 'aa', new_string: 'b', replace_all: true }),
      ws.expect(`Edited ${ws.p('a.txt')} (2 replacements)`, false),
    );
    assert.deepEqual(snapshot(ws.root), { 'a.txt': fileEntry('x ba x ba\n') });
    assert.deepEqual(
      await ws.call('edit', { file_path: 'a.txt', old_string: 'x ba\n', new_string: 'end\n', replace_all: true }),
      ws.expect(`Edited ${ws.p('a.txt')} (1 replacement)`, false),
    );
    assert.deepEqual(snapshot(ws.root), { 'a.txt': fileEntry('x ba end\n') });
  });
});

describe('arguments', { timeout: 20_000 }, () => {
  test('are validated before anything is touched; a string is raw JSON text', async () => {
    const ws = await workspace(harness, { 'a.txt': 'a\n' });
    const before = snapshot(ws.root);
    const cases = [
      // 2.0 is an integer: valid arguments, and the read itself refuses offset 2 of one line.
      ['read', '{"file_path": "a.txt", "offset": 2.0, "limit": 1}', `Offset 2 is past the end of ${ws.p('a.txt')} (1 line)`],
      ['read', '{"file_path": "a.txt"', 'Bad arguments for read: not valid JSON'],
      ['read', '{"file_path": "a.txt", "offset": 1e999}', 'Bad arguments for read: not valid JSON'],
      ['read', `{"file_path": "a.txt", "offset": ${'9'.repeat(101)}}`, 'Bad arguments for read: not valid JSON'],
      ['read', `${'['.repeat(101)}${']'.repeat(101)}`, 'Bad arguments for read: not valid JSON'],
      ['read', '[1]', 'Bad arguments for read: expected a JSON object'],
      ['read', { file_path: 'a.txt', mode: 'r' }, 'Bad arguments for read: "mode" is not a known parameter'],
      ['read', { file_path: 'a.txt', offset: 1.5 }, 'Bad arguments for read: "offset" should be an integer'],
      ['read', { file_path: 'a.txt', offset: null }, 'Bad arguments for read: "offset" should be an integer'],
      ['read', { file_path: 'a.txt', offset: 0 }, 'Bad arguments: offset must be 1 or more'],
      ['read', { file_path: 'a.txt', limit: 2001 }, 'Bad arguments: limit may be at most 2000'],
      ['read', { file_path: '' }, 'Bad arguments: file_path is empty'],
      ['read', { file_path: 'a\u0000b' }, 'Bad arguments: file_path contains a NUL character'],
      ['write', { file_path: 3 }, 'Bad arguments for write: "content" is required; "file_path" should be a string'],
      ['write', { file_path: 'n.txt', content: 'x', extra: 1 }, 'Bad arguments for write: "extra" is not a known parameter'],
      ['edit', { file_path: 'a.txt', old_string: 'a', new_string: 'b', replace_all: 'yes' }, 'Bad arguments for edit: "replace_all" should be a boolean'],
      ['edit', { file_path: 'a.txt', old_string: '', new_string: 'b' }, 'Bad arguments: old_string is empty'],
      ['edit', { file_path: 'a.txt', old_string: 'a', new_string: 'a' }, 'Bad arguments: old_string and new_string are the same; nothing would change'],
      ['delete', { file_path: 'a.txt' }, 'Unknown tool: delete (this harness has read, write and edit)'],
    ];
    for (const [name, args, refusal] of cases) {
      assert.deepEqual(await ws.call(name, args), ws.expect(refusal, true), `${name} ${JSON.stringify(args)}`);
    }
    assert.deepEqual(snapshot(ws.root), before);
  });
});

describe('publication', { timeout: 20_000 }, () => {
  test('no temporary file is left after successes or failures, and modes are kept', async () => {
    const ws = await workspace(harness, { 'a.txt': 'a\n', 'd/keep.txt': 'k\n' });
    fs.chmodSync(ws.p('a.txt'), 0o640);
    await ws.call('read', { file_path: 'a.txt' });
    ws.nextId();
    assert.equal((await ws.call('write', { file_path: 'a.txt', content: 'b\n' })).isError, false);
    assert.equal((await ws.call('edit', { file_path: 'a.txt', old_string: 'b', new_string: 'c' })).isError, false);
    assert.equal((await ws.call('write', { file_path: 'd/new.txt', content: 'n\n' })).isError, false);
    assert.equal((await ws.call('write', { file_path: 'd/keep.txt', content: 'lost\n' })).isError, true);
    assert.equal((await ws.call('edit', { file_path: 'a.txt', old_string: 'zzz', new_string: 'y' })).isError, true);
    assert.deepEqual(snapshot(ws.root), {
      'a.txt': fileEntry('c\n'),
      d: 'dir',
      'd/keep.txt': fileEntry('k\n'),
      'd/new.txt': fileEntry('n\n'),
    });
    assert.equal(fs.statSync(ws.p('a.txt')).mode & 0o777, 0o640);
    assert.equal(fs.statSync(ws.p('d/new.txt')).mode & 0o777, 0o666 & ~UMASK);
  });

  test('an update replaces the inode atomically: a hard link to the old file keeps the old bytes', async () => {
    const ws = await workspace(harness, { 'a.txt': 'old\n' });
    fs.linkSync(ws.p('a.txt'), ws.p('old-link.txt'));
    await ws.call('read', { file_path: 'a.txt' });
    ws.nextId();
    assert.equal((await ws.call('write', { file_path: 'a.txt', content: 'new\n' })).isError, false);
    assert.deepEqual(snapshot(ws.root), { 'a.txt': fileEntry('new\n'), 'old-link.txt': fileEntry('old\n') });
  });

  test('of two concurrent writes from two sessions based on one version, exactly one wins', async () => {
    const one = await workspace(harness, { 'a.txt': 'base\n' });
    const two = await workspace(harness);
    const file = one.p('a.txt');
    await one.call('read', { file_path: file });
    await harness.tool(two.session, 'read', { file_path: file });
    // Both requests are on the wire before either is answered.
    const results = await Promise.all([
      one.call('write', { file_path: file, content: 'from one\n' }),
      harness.tool(two.session, 'write', { file_path: file, content: 'from two\n' }),
    ]);
    assert.deepEqual(results.map((r) => r.isError).sort(), [false, true]);
    const winner = results[0].isError ? 'from two\n' : 'from one\n';
    const loser = results[0].isError ? results[0] : results[1];
    assert.equal(loser.content[0].text, `${file} changed on disk since you read it; read it again`);
    assert.deepEqual(snapshot(one.root), { 'a.txt': fileEntry(winner) });
  });

  test('of two concurrent creates of one new file, exactly one wins and nothing is clobbered', async () => {
    const one = await workspace(harness);
    const two = await workspace(harness);
    const file = one.p('new.txt');
    const results = await Promise.all([
      one.call('write', { file_path: file, content: 'from one\n' }),
      harness.tool(two.session, 'write', { file_path: file, content: 'from two\n' }),
    ]);
    assert.deepEqual(results.map((r) => r.isError).sort(), [false, true]);
    const winner = results[0].isError ? 'from two\n' : 'from one\n';
    const loser = results[0].isError ? results[0] : results[1];
    assert.equal(loser.content[0].text, `Refusing to overwrite ${file}: read it first`);
    assert.deepEqual(snapshot(one.root), { 'new.txt': fileEntry(winner) });
  });
});

describe('publication under a competitor and a failing disk', { timeout: 20_000 }, () => {
  let racing;
  before(() => {
    racing = spawnHarness(RACING);
  });
  after(async () => {
    assert.equal((await racing.close()).code, 0);
  });

  test('a file created by someone else while ours was staged is never clobbered', async () => {
    const ws = await workspace(racing);
    assert.deepEqual(
      await ws.call('write', { file_path: 'race-new.txt', content: 'ours\n' }),
      ws.expect(`Refusing to overwrite ${ws.p('race-new.txt')}: read it first`, true),
    );
    assert.deepEqual(snapshot(ws.root), { 'race-new.txt': fileEntry('theirs\n') });
  });

  test('a failed create leaves no file, no temp file and none of the directories it made', async () => {
    const ws = await workspace(racing, { 'existing/keep.txt': 'k\n' });
    const before = snapshot(ws.root);
    assert.deepEqual(
      await ws.call('write', { file_path: 'made/for/it/enospc-a.txt', content: 'x\n' }),
      ws.expect(`Could not write ${ws.p('made/for/it/enospc-a.txt')}: no space left on device`, true),
    );
    assert.deepEqual(
      await ws.call('write', { file_path: 'existing/more/enospc-b.txt', content: 'x\n' }),
      ws.expect(`Could not write ${ws.p('existing/more/enospc-b.txt')}: no space left on device`, true),
    );
    assert.deepEqual(snapshot(ws.root), before);
  });

  test('a failed update or edit leaves the file byte-identical, its mode and no temp file', async () => {
    const ws = await workspace(racing, { 'enospc-c.txt': 'keep me\r\n' });
    fs.chmodSync(ws.p('enospc-c.txt'), 0o600);
    const before = snapshot(ws.root);
    await ws.call('read', { file_path: 'enospc-c.txt' });
    ws.nextId();
    assert.deepEqual(
      await ws.call('write', { file_path: 'enospc-c.txt', content: 'lost\n' }),
      ws.expect(`Could not write ${ws.p('enospc-c.txt')}: no space left on device`, true),
    );
    assert.deepEqual(
      await ws.call('edit', { file_path: 'enospc-c.txt', old_string: 'keep', new_string: 'lose' }),
      ws.expect(`Could not edit ${ws.p('enospc-c.txt')}: no space left on device`, true),
    );
    assert.deepEqual(snapshot(ws.root), before);
    assert.equal(fs.statSync(ws.p('enospc-c.txt')).mode & 0o777, 0o600);
  });
});
