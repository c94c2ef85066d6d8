// gemini-cli-core 0.61.0: read_file, write_file and replace, run with no model and no key.
//
//   node peers/gemini_cli/adapter.mjs ENV      (ENV: the npm folder gemini-cli-core is installed in)
//
// Each workspace is one gemini-cli `Config` whose target directory is the workspace root, with
// the model-based edit correction off through the tool's own setting (disableLLMCorrection), and
// its storage initialised as Config.initialize does first (config.js@0.61.0:788). Each call is
// `tool.build(params)` then `invocation.execute({ abortSignal })`, as the scheduler runs a model's call; the
// confirmation step is the user's, not the tool's, and is not part of the call. The adapter only
// translates (translate.mjs).

import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { serve, HandleTable, CallIds } from '../../adapters/node/index.mjs';
import { toolCall, answerOf, refusalOf, result, TOOLS } from './translate.mjs';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';

const env = process.argv[2];
if (!env) {
  console.error('usage: node adapter.mjs ENV (the npm folder gemini-cli-core is installed in)');
  process.exit(2);
}
// gemini-cli registers every workspace it is given in ~/.gemini (projects.json, tmp/ws-N,
// history/): shared, that registry grew by some 250 projects a run, slowed each run down, and
// named the workspace's temp directory by its place in it (ws-916, then ws-1148), which its
// refusals quote. Each process gets a home of its own (GEMINI_CLI_HOME, paths.js@0.61.0:20),
// beside the installed package rather than in the watched temporary directory.
if (!process.env.GEMINI_CLI_HOME) {
  const home = mkdtempSync(path.join(env, 'gemini-home-'));
  process.env.GEMINI_CLI_HOME = home;
  process.on('exit', () => rmSync(home, { recursive: true, force: true }));
}
const core = await import(
  pathToFileURL(path.join(env, 'node_modules/@google/gemini-cli-core/dist/index.js')).href
);
const describeAnswer = JSON.parse(
  readFileSync(new URL('./describe.json', import.meta.url), 'utf-8'),
);

const sessions = new HandleTable('ws');
const callIds = new CallIds();
const RAW_PREFIX = 'peers.raw ';

// One raw exchange on stderr for the trace. Arguments nested deeper than JSON.stringify's stack
// allows are recorded as unrecorded rather than failing the call the harness already answered.
function logRaw(session, callId, sent, answer) {
  let line;
  try {
    line = JSON.stringify({ session, callId, sent, answer });
  } catch (error) {
    line = JSON.stringify({ session, callId, sent: { unrecorded: String(error?.message ?? error) }, answer });
  }
  process.stderr.write(`${RAW_PREFIX}${line}\n`);
}

async function openSession(root) {
  const config = new core.Config({
    sessionId: `conformance-${Date.now()}`,
    targetDir: root,
    cwd: root,
    debugMode: false,
    model: core.DEFAULT_GEMINI_MODEL ?? 'gemini-2.5-pro',
    disableLLMCorrection: true,
  });
  await config.storage.initialize();
  const bus = config.getMessageBus();
  const tools = {
    [TOOLS.read]: new core.ReadFileTool(config, bus),
    [TOOLS.write]: new core.WriteFileTool(config, bus),
    [TOOLS.edit]: new core.EditTool(config, bus),
  };
  return { config, tools };
}

async function run(session, tool, params) {
  const found = session.tools[tool];
  if (!found) {
    // scheduler.js@0.61.0:235-240, without the suggestion of a similar name.
    return refusalOf(new Error(`Tool "${tool}" not found.`));
  }
  let invocation;
  try {
    invocation = found.build(params);
  } catch (error) {
    return refusalOf(error);
  }
  // execute takes an options object, as the scheduler passes it (core/coreToolHookTriggers.js@0.61.0:117).
  return answerOf(await invocation.execute({ abortSignal: new AbortController().signal }));
}

await serve({
  describe: () => describeAnswer,
  openWorkspace: async (root) => sessions.handle(await openSession(root)),
  async callTool(handle, name, args) {
    const callId = callIds.next(handle);
    const session = sessions.get(handle);
    let sent = args;
    if (typeof args === 'string') {
      // The model's raw text is parsed as JSON, as the Gemini API hands over parsed args.
      try {
        sent = JSON.parse(args);
      } catch (error) {
        const answer = refusalOf(error);
        logRaw(handle, callId, { raw: args }, answer);
        return result(callId, answer);
      }
    }
    const { tool, params } = toolCall(name, sent);
    const answer = await run(session, tool, params);
    logRaw(handle, callId, { tool, params }, answer);
    return result(callId, answer);
  },
  closeWorkspace: (handle) => {
    sessions.delete(handle);
    callIds.forget(handle);
  },
});
