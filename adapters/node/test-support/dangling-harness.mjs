// A harness whose tool call leaves a promise rejected with no handler (a fire-and-forget
// telemetry call that fails), after answering: the kit must log it and go on serving, so that
// the crash never fails whichever later call happens to be in flight (tests spawn this).
import { serve } from '../index.mjs';

await serve({
  describe: () => ({ name: 'dangling', version: '0' }),
  openWorkspace: () => 'ws',
  callTool(session, name) {
    if (name === 'late') setTimeout(() => Promise.reject(new Error('telemetry upload failed')), 10);
    else Promise.reject(new Error('fire-and-forget failed'));
    return 'ok';
  },
  closeWorkspace: () => {},
});
