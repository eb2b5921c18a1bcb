// What the v2 test clients share (sdk_v2_client.mjs, sdk_v2_mcp_client.mjs): the agent spawned, the stream of npm
// @agentclientprotocol/sdk@1.3.0 (`experimental/v2`) over its stdio, and the session updates it sent, in order.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

export async function startAgent(sdkDir, agentArgv) {
  const acp = await import(pathToFileURL(`${sdkDir}/dist/v2/acp.js`).href);
  const child = spawn(agentArgv[0], agentArgv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const updates = [];
  let waiters = [];
  // Record an update (or a marker the client adds) and wake whoever waits for one like it.
  function record(update) {
    updates.push(update);
    const still = [];
    for (const w of waiters) (w.predicate(update) ? w.resolve(update) : still.push(w));
    waiters = still;
  }
  // The first update (already sent or still to come) that `predicate` accepts.
  function waitFor(predicate) {
    const found = updates.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => waiters.push({ predicate, resolve }));
  }
  return { acp, child, stream, updates, record, waitFor };
}

// Run `body`, then print the one report line ({"ok": true, ...facts} or {"ok": false, "error": …, ...facts}) and set
// the exit code (0 / 1).
export async function report(child, facts, body) {
  try {
    await body();
    console.log(JSON.stringify({ ok: true, ...facts }));
    child.stdin.end();
    process.exitCode = 0;
  } catch (error) {
    console.log(JSON.stringify({ ok: false, error: String(error?.stack ?? error), ...facts }));
    child.kill();
    process.exitCode = 1;
  }
}
