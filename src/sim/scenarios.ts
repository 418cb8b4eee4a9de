import { EndKill, inboxHoldsNew } from './end-kill.js';
import { LateSendOn } from './late-send-on.js';
import type { MountServer } from './mount-server.js';
import { SIM_DATA_DIR } from './sim-config.js';

/** The scenarios of the command line (docs/simulator.md, "Scenarios"). */
export const SCENARIOS = ['end-kill', 'late-send-on'] as const;
export type Scenario = (typeof SCENARIOS)[number];

/** Faults a scenario places as the run goes, told of what lands on the mount. */
export interface PlacedFaults {
  /** A node record of `process` saying `state` landed; `running`: the processes running now. */
  record(process: string, state: string, running: readonly string[]): void;
  /** An operation of `process` the server made. */
  op?(process: string, call: string, what: string): void;
  /** How often the case the scenario steers to came about, when it counts one. */
  readonly hazards?: number;
}

/** What a scenario acts on: the run's mount and requests, its kill and pause of a process. */
export interface ScenarioRun {
  readonly server: MountServer;
  readonly requests: readonly { readonly url: string }[];
  readonly deadAfterMs: number;
  kill(process: string): void;
  pause(process: string, ms: number): void;
}

/** The placed faults of scenario `name` (undefined: none, the run draws its faults). */
export function placeFaults(name: Scenario | undefined, run: ScenarioRun): PlacedFaults | undefined {
  const holdsNew = (process: string): boolean => inboxHoldsNew(run.server, run.requests, process);
  if (name === 'end-kill') return new EndKill(run.kill, holdsNew);
  if (name === 'late-send-on') {
    return new LateSendOn({
      kill: run.kill,
      pause: run.pause,
      inboxHoldsNew: holdsNew,
      inboxFiles: (node) => {
        try {
          return run.server.readdir(`${SIM_DATA_DIR}/handoff/${node}`).filter((n) => !n.startsWith('.'));
        } catch {
          return []; // no inbox
        }
      },
      holdMs: run.deadAfterMs / 4,
    });
  }
  return undefined;
}
