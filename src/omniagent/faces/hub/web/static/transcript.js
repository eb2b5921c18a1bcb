// One session's transcript: its events (replayed, then live) as turns of messages, thinking, tool calls with their
// output and diffs, records of requests, and turn ends. Events are applied in batches, once per animation frame,
// so a burst (a replay of thousands of events) costs one layout; every item is `content-visibility: auto`, so only
// what is near the screen is laid out and painted; after a large batch, finished replies show as plain text and
// are rendered as Markdown when they first come near the screen.

import { el, variant } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { requestSummary, stopText, toolBody } from "./blocks.js";

const BULK = 300; // events in one batch beyond which finished replies render their Markdown when first seen
const PINNED_PX = 48; // this close to the bottom, the transcript follows new content

export class Transcript {
  /**
   * `scroller`: the element that scrolls; `root`: where items go. `hooks`: prompted(id) → text the page sent
   * (or undefined), canFork(), fork(messageId), canRewind(), rewind(turnId), answered(requestId) → label|undefined.
   */
  constructor(scroller, root, hooks) {
    this.scroller = scroller;
    this.root = root;
    this.hooks = hooks;
    this.turns = new Map();
    this.prompted = []; // the prompted turns' ids, in order (what a rewind counts)
    this.messages = new Map();
    this.tools = new Map();
    this.records = new Map();
    this.queue = [];
    this.dirtyMessages = new Set();
    this.dirtyTools = new Set();
    this.scheduled = false;
    this.messageCount = 0;
    this.lastSequence = 0;
    this.lazy = new IntersectionObserver((entries) => this.seen(entries), { root: scroller, rootMargin: "1200px 0px" });
    // Following the bottom until the reader scrolls up; back at the bottom, following again. A change of the
    // scroller's size (a request's card shown or gone) keeps the bottom in view while following.
    this.stick = true;
    scroller.addEventListener("scroll", () => (this.stick = this.pinned()), { passive: true });
    new ResizeObserver(() => this.follow()).observe(scroller);
  }

  follow() {
    if (this.stick) this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  /** Take an event; it is shown at the next frame, with every other event taken before then. */
  push(event) {
    this.queue.push(event);
    if (this.scheduled) return;
    this.scheduled = true;
    if (document.hidden) setTimeout(() => this.flush(), 200);
    else requestAnimationFrame(() => this.flush());
  }

  flush() {
    this.scheduled = false;
    const events = this.queue;
    this.queue = [];
    for (const event of events) this.apply(event);
    const bulk = events.length > BULK;
    for (const message of this.dirtyMessages) this.renderMessage(message, bulk);
    this.dirtyMessages.clear();
    for (const tool of this.dirtyTools) this.renderTool(tool);
    this.dirtyTools.clear();
    if (events.length) this.lastSequence = events[events.length - 1].sequence;
    this.root.dataset.messages = String(this.messageCount);
    this.root.dataset.sequence = String(this.lastSequence);
    this.follow();
  }

  pinned() {
    const s = this.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight < PINNED_PX;
  }

  apply(event) {
    const [name, body] = variant(event.kind);
    switch (name) {
      case "TurnStarted":
        return this.started(event, body);
      case "TextDelta":
        return this.delta(event, body, "assistant");
      case "ReasoningDelta":
        return this.delta(event, body, "thinking");
      case "UserMessage":
        return this.user(this.container(event), body.text, { message: body.message_id });
      case "MessageEnded":
        return this.ended(body.message_id);
      case "ToolUpdated":
        return this.tool(event, body);
      case "ToolOutputDelta":
        return this.toolOutput(body);
      case "RequestOpened":
        return this.requestOpened(event, body);
      case "RequestClosed":
        return this.requestClosed(body.request_id);
      case "TurnEnded":
        return this.turnEnded(event, body);
      case "Diagnostic":
        return this.note(this.container(event), `${body.level}: ${body.message}`, `diag ${String(body.level).toLowerCase()}`);
      case "ContextCompacted":
        return this.note(this.container(event), "the context was compacted", "diag info");
      default:
        return undefined; // status, usage, the session's info, plans: the session view shows them
    }
  }

  /** Where an event's item goes: its subagent's tool call, else its turn, else the session's top level. */
  container(event) {
    const info = event.turn_info;
    if (info && info.parent_tool_id && this.tools.has(info.parent_tool_id)) return this.tools.get(info.parent_tool_id).children;
    if (info && info.id) return this.turn(info.id).el;
    return this.root;
  }

  turn(id) {
    let turn = this.turns.get(id);
    if (!turn) {
      turn = { id, el: el("article", { class: "turn", dataset: { turn: id } }) };
      this.turns.set(id, turn);
      this.root.append(turn.el);
    }
    return turn;
  }

  started(event, body) {
    if (!event.turn_info) return;
    const turn = this.turn(event.turn_info.id);
    const [origin, promptId] = variant(body.origin);
    if (origin !== "Prompt") {
      turn.el.classList.add("agent-turn");
      return;
    }
    this.prompted.push(turn.id);
    const ours = event.extensions && event.extensions.omniagent;
    const text = ours && typeof ours.prompt === "string" ? ours.prompt : this.hooks.prompted(promptId);
    const bubble = this.user(turn.el, text === undefined ? `(prompt ${promptId})` : text, { prompt: promptId });
    if (this.hooks.canRewind()) {
      bubble.append(el("button", { type: "button", class: "rewind small", title: "Rewind the conversation to before this prompt", text: "Rewind here", onclick: () => this.hooks.rewind(turn.id) }));
    }
  }

  user(container, text, data) {
    this.messageCount++;
    const bubble = el("div", { class: "msg user", dataset: data }, el("div", { class: "body", text }));
    container.append(bubble);
    return bubble;
  }

  delta(event, body, kind) {
    const key = `${kind}:${body.message_id}`;
    let message = this.messages.get(key);
    if (!message || message.done) {
      message = this.newMessage(this.container(event), body.message_id, kind);
      this.messages.set(key, message);
    }
    message.parts.push(body.text);
    this.dirtyMessages.add(message);
  }

  newMessage(container, id, kind) {
    this.messageCount++;
    const body = el("div", { class: kind === "assistant" ? "body md" : "body" });
    const node =
      kind === "assistant"
        ? el("div", { class: "msg assistant streaming", dataset: { message: id } }, body)
        : el("details", { class: "msg thinking streaming", dataset: { message: id } }, el("summary", { text: "Thinking" }), body);
    container.append(node);
    return { id, kind, el: node, body, parts: [], done: false, plain: false };
  }

  ended(id) {
    for (const kind of ["assistant", "thinking"]) {
      const message = this.messages.get(`${kind}:${id}`);
      if (!message || message.done) continue;
      message.done = true;
      message.el.classList.remove("streaming");
      this.dirtyMessages.add(message);
      if (kind === "assistant" && this.hooks.canFork()) {
        message.el.append(el("button", { type: "button", class: "fork small", title: "A new session with the conversation up to here", text: "Fork from here", onclick: () => this.hooks.fork(id) }));
      }
    }
  }

  renderMessage(message, bulk) {
    const text = message.parts.join("");
    message.parts = [text];
    if (message.kind !== "assistant") {
      message.body.textContent = text;
    } else if (message.done && bulk) {
      message.body.textContent = text; // shown as it is until it comes near the screen (`seen`)
      message.body.classList.add("plain");
      message.plain = true;
      message.el.__message = message;
      this.lazy.observe(message.el);
    } else {
      renderMarkdown(message.body, text);
    }
  }

  seen(entries) {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      const message = entry.target.__message;
      this.lazy.unobserve(entry.target);
      if (!message || !message.plain) continue;
      message.plain = false;
      message.body.classList.remove("plain");
      renderMarkdown(message.body, message.parts.join(""));
    }
  }

