// A harness whose tool call never settles (an author's forgotten resolve): once stdin ends, the
// kit must say which request was left unanswered and exit with status 1 (tests spawn this).
import { serve } from '../index.mjs';

await serve({
  describe: () => ({ name: 'hanging', version: '0' }),
  openWorkspace: () => 'ws',
  callTool: () => new Promise(() => {}),
  closeWorkspace: () => {},
});
