// A harness that logs to stdout in every way a library might while a call runs; the kit must
// keep all of it off the protocol stream (tests spawn this as a child process).
import { serve } from '../index.mjs';

const earlyLog = console.log; // captured before serve() started diverting the console

await serve({
  describe: () => ({ name: 'noisy', version: '0' }),
  openWorkspace: () => 'ws',
  callTool(session, name) {
    console.log('log noise');
    console.info('info noise');
    console.debug('debug noise');
    console.warn('warn noise');
    console.dir({ dir: 'noise' });
    earlyLog('early log noise');
    process.stdout.write('raw write noise\n');
    return { callId: 'call_1', content: [{ type: 'text', text: `ran ${name} in ${session}` }], isError: false };
  },
  closeWorkspace: () => {},
});