  tool(event, update) {
    let tool = this.tools.get(update.id);
    if (!tool) {
      tool = { main: el("div", { class: "tool-main" }), children: el("div", { class: "tool-children" }), streamed: "", update };
      tool.el = el("div", { class: "tool", dataset: { tool: update.id } }, tool.main, tool.children);
      this.container(event).append(tool.el);
      this.tools.set(update.id, tool);
    }
    tool.update = update;
    tool.el.dataset.status = update.status;
    this.dirtyTools.add(tool);
  }

  toolOutput(body) {
    const tool = this.tools.get(body.tool_id);
    if (!tool) return;
    tool.streamed += body.text;
    this.dirtyTools.add(tool);
  }

  renderTool(tool) {
    const before = tool.main.querySelector("details.tool-output");
    tool.main.replaceChildren(...toolBody(tool.update, tool.streamed));
    const after = tool.main.querySelector("details.tool-output");
    if (before && after) after.open = before.open;
  }

  requestOpened(event, body) {
    const [, request] = variant(body);
    const record = el("div", { class: "record request-record", dataset: { request: request.id, state: "open" } }, el("span", { class: "record-text", text: requestSummary(body) }), el("span", { class: "record-state", text: "waiting for an answer" }));
    this.records.set(request.id, record);
    this.container(event).append(record);
  }

  requestClosed(id) {
    const record = this.records.get(id);
    if (!record) return;
    const label = this.hooks.answered(id);
    record.dataset.state = "closed";
    record.querySelector(".record-state").textContent = label ? `answered here: ${label}` : "resolved";
  }

  turnEnded(event, body) {
    const [text, kind] = stopText(body.stop);
    const container = this.container(event);
    container.append(el("div", { class: "turn-end", dataset: { stop: kind }, text }));
    if (event.turn_info) this.turn(event.turn_info.id).el.dataset.state = "ended";
  }

  note(container, text, kind) {
    container.append(el("div", { class: `note ${kind}`, text }));
  }

  /** The prompted turns a rewind to before `turnId` takes back (it and every one after it). */
  turnsFrom(turnId) {
    const index = this.prompted.indexOf(turnId);
    return index < 0 ? 0 : this.prompted.length - index;
  }

  /** Show the last `count` prompted turns as rewound (the agent no longer has them). */
  markRewound(count) {
    for (const id of this.prompted.splice(this.prompted.length - count, count)) {
      const turn = this.turns.get(id);
      if (turn) turn.el.classList.add("rewound");
    }
    this.note(this.root, `rewound ${count} turn${count === 1 ? "" : "s"}: the agent's conversation no longer has them`, "diag info");
  }
}
