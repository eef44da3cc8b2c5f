// Waiting for a process the e2e run started (a relay, the fake model) to listen.
import type { ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';

/**
 * Reads `child`'s stdout line by line, keeping each line in `lines` and copying it to `out` (never the
 * login line: it carries the token), and resolves with ADDR from its `listening on ADDR` line. Rejects
 * when the process exits first or has not listened within `timeoutMs` (`name` and `log` say which).
 */
export function untilListening(
  child: ChildProcess,
  name: string,
  out: Writable,
  log: string,
  lines: string[],
  timeoutMs: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    let done = false;
    const finish = (f: () => void) => {
      if (!done) {
        done = true;
        clearTimeout(timer);
        f();
      }
    };
    const timer = setTimeout(
      () => finish(() => reject(new Error(`${name} did not print "listening on" within ${timeoutMs / 1000} s; see ${log}`))),
      timeoutMs,
    );
    child.stdout!.on('data', (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        lines.push(line);
        out.write(line.includes('#login=') ? '[stdout] <login URL withheld>\n' : `[stdout] ${line}\n`);
        const m = /^listening on (\S+)/.exec(line);
        if (m) finish(() => resolve(m[1]));
      }
    });
    child.on('exit', (code, signal) =>
      finish(() => reject(new Error(`${name} exited (code ${code}, signal ${signal}) before listening; see ${log}`))),
    );
  });
}
