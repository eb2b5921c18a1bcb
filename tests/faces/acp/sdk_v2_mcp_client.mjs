// A v2 ACP client built on npm @agentclientprotocol/sdk@1.3.0 (`experimental/v2`), which zod-validates every
// message it receives. It passes one stdio MCP server in session/new and runs one prompt whose permission asks it
// allows once: initialize (asks 2) → session/new {mcpServers} → session/prompt → idle.
// Usage: node sdk_v2_mcp_client.mjs SDK_DIR WORKSPACE SERVER_COMMAND SERVER_ARG... -- AGENT ARGV...
// Prints one JSON line: {"ok": true, ...facts} or {"ok": false, "error": "..."}; exit code 0 / 1.
import { report, startAgent } from "./sdk_v2_peer.mjs";

const args = process.argv.slice(2);
const separator = args.indexOf("--");
if (separator < 3 || separator === args.length - 1) {
  console.error("usage: sdk_v2_mcp_client.mjs SDK_DIR WORKSPACE SERVER_COMMAND SERVER_ARG... -- AGENT ARGV...");
  process.exit(2);
}
const [sdkDir, workspace, serverCommand, ...serverArgs] = args.slice(0, separator);
const agentArgv = args.slice(separator + 1);
const { acp, child, stream, updates, record, waitFor } = await startAgent(sdkDir, agentArgv);

const app = acp
  .client({ name: "sdk-v2-mcp-test-client" })
  .onNotification("session/update", ({ params }) => record(params.update))
  .onRequest("session/request_permission", async ({ params }) => {
    record({ sessionUpdate: "_permission_asked", title: params.title });
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  });

const facts = {};
await report(child, facts, () =>
  app.connectWith(stream, async (cx) => {
    const init = await cx.request("initialize", { protocolVersion: 2, info: { name: "sdk-test", version: "1.0.0" } });
    facts.mcp = init.capabilities?.session?.mcp ?? null;

    const server = { type: "stdio", name: "fixture", command: serverCommand, args: serverArgs, env: [] };
    const session = await cx.request("session/new", { cwd: workspace, mcpServers: [server] });
    const sessionId = session.sessionId;

    facts.promptAnswer = await cx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "echo" }] });
    facts.stop = (await waitFor((u) => u.sessionUpdate === "state_update" && u.state === "idle")).stopReason;
    facts.asked = updates.filter((u) => u.sessionUpdate === "_permission_asked").map((u) => u.title);
    const calls = updates.filter((u) => u.sessionUpdate === "tool_call_update");
    facts.titles = [...new Set(calls.filter((u) => u.title).map((u) => u.title))];
    facts.statuses = calls.map((u) => u.status);
    facts.text = updates
      .filter((u) => u.sessionUpdate === "agent_message_chunk")
      .map((u) => u.content.text)
      .join("");
  }),
);
