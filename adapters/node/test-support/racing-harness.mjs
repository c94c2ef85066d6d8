// The example harness with a competitor and a failing disk at its publication step, driven by
// the file's name (tests spawn this as a child process):
//   race-*   another program creates the file (content "theirs\n") after the checks, while
//            ours is staged: a create must then be refused, theirs kept;
//   enospc-* the disk fills up just before the commit: the write must fail and leave nothing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { serve } from '../index.mjs';
import { createHandlers } from '../example/harness.mjs';

await serve(
  createHandlers({
    beforeCommit(key) {
      const name = path.basename(key);
      if (name.startsWith('race-')) fs.writeFileSync(key, 'theirs\n');
      if (name.startsWith('enospc-')) {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
          code: 'ENOSPC',
          errno: -os.constants.errno.ENOSPC,
          syscall: 'write',
        });
      }
    },
  }),
);
