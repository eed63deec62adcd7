// Child process for bench:attack: the hostile client, in a process of its own as a real attacker
// on another machine would be, so its own CPU (a thousand fetches a second) is not counted in
// the other tenant's latency. Receives the attack context over IPC, answers {} once started and
// then { tallies } when `until` has passed.
import { attack, type AttackContext } from './attacks.js';

process.once('message', (ctx: AttackContext) => {
  process.send!({});
  void attack(ctx).then((tallies) => {
    // A Map does not survive IPC: statuses travel as entries.
    process.send!({ tallies: tallies.map((t) => ({ ...t, statuses: [...t.statuses] })) });
  });
});
process.on('disconnect', () => process.exit(0));
