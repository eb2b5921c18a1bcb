// A v2 ACP client built on npm @agentclientprotocol/sdk@1.3.0 (`experimental/v2`), which zod-validates every
// message it receives. It drives an agent through: initialize (asks 2) → session/new → a prompt → a permission
// turn (allow once) → a permission turn cancelled while asked → session/list → session/resume with replay.
// Usage: node sdk_v2_client.mjs SDK_DIR WORKSPACE -- AGENT ARGV...
// Prints one JSON line: {"ok": true, ...facts} or {"ok": false, "error": "..."}; exit code 0 / 1.
import { report, startAgent } from "./sdk_v2_peer.mjs";

const [sdkDir, workspace, separator, ...agentArgv] = process.argv.slice(2);
if (separator !== "--" || agentArgv.length === 0) {
  console.error("usage: sdk_v2_client.mjs SDK_DIR WORKSPACE -- AGENT ARGV...");
  process.exit(2);
}
const { acp, child, stream, updates, record, waitFor } = await startAgent(sdkDir, agentArgv);

let permission = "allow_once"; // or "hold": do not answer, cancel the session instead
let cancelTurn = null;

const app = acp
  .client({ name: "sdk-v2-test-client" })
  .onNotification("session/update", ({ params }) => record(params.update))
  .onRequest("session/request_permission", async ({ params, signal }) => {
    record({ sessionUpdate: "_permission_asked", title: params.title, subject: params.subject });
    if (permission === "allow_once") return { outcome: { outcome: "selected", optionId: "allow_once" } };
    cancelTurn();
    // ACP cancellation: the client answers every pending permission request `cancelled`.
    return { outcome: { outcome: "cancelled" } };
  });

function idleAfter(start) {
  return waitFor((u) => updates.indexOf(u) >= start && u.sessionUpdate === "state_update" && u.state === "idle");
}

const facts = {};
await report(child, facts, () =>
  app.connectWith(stream, async (cx) => {
    const init = await cx.request("initialize", { protocolVersion: 2, info: { name: "sdk-test", version: "1.0.0" } });
    facts.protocolVersion = init.protocolVersion;
    facts.agentName = init.info.name;

    const session = await cx.request("session/new", { cwd: workspace });
    const sessionId = session.sessionId;
    facts.configIds = (session.configOptions ?? []).map((o) => o.configId);

    let start = updates.length;
    facts.promptAnswer = await cx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello" }] });
    facts.firstStop = (await idleAfter(start)).stopReason;
    facts.text = updates
      .slice(start)
      .filter((u) => u.sessionUpdate === "agent_message_chunk")
      .map((u) => u.content.text)
      .join("");

    start = updates.length;
    await cx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "write a file" }] });
    facts.permissionStop = (await idleAfter(start)).stopReason;
    facts.permissionKinds = updates.slice(start).map((u) => u.sessionUpdate);

    start = updates.length;
    permission = "hold";
    cancelTurn = () => cx.notify("session/cancel", { sessionId });
    await cx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "write another" }] });
    facts.cancelStop = (await idleAfter(start)).stopReason;
    facts.cancelledStatuses = updates
      .slice(start)
      .filter((u) => u.sessionUpdate === "tool_call_update")
      .map((u) => u.status);

    const listed = await cx.request("session/list", {});
    facts.listed = listed.sessions.map((s) => s.sessionId === sessionId && s.cwd === workspace);

    start = updates.length;
    await cx.request("session/resume", { sessionId, cwd: workspace, replayFrom: { type: "start" } });
    facts.replayed = updates.slice(start).map((u) => u.sessionUpdate);
  }),
);
