// Unit tests of the kit: serve() driven through in-memory streams, and the helpers.
// Ordering is driven with deferred promises, never sleeps; the suite timeouts only turn a
// regression that would hang (a serve() that stopped answering concurrently) into a failure.
import assert from 'node:assert/strict';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';

import { CallIds, HandleTable, KeyedMutex, inferCapabilities, serve, wireResult } from '../index.mjs';
import { PACKAGE_DIR, deferred, serveInMemory, spawnHarness } from '../test-support/helpers.mjs';

const toolsOnly = {
  describe: () => ({ name: 't', version: '1.0' }),
  openWorkspace: () => 's1',
  callTool: () => null,
  closeWorkspace: () => undefined,
};

describe('describe (the handshake)', { timeout: 20_000 }, () => {
  test('answers protocol 1 and infers the capabilities of the handlers present', async () => {
    const server = serveInMemory(toolsOnly);
    server.send({ id: 1, method: 'describe', params: {} });
    assert.deepEqual(await server.next(), {
      id: 1,
      result: { name: 't', version: '1.0', language: 'javascript', protocol: 1, capabilities: ['tools'], inferred: true, batch: true },
    });
    await server.end();
  });

  test('infers every capability when every handler is there, in protocol order', async () => {
    const all = { ...toolsOnly };
    for (const name of ['makeError', 'inspectError', 'setCause', 'remediate', 'toError', 'errorChain', 'toolError', 'runScenario', 'deriveMessages', 'armPause']) {
      all[name] = () => null;
    }
    assert.deepEqual(inferCapabilities(all), ['tools', 'taxonomy', 'loop', 'toolErrors', 'pause']);
    // A capability with one handler missing is not inferred.
    const partial = { ...all, setCause: undefined, deriveMessages: undefined };
    assert.deepEqual(inferCapabilities(partial), ['tools', 'toolErrors', 'pause']);
    const server = serveInMemory(all);
    server.send({ id: 1, method: 'describe', params: {} });
    assert.deepEqual((await server.next()).result.capabilities, ['tools', 'taxonomy', 'loop', 'toolErrors', 'pause']);
    await server.end();
  });

  test('keeps declared capabilities and fields, and always says protocol 1', async () => {
    const server = serveInMemory({
      ...toolsOnly,
      describe: async () => ({
        name: 'declared',
        version: '2',
        language: 'typescript',
        protocol: 7,
        capabilities: ['tools', 'pause'],
        options: { replaceAll: true },
        paths: 'relative',
      }),
    });
    server.send({ id: 3, method: 'describe' }); // params may be omitted
    assert.deepEqual(await server.next(), {
      id: 3,
      result: {
        name: 'declared',
        version: '2',
        language: 'typescript',
        protocol: 1,
        capabilities: ['tools', 'pause'],
        options: { replaceAll: true },
        paths: 'relative',
        batch: true,
      },
    });
    await server.end();
  });

  test('says batch: true unless the harness itself says batch: false', async () => {
    const server = serveInMemory({ ...toolsOnly, describe: () => ({ name: 'n', version: '1', batch: false }) });
    server.send({ id: 1, method: 'describe', params: {} });
    assert.equal((await server.next()).result.batch, false);
    await server.end();
  });
});

