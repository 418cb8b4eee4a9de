/**
 * Temporary files are hidden (leading dot, so `ls` and fast-glob skip them) and name their
 * writer: `.<final name>~<node id>~<tag of its Mount><sequence>.tmp` (docs/protocol.md,
 * "Invariants" 1 and 4). Whoever takes over a dead node's hosts removes them; tempOwner
 * parses them. `~` separates the parts: it appears in no final name and in no node id. The
 * format only: every writer takes its names from its Mount (Mount.nextTempName).
 */
export function tempName(finalName: string, nodeId: string, tag: string, seq: number): string {
  return `.${finalName}~${nodeId}~${tag}${seq.toString(36)}.tmp`;
}

const TEMP = /^\.[^~]+~([A-Za-z0-9._-]+)~[0-9a-z]+\.tmp$/;

/** The node id inside a temporary file name, or undefined when `name` is not one. */
export function tempOwner(name: string): string | undefined {
  const m = TEMP.exec(name);
  return m === null ? undefined : m[1];
}
