// The spec's tool calls as gemini-cli-core tool calls, and its tool results as wire results.
// Pure functions of JSON values: no import of gemini-cli-core, no disk. adapter.mjs wraps them
// around the real tools; the project's tests replay them against recorded answers.

/** The spec's tools → gemini-cli's (the names its model is given). */
export const TOOLS = { read: 'read_file', write: 'write_file', edit: 'replace' };

/**
 * `replace` requires an `instruction`: the prompt for its model-based correction of a failed
 * match (edit.js@0.61.0:366), which the adapter turns off (disableLLMCorrection). The text reaches
 * nothing else, so a fixed one stands in for the model's.
 */
export const INSTRUCTION = 'Replace old_string with new_string.';

const RENAMED = { replace_all: 'allow_multiple' };

/** {tool, params}: what a model would send for the spec's call `name`. */
export function toolCall(name, args) {
  const tool = TOOLS[name] ?? name;
  if (!(name in TOOLS) || args === null || typeof args !== 'object' || Array.isArray(args)) {
    return { tool, params: args };
  }
  const params = {};
  for (const [key, value] of Object.entries(args)) {
    if (name === 'read' && (key === 'offset' || key === 'limit')) continue;
    params[RENAMED[key] ?? key] = value;
  }
  if (name === 'read') Object.assign(params, lineRange(args));
  if (name === 'edit') params.instruction = INSTRUCTION;
  return { tool, params };
}

// read_file takes 1-based start_line and end_line, inclusive (default-legacy.js@0.61.0:24-30).
function lineRange(args) {
  const range = {};
  const { offset, limit } = args;
  if (offset !== undefined) range.start_line = offset;
  if (limit !== undefined) {
    const start = offset === undefined ? 1 : offset;
    range.end_line = Number.isInteger(start) && Number.isInteger(limit) ? start + limit - 1 : limit;
    if (offset === undefined) range.start_line = 1;
  }
  return range;
}

/** What the model sees of a tool's answer (scheduler.js@0.61.0:26-41, tool-executor.js@0.61.0:85-92). */
export function answerOf(toolResult) {
  if (toolResult.error) return { text: String(toolResult.error.message), isError: true };
  return { text: textOf(toolResult.llmContent), isError: false };
}

/** A build that throws (invalid parameters) answers its message as an error. */
export function refusalOf(error) {
  return { text: String(error?.message ?? error), isError: true };
}

function textOf(content) {
  if (typeof content === 'string') return content;
  const parts = Array.isArray(content) ? content : [content];
  return parts.map((part) => (typeof part === 'string' ? part : (part?.text ?? ''))).join('\n');
}

/** The wire result (SPEC {tool.result.wire}). */
export function result(callId, answer) {
  return { callId, content: [{ type: 'text', text: answer.text }], isError: answer.isError };
}
