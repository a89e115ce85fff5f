// Every fuzz target, by name. A module that decodes outside input adds its targets here.
import type { Target } from './harness.js';
import { frameTargets } from './targets/frame.js';
import { helloTargets } from './targets/hello.js';
import { jsonTargets } from './targets/json.js';
import { peerTargets } from './targets/peers.js';
import { procTargets } from './targets/proc.js';
import { protocolTargets } from './targets/protocol.js';
import { sockdiagTargets } from './targets/sockdiag.js';
import { tcpinfoTargets } from './targets/tcpinfo.js';
import { unitsTargets } from './targets/units.js';

export const targets: Target[] = [
  ...unitsTargets,
  ...protocolTargets,
  ...tcpinfoTargets,
  ...sockdiagTargets,
  ...frameTargets,
  ...helloTargets,
  ...jsonTargets,
  ...peerTargets,
  ...procTargets,
];

export function targetsNamed(pattern?: string): Target[] {
  if (!pattern) return targets;
  const chosen = targets.filter(
    (t) => t.name === pattern || t.name.startsWith(`${pattern}.`) || t.name.includes(pattern),
  );
  if (!chosen.length)
    throw new Error(`no fuzz target matches '${pattern}' (have: ${targets.map((t) => t.name).join(', ')})`);
  return chosen;
}