describe('requests and answers', { timeout: 20_000 }, () => {
  test('are handled concurrently and answered as they settle, out of order', async () => {
    const gate = deferred();
    const started = [];
    const server = serveInMemory({
      ...toolsOnly,
      async callTool(session, name) {
        started.push(name);
        if (name === 'slow') await gate.promise;
        return `${name} done`;
      },
    });
    server.send({ id: 1, method: 'call_tool', params: { session: 's1', name: 'slow', arguments: {} } });
    server.send({ id: 2, method: 'call_tool', params: { session: 's1', name: 'fast', arguments: {} } });
    // The second request is answered while the first is still pending.
    assert.deepEqual(await server.next(), { id: 2, result: 'fast done' });
    assert.deepEqual(started, ['slow', 'fast']);
    gate.resolve();
    assert.deepEqual(await server.next(), { id: 1, result: 'slow done' });
    await server.end();
  });

  test('pass params to the camelCase handler in order, and undefined answers null', async () => {
    const seen = [];
    const server = serveInMemory({
      ...toolsOnly,
      openWorkspace: (root, options) => seen.push(['openWorkspace', root, options]) && 'ws_1',
      callTool: (session, name, args) => seen.push(['callTool', session, name, args]) && { ok: true },
      closeWorkspace: (session) => {
        seen.push(['closeWorkspace', session]);
      },
      toolError: (session, callId) => seen.push(['toolError', session, callId]) && null,
    });
    server.send({ id: 1, method: 'open_workspace', params: { root: '/w', options: { policy: false } } });
    assert.deepEqual(await server.next(), { id: 1, result: 'ws_1' });
    server.send({ id: 2, method: 'call_tool', params: { session: 'ws_1', name: 'read', arguments: '{"a":1}' } });
    assert.deepEqual(await server.next(), { id: 2, result: { ok: true } });
    server.send({ id: 3, method: 'tool_error', params: { session: 'ws_1', callId: 'call_1' } });
    assert.deepEqual(await server.next(), { id: 3, result: null });
    server.send({ id: 4, method: 'close_workspace', params: { session: 'ws_1' } });
    assert.deepEqual(await server.next(), { id: 4, result: null });
    assert.deepEqual(seen, [
      ['openWorkspace', '/w', { policy: false }],
      ['callTool', 'ws_1', 'read', '{"a":1}'],
      ['toolError', 'ws_1', 'call_1'],
      ['closeWorkspace', 'ws_1'],
    ]);
    await server.end();
  });

  test('an unknown method, a missing handler or a missing param is an error answer', async () => {
    // SPEC {#proto.unknown}: a method the harness does not have is answered with unknown: true.
    const server = serveInMemory(toolsOnly);
    server.send({ id: 7, method: 'frobnicate', params: {} });
    assert.deepEqual(await server.next(), { id: 7, error: { message: 'unknown method "frobnicate"', unknown: true } });
    server.send({ id: 8, method: 'toString', params: {} }); // not a method, however JS sees it
    assert.deepEqual(await server.next(), { id: 8, error: { message: 'unknown method "toString"', unknown: true } });
    server.send({ id: 9, method: 'make_error', params: { spec: { kind: 'HarnessError' } } });
    assert.deepEqual(await server.next(), {
      id: 9,
      error: { message: 'make_error is not supported by this harness (no handlers.makeError)', unknown: true },
    });
    server.send({ id: 10, method: 'call_tool', params: { session: 's1', name: 'read' } });
    assert.deepEqual(await server.next(), { id: 10, error: { message: 'call_tool: missing param "arguments"' } });
    server.send({ id: 11, method: 'call_tool', params: [1] });
    assert.deepEqual(await server.next(), { id: 11, error: { message: 'call_tool: params must be an object' } });
    await server.end();
  });

  test('a line that is not a JSON request gets an error answer with id null', async () => {
    const server = serveInMemory(toolsOnly);
    server.send('{"id": 1, "method": ');
    assert.deepEqual(await server.next(), {
      id: null,
      error: { message: 'request is not valid JSON: {"id": 1, "method": ' },
    });
    server.send('[1, 2]');
    assert.deepEqual(await server.next(), { id: null, error: { message: 'request must be a JSON object: [1, 2]' } });
    server.send('{"id": "one", "method": "describe"}');
    assert.deepEqual(await server.next(), {
      id: null,
      error: { message: 'request id must be an integer: {"id": "one", "method": "describe"}' },
    });
    // The server keeps serving after bad lines.
    server.send({ id: 2, method: 'open_workspace', params: { root: '/w', options: {} } });
    assert.deepEqual(await server.next(), { id: 2, result: 's1' });
    await server.end();
  });

  test('lines end at LF only: a CR is JSON whitespace, CRLF is tolerated, chunks split anywhere', async () => {
    const calls = [];
    const server = serveInMemory({
      ...toolsOnly,
      callTool: (session, name, args) => {
        calls.push(name);
        return args;
      },
    });
    const request = (id, text) =>
      `{"id": ${id}, "method": "call_tool", "params": {"session": "s1", "name": "n${id}", "arguments": {"t": "${text}"}}}`;
    // A lone CR between tokens is whitespace inside one JSON Lines record, not a line break.
    server.sendBytes(Buffer.from(request(1, 'a').replace('"method"', '\r"method"') + '\n'));
    assert.deepEqual(await server.next(), { id: 1, result: { t: 'a' } });
    server.sendBytes(Buffer.from(`${request(2, 'b')}\r\n`));
    assert.deepEqual(await server.next(), { id: 2, result: { t: 'b' } });
    // One request cut inside a multi-byte character, then its end and two more in one chunk.
    const bytes = Buffer.from(`${request(3, 'é€😀')}\n${request(4, 'd')}\n${request(5, 'e')}\n`);
    const cut = Buffer.from(request(3, 'é')).length - 1; // inside the two bytes of é
    server.sendBytes(bytes.subarray(0, cut));
    server.sendBytes(bytes.subarray(cut));
    assert.deepEqual(await server.next(), { id: 3, result: { t: 'é€😀' } });
    assert.deepEqual(await server.next(), { id: 4, result: { t: 'd' } });
    assert.deepEqual(await server.next(), { id: 5, result: { t: 'e' } });
    // A last line without its newline is still a request.
    server.sendBytes(Buffer.from(request(6, 'f')));
    await server.end();
    assert.deepEqual(server.lines.unread, [{ id: 6, result: { t: 'f' } }]);
    assert.deepEqual(calls, ['n1', 'n2', 'n3', 'n4', 'n5', 'n6']);
  });

  test('a line that is not UTF-8 is refused with id null, never handled with U+FFFD in it', async () => {
    const calls = [];
    const server = serveInMemory({ ...toolsOnly, callTool: (session, name, args) => calls.push(args) });
    const line = Buffer.concat([
      Buffer.from('{"id": 1, "method": "call_tool", "params": {"session": "s1", "name": "write", "arguments": {"content": "'),
      Buffer.from([0xff, 0xfe, 0x41]),
      Buffer.from('"}}}\n'),
    ]);
    server.sendBytes(line);
    const answer = await server.next();
    assert.equal(answer.id, null);
    assert.match(answer.error.message, /^request is not valid UTF-8: \{"id": 1, "method": "call_tool"/);
    // Serving goes on.
    server.send({ id: 2, method: 'call_tool', params: { session: 's1', name: 'x', arguments: 'ok' } });
    assert.deepEqual(await server.next(), { id: 2, result: 1 });
    assert.deepEqual(calls, ['ok']);
    await server.end();
  });

  test('a handler that throws or rejects gets an error answer naming the method', async () => {
    const server = serveInMemory({
      ...toolsOnly,
      openWorkspace() {
        throw new Error('no such directory');
      },
      async callTool() {
        throw new TypeError('boom');
      },
      closeWorkspace() {
        throw 'a thrown string'; // eslint-disable-line no-throw-literal
      },
      deriveMessages: () => ({ big: 1n }),
      runScenario() {
        throw Object.assign(new Error('interrupted'), { propagated: 'Interrupt' });
      },
    });
    server.send({ id: 1, method: 'open_workspace', params: { root: '/w', options: {} } });
    assert.deepEqual(await server.next(), { id: 1, error: { message: 'open_workspace failed: no such directory' } });
    server.send({ id: 2, method: 'call_tool', params: { session: 's', name: 'read', arguments: {} } });
    assert.deepEqual(await server.next(), { id: 2, error: { message: 'call_tool failed: boom' } });
    server.send({ id: 3, method: 'close_workspace', params: { session: 's' } });
    assert.deepEqual(await server.next(), { id: 3, error: { message: 'close_workspace failed: a thrown string' } });
    server.send({ id: 4, method: 'derive_messages', params: { events: [] } });
    assert.deepEqual(await server.next(), {
      id: 4,
      error: { message: 'derive_messages failed: the result is not JSON-serializable (Do not know how to serialize a BigInt)' },
    });
    server.send({ id: 5, method: 'run_scenario', params: { root: '/w', scenario: {} } });
    assert.deepEqual(await server.next(), {
      id: 5,
      error: { message: 'run_scenario failed: interrupted', propagated: 'Interrupt' },
    });
    await server.end();
  });

  test('a thrown plain object is answered with its message, else its JSON cut short', async () => {
    const thrown = [
      { code: 'EACCES', message: 'permission denied by my fs layer' },
      { code: 'EACCES', message: '' },
      { reason: 'x'.repeat(300) },
      Object.assign(Object.create(null), { self: null }),
    ];
    thrown[3].self = thrown[3]; // a cycle and no toString: nothing better than a placeholder
    const server = serveInMemory({ ...toolsOnly, callTool: (session, name, args) => Promise.reject(thrown[args.which]) });
    const answers = [];
    for (const which of thrown.keys()) {
      server.send({ id: which, method: 'call_tool', params: { session: 's1', name: 'read', arguments: { which } } });
      answers.push((await server.next()).error.message);
    }
    assert.deepEqual(answers, [
      'call_tool failed: permission denied by my fs layer',
      'call_tool failed: {"code":"EACCES","message":""}',
      `call_tool failed: ${JSON.stringify(thrown[2]).slice(0, 200)}…`,
      'call_tool failed: <unprintable thrown value>',
    ]);
    await server.end();
  });

  test('a thrown value whose every property throws is still answered, under its id', async () => {
    class Lazy extends Error {
      get message() {
        throw new Error('the message could not be rendered');
      }
    }
    const badPropagated = new Error('interrupted');
    Object.defineProperty(badPropagated, 'propagated', {
      get() {
        throw new Error('no');
      },
    });
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke(); // every operation on it throws, `instanceof` included
    const thrown = [new Lazy(), badPropagated, proxy];
    let reads = 0;
    const flaky = {
      // Serializable when the kit checks the result, not when the answer is written.
      toJSON() {
        reads += 1;
        if (reads > 1) throw new Error('changed its mind');
        return 'fine';
      },
    };
    const server = serveInMemory({
      ...toolsOnly,
      callTool: (session, name, args) => {
        if (name === 'flaky') return flaky;
        throw thrown[args.which];
      },
    });
    const answers = [];
    for (const which of thrown.keys()) {
      server.send({ id: which, method: 'call_tool', params: { session: 's1', name: 'read', arguments: { which } } });
      answers.push(await server.next());
    }
    assert.deepEqual(answers, [
      { id: 0, error: { message: 'call_tool failed: <unprintable thrown value>' } },
      { id: 1, error: { message: 'call_tool failed: interrupted' } },
      { id: 2, error: { message: 'call_tool failed: <unprintable thrown value>' } },
    ]);
    server.send({ id: 3, method: 'call_tool', params: { session: 's1', name: 'flaky', arguments: {} } });
    const answer = await server.next();
    assert.equal(answer.id, 3);
    assert.match(answer.error.message, /^the answer could not be written as JSON: changed its mind$/);
    server.send({ id: 4, method: 'describe', params: {} });
    assert.equal((await server.next()).id, 4);
    await server.end();
  });

  test('a failing handler’s stack goes to the log; the kit’s own refusals do not', async () => {
    const server = serveInMemory({
      ...toolsOnly,
      callTool() {
        const config = undefined;
        return config.value;
      },
      closeWorkspace() {
        throw 'a thrown string'; // eslint-disable-line no-throw-literal
      },
    });
    server.send({ id: 1, method: 'call_tool', params: { session: 's1', name: 'read', arguments: {} } });
    assert.match((await server.next()).error.message, /^call_tool failed: Cannot read properties of undefined/);
    server.send({ id: 2, method: 'close_workspace', params: { session: 's1' } });
    await server.next();
    server.send({ id: 3, method: 'call_tool', params: { session: 's1' } }); // missing params
    await server.next();
    server.send({ id: 4, method: 'no_such_method', params: {} });
    await server.next();
    await server.end();
    assert.equal(server.logged.length, 2, server.logged.join(''));
    const [stack, plain] = server.logged;
    assert.match(stack, /^call_tool failed: TypeError: Cannot read properties of undefined \(reading 'value'\)\n {4}at /);
    assert.match(stack, /serve\.test\.mjs:\d+:\d+/); // where the handler threw
    assert.equal(plain, 'close_workspace failed: a thrown string\n');
  });

  test('console output of the harness goes to stderr, never to the protocol stream', async () => {
    const captured = { stdout: [], stderr: [] };
    const original = { stdout: process.stdout.write, stderr: process.stderr.write };
    const gate = deferred();
    const server = serveInMemory({
      ...toolsOnly,
      async callTool() {
        // Capture only while the call runs, so the test runner's own output is untouched.
        process.stdout.write = (chunk) => captured.stdout.push(String(chunk)) > 0;
        process.stderr.write = (chunk) => captured.stderr.push(String(chunk)) > 0;
        try {
          console.log('log noise');
          console.info('info noise');
          console.debug('debug noise');
          console.warn('warn noise');
        } finally {
          process.stdout.write = original.stdout;
          process.stderr.write = original.stderr;
        }
        await gate.promise;
        return 'quiet';
      },
    });
    server.send({ id: 1, method: 'call_tool', params: { session: 's1', name: 'read', arguments: {} } });
    gate.resolve();
    assert.deepEqual(await server.next(), { id: 1, result: 'quiet' });
    await server.end();
    assert.deepEqual(captured, {
      stdout: [],
      stderr: ['log noise\n', 'info noise\n', 'debug noise\n', 'warn noise\n'],
    });
    assert.deepEqual(server.lines.raw, ['{"id":1,"result":"quiet"}']);
    // Serving ended: the console is itself again.
    assert.equal(console.log.name, 'log');
  });

  test('a real process: stray stdout writes of every kind reach stderr, and it exits 0 at EOF', async () => {
    const harness = spawnHarness(path.join(PACKAGE_DIR, 'test-support', 'noisy-harness.mjs'));
    assert.deepEqual(await harness.request('call_tool', { session: 'ws', name: 'read', arguments: {} }), {
      id: 1,
      result: { callId: 'call_1', content: [{ type: 'text', text: 'ran read in ws' }], isError: false },
    });
    const outcome = await harness.close();
    assert.deepEqual(outcome.stdoutLines, [
      '{"id":1,"result":{"callId":"call_1","content":[{"type":"text","text":"ran read in ws"}],"isError":false}}',
    ]);
    assert.equal(outcome.code, 0);
    assert.equal(
      outcome.stderr,
      "log noise\ninfo noise\ndebug noise\nwarn noise\n{ dir: 'noise' }\nearly log noise\nraw write noise\n",
    );
  });

  test('when the input ends, pending answers are written before serve resolves', async () => {
    const gate = deferred();
    const started = deferred();
    const events = [];
    const server = serveInMemory({
      ...toolsOnly,
      async callTool() {
        started.resolve();
        await gate.promise;
        return 'late';
      },
    });
    server.send({ id: 1, method: 'call_tool', params: { session: 's1', name: 'read', arguments: {} } });
    await started.promise;
    const ended = server.end().then(() => events.push('serve finished'));
    server.next().then((answer) => events.push(answer));
    gate.resolve();
    await ended;
    assert.deepEqual(events, [{ id: 1, result: 'late' }, 'serve finished']);
  });
});

describe('serve’s own arguments', { timeout: 20_000 }, () => {
  test('handlers that are not an object are refused at once, in one line', () => {
    const refusals = [
      [undefined, 'serve(handlers): handlers must be an object of handler functions, got undefined'],
      [null, 'serve(handlers): handlers must be an object of handler functions, got null'],
      ['tools', 'serve(handlers): handlers must be an object of handler functions, got a string'],
      [() => toolsOnly, 'serve(handlers): handlers must be an object of handler functions, got a function (did you forget to call it?)'],
      [Promise.resolve(toolsOnly), 'serve(handlers): handlers is a promise, not an object of handler functions (did you forget await?)'],
    ];
    for (const [handlers, message] of refusals) {
      // Synchronously: serve() returns no promise for these, it throws. (In-memory streams, so
      // that a serve() that started anyway would not read the test runner's stdin.)
      const streams = { input: new PassThrough(), output: new PassThrough(), exitOnEnd: false };
      assert.throws(() => serve(handlers, streams), { name: 'TypeError', message });
    }
  });

  test('a real process: a rejection nobody handles is logged, and serving goes on', async () => {
    const harness = spawnHarness(path.join(PACKAGE_DIR, 'test-support', 'dangling-harness.mjs'));
    assert.equal(await harness.tool('ws', 'now', {}), 'ok');
    assert.equal(await harness.tool('ws', 'late', {}), 'ok');
    await new Promise((resolve) => setTimeout(resolve, 100)); // the late rejection happens
    // Still serving: a crash here would have failed whatever call came next.
    assert.equal((await harness.call('describe')).name, 'dangling');
    const outcome = await harness.close();
    assert.equal(outcome.code, 0);
    assert.deepEqual(outcome.unanswered, []);
    assert.match(outcome.stderr, /^serve: a promise rejected and nothing handled it \(serving goes on\): Error: fire-and-forget failed\n\s+at /m);
    assert.match(outcome.stderr, /^serve: a promise rejected and nothing handled it \(serving goes on\): Error: telemetry upload failed\n\s+at /m);
  });

  test('a real process: a handler that never settles is named once stdin ends, with status 1', async () => {
    const harness = spawnHarness(path.join(PACKAGE_DIR, 'test-support', 'hanging-harness.mjs'));
    assert.deepEqual(await harness.request('describe'), {
      id: 1,
      result: { name: 'hanging', version: '0', language: 'javascript', protocol: 1, capabilities: ['tools'], inferred: true, batch: true },
    });
    harness.request('call_tool', { session: 'ws', name: 'read', arguments: {} }); // never answered
    const outcome = await harness.close();
    assert.deepEqual(outcome.unanswered, [2]);
    assert.equal(
      outcome.stderr,
      "serve: stdin ended with 1 unanswered request(s) (ids 2): a handler's promise never settled\n",
    );
    assert.equal(outcome.code, 1);
  });
});

describe('batches (SPEC {#proto.batch})', { timeout: 20_000 }, () => {
  // A taxonomy of plain objects: enough to see what each request was given.
  const taxonomy = () => {
    const made = [];
    return {
      made,
      handlers: {
        ...toolsOnly,
        makeError(spec) {
          if (spec.message === 'no') return { rejected: 'refused' };
          if (spec.message === 'boom') throw new Error('cannot build');
          made.push(spec);
          return { handle: `e${made.length}` };
        },
        errorChain(ref) {
          return JSON.stringify(ref);
        },
      },
    };
  };

  test('run in order, each {"answer": k} ref standing for the handle request k answered', async () => {
    const { made, handlers } = taxonomy();
    const server = serveInMemory(handlers);
    server.send({ id: 1, method: 'batch', params: { requests: [
      { method: 'make_error', params: { spec: { kind: 'Exception', message: 'a' } } },
      { method: 'make_error', params: { spec: { kind: 'HarnessError', message: 'b', cause: { answer: 0 } } } },
      // a value cause that looks like a ref is a value
      { method: 'make_error', params: { spec: { kind: 'HarnessError', message: 'c', cause: { value: { answer: 0 } } } } },
      { method: 'error_chain', params: { ref: { answer: 1 } } },
    ] } });
    assert.deepEqual(await server.next(), { id: 1, result: { answers: [
      { result: { handle: 'e1' } },
      { result: { handle: 'e2' } },
      { result: { handle: 'e3' } },
      { result: '{"handle":"e2"}' },
    ] } });
    assert.deepEqual(made.map((spec) => spec.cause), [undefined, { handle: 'e1' }, { value: { answer: 0 } }]);
    await server.end();
  });

  test('stop after the first request that fails; a ref to an answer without a handle fails', async () => {
    const { made, handlers } = taxonomy();
    const server = serveInMemory(handlers);
    const make = (message, cause) => ({ method: 'make_error', params: { spec: { kind: 'HarnessError', message, cause } } });
    server.send({ id: 1, method: 'batch', params: { requests: [make('a'), make('boom'), make('never')] } });
    assert.deepEqual(await server.next(), { id: 1, result: { answers: [
      { result: { handle: 'e1' } },
      { error: { message: 'make_error failed: cannot build' } },
    ] } });
    server.send({ id: 2, method: 'batch', params: { requests: [make('no'), make('b', { answer: 0 }), make('never')] } });
    assert.deepEqual(await server.next(), { id: 2, result: { answers: [
      { result: { rejected: 'refused' } },
      { error: { message: 'make_error: request 0 of the batch answered no handle' } },
    ] } });
    server.send({ id: 3, method: 'batch', params: { requests: [make('c'), { method: 'call_tool', params: {} }] } });
    assert.deepEqual(await server.next(), { id: 3, result: { answers: [
      { result: { handle: 'e2' } },
      { error: { message: 'batch: "call_tool" cannot be batched (only make_error, error_chain)' } },
    ] } });
    server.send({ id: 4, method: 'batch', params: { requests: 'all of them' } });
    assert.deepEqual(await server.next(), { id: 4, error: { message: 'batch: params.requests must be a list' } });
    assert.deepEqual(made.map((spec) => spec.message), ['a', 'c']);
    await server.end();
  });
});

describe('pause points', { timeout: 20_000 }, () => {
  test('paused notification, then resume is answered before the paused call answers', async () => {
    const armed = new Map();
    const trace = [];
    const server = serveInMemory({
      ...toolsOnly,
      armPause(session, point, onPause) {
        armed.set(session, onPause);
      },
      async callTool(session) {
        const onPause = armed.get(session);
        armed.delete(session);
        trace.push('checked');
        if (onPause) await onPause();
        trace.push('published');
        return 'written';
      },
    });
    server.send({ id: 1, method: 'arm_pause', params: { session: 's1', point: 'checked' } });
    assert.deepEqual(await server.next(), { id: 1, result: null });
    server.send({ id: 2, method: 'call_tool', params: { session: 's1', name: 'write', arguments: {} } });
    assert.deepEqual(await server.next(), { method: 'paused', params: { session: 's1', point: 'checked' } });
    assert.deepEqual(trace, ['checked']); // the harness is waiting
    server.send({ id: 3, method: 'resume', params: {} });
    assert.deepEqual(await server.next(), { id: 3, result: null });
    assert.deepEqual(await server.next(), { id: 2, result: 'written' });
    assert.deepEqual(trace, ['checked', 'published']);
    // The pause was used up: the next call runs straight through.
    server.send({ id: 4, method: 'call_tool', params: { session: 's1', name: 'write', arguments: {} } });
    assert.deepEqual(await server.next(), { id: 4, result: 'written' });
    await server.end();
  });

  test('resume releases the named session, else the oldest; with nothing paused it is an error', async () => {
    const armed = new Map();
    const server = serveInMemory({
      ...toolsOnly,
      armPause(session, point, onPause) {
        armed.set(session, onPause);
      },
      async callTool(session) {
        await armed.get(session)();
        return `${session} resumed`;
      },
    });
    server.send({ id: 1, method: 'arm_pause', params: { session: 's1', point: 'staged' } });
    server.send({ id: 2, method: 'arm_pause', params: { session: 's2', point: 'staged' } });
    const armAnswers = [await server.next(), await server.next()].sort((a, b) => a.id - b.id); // any order
    assert.deepEqual(armAnswers, [{ id: 1, result: null }, { id: 2, result: null }]);
    server.send({ id: 3, method: 'call_tool', params: { session: 's1', name: 'write', arguments: {} } });
    assert.deepEqual(await server.next(), { method: 'paused', params: { session: 's1', point: 'staged' } });
    server.send({ id: 4, method: 'call_tool', params: { session: 's2', name: 'write', arguments: {} } });
    assert.deepEqual(await server.next(), { method: 'paused', params: { session: 's2', point: 'staged' } });
    server.send({ id: 5, method: 'resume', params: { session: 's2' } });
    assert.deepEqual([await server.next(), await server.next()], [{ id: 5, result: null }, { id: 4, result: 's2 resumed' }]);
    server.send({ id: 6, method: 'resume', params: {} });
    assert.deepEqual([await server.next(), await server.next()], [{ id: 6, result: null }, { id: 3, result: 's1 resumed' }]);
    server.send({ id: 7, method: 'resume', params: {} });
    assert.deepEqual(await server.next(), { id: 7, error: { message: 'resume failed: no call is paused' } });
    await server.end();
  });

  test('a call still paused when the input ends is let go, so serve finishes', async () => {
    let onPause;
    const server = serveInMemory({
      ...toolsOnly,
      armPause(session, point, callback) {
        onPause = callback;
      },
      async callTool() {
        await onPause();
        return 'finished without resume';
      },
    });
    server.send({ id: 1, method: 'arm_pause', params: { session: 's1', point: 'checked' } });
    assert.deepEqual(await server.next(), { id: 1, result: null });
    server.send({ id: 2, method: 'call_tool', params: { session: 's1', name: 'write', arguments: {} } });
    assert.deepEqual(await server.next(), { method: 'paused', params: { session: 's1', point: 'checked' } });
    await server.end();
    assert.deepEqual(server.lines.unread, [{ id: 2, result: 'finished without resume' }]);
  });

  test('a call that reaches its pause point after the input ended goes on at once', async () => {
    // No one is left to send resume: the call must not wait for one (SPEC {pause.point}).
    let onPause;
    const checked = deferred();
    const server = serveInMemory({
      ...toolsOnly,
      armPause(session, point, callback) {
        onPause = callback;
      },
      async callTool() {
        await checked.promise; // still in its checks when the input ends
        await onPause();
        return 'finished after the input ended';
      },
    });
    server.send({ id: 1, method: 'arm_pause', params: { session: 's1', point: 'checked' } });
    assert.deepEqual(await server.next(), { id: 1, result: null });
    server.send({ id: 2, method: 'call_tool', params: { session: 's1', name: 'write', arguments: {} } });
    const ended = server.end();
    setImmediate(() => checked.resolve());
    await ended;
    assert.deepEqual(server.lines.unread, [{ id: 2, result: 'finished after the input ended' }]);
    assert.deepEqual(server.logged, []);
  });

  test('arm_pause without an armPause handler is refused', async () => {
    const server = serveInMemory(toolsOnly);
    server.send({ id: 1, method: 'arm_pause', params: { session: 's1', point: 'staged' } });
    assert.deepEqual(await server.next(), {
      id: 1,
      error: { message: 'arm_pause is not supported by this harness (no handlers.armPause)', unknown: true },
    });
    await server.end();
  });
});

describe('helpers', { timeout: 20_000 }, () => {
  test('HandleTable gives each object one stable handle and looks it up again', () => {
    const table = new HandleTable('err');
    const first = new Error('a');
    const second = new Error('a'); // equal, but another object
    assert.equal(table.handle(first), 'err_1');
    assert.equal(table.handle(second), 'err_2');
    assert.equal(table.handle(first), 'err_1');
    assert.equal(table.get('err_1'), first);
    assert.equal(table.get('err_2'), second);
    assert.equal(table.has('err_2'), true);
    assert.throws(() => table.get('err_3'), { message: 'unknown handle "err_3" (no err has it)' });
    assert.equal(table.delete('err_1'), true);
    assert.equal(table.delete('err_1'), false);
    assert.throws(() => table.get('err_1'), { message: 'unknown handle "err_1" (no err has it)' });
    // A forgotten object gets a new handle; handles are never reused.
    assert.equal(table.handle(first), 'err_3');
    assert.equal(table.size, 2);
  });

  test('wireResult builds the wire form and omits an absent error', () => {
    assert.deepEqual(wireResult('call_1', 'ok', false), {
      callId: 'call_1',
      content: [{ type: 'text', text: 'ok' }],
      isError: false,
    });
    assert.deepEqual(wireResult('call_2', 'Error: gone', true, { name: 'FsError', code: 'FS_NOT_FOUND' }), {
      callId: 'call_2',
      content: [{ type: 'text', text: 'Error: gone' }],
      isError: true,
      error: { name: 'FsError', code: 'FS_NOT_FOUND' },
    });
  });

  test('CallIds counts per session', () => {
    const ids = new CallIds();
    assert.deepEqual([ids.next('a'), ids.next('a'), ids.next('b'), ids.next('a')], ['call_1', 'call_2', 'call_1', 'call_3']);
    ids.forget('a');
    assert.equal(ids.next('a'), 'call_1');
  });

  test('KeyedMutex runs one critical section per key at a time, other keys freely', async () => {
    const mutex = new KeyedMutex();
    const gate = deferred();
    const trace = [];
    const first = mutex.run('/f', async () => {
      trace.push('first in');
      await gate.promise;
      trace.push('first out');
      return 1;
    });
    const second = mutex.run('/f', () => {
      trace.push('second in');
      return 2;
    });
    const other = await mutex.run('/g', () => {
      trace.push('other key');
      return 3;
    });
    assert.equal(other, 3);
    gate.resolve();
    assert.deepEqual(await Promise.all([first, second]), [1, 2]);
    assert.deepEqual(trace, ['first in', 'other key', 'first out', 'second in']);
    // A failing section releases the key.
    await assert.rejects(mutex.run('/f', () => {
      throw new Error('inside');
    }), { message: 'inside' });
    assert.equal(await mutex.run('/f', () => 'free again'), 'free again');
  });
});
