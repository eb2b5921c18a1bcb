// An outside ACP client over the network: npm @agentclientprotocol/sdk@2.4.0, whose `experimental/http-client`
// (Streamable HTTP: POST + SSE) and `experimental/ws-client` (WebSocket) transports speak the draft remote transport,
// and whose client validates every message it receives. It drives the hub's /acp through: initialize (v1) →
// session/new → a prompt whose turn asks a permission (allowed once) → the prompt's stop reason.
// Usage: node sdk_remote_client.mjs SDK_DIR WS_DIR http|ws URL WORKSPACE   (the token in $OMNIAGENT_HUB_TOKEN)
// Prints one JSON line: {"ok": true, ...facts} or {"ok": false, "error": "...", ...facts}; exit code 0 / 1.
import { pathToFileURL } from "node:url";

const [sdkDir, wsDir, transport, url, workspace] = process.argv.slice(2);
const load = (dir, path) => import(pathToFileURL(`${dir}/${path}`).href);
const acp = await load(sdkDir, "dist/v1/stable/acp.js");
const headers = { Authorization: `Bearer ${process.env.OMNIAGENT_HUB_TOKEN}` };
let stream;
if (transport === "http") {
  const { createHttpStream } = await load(sdkDir, "dist/transports/http-stream.js");
  stream = createHttpStream(url, { headers });
} else {
  const { createWebSocketStream } = await load(sdkDir, "dist/transports/ws-stream.js");
  const { WebSocket } = await load(wsDir, "index.js").then((m) => m.default ?? m);
  stream = createWebSocketStream(url.replace(/^http/, "ws"), { headers, WebSocket });
}

const facts = { kinds: [], text: "", permissions: 0 };
const app = acp
  .client({ name: "sdk-remote-test-client" })
  .onNotification("session/update", ({ params }) => {
    facts.kinds.push(params.update.sessionUpdate);
    if (params.update.sessionUpdate === "agent_message_chunk") facts.text += params.update.content.text;
  })
  .onRequest("session/request_permission", async ({ params }) => {
    facts.permissions += 1;
    facts.asked = [...(facts.asked ?? []), params.toolCall?.toolCallId];
    const allow = params.options.find((o) => o.kind === "allow_once") ?? params.options[0];
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  });

try {
  await app.connectWith(stream, async (cx) => {
    const init = await cx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    facts.protocolVersion = init.protocolVersion;
    const session = await cx.request("session/new", { cwd: workspace, mcpServers: [] });
    facts.sessionId = session.sessionId;
    const answer = await cx.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "hello" }],
    });
    facts.stopReason = answer.stopReason;
  });
  console.log(JSON.stringify({ ok: true, ...facts }));
  process.exit(0);
} catch (error) {
  console.log(JSON.stringify({ ok: false, error: String(error?.stack ?? error), ...facts }));
  process.exit(1);
}
