// One session's transcript: its events (replayed, then live) as turns of messages, thinking, tool calls with their
// output and diffs, records of requests, and turn ends. Events are applied in batches, once per animation frame,
// so a burst (a replay of thousands of events) costs one layout. Items go in chunks of CHUNK, each chunk
// `content-visibility: auto`: only the chunks near the screen are laid out and painted, and an item that changes
// size relays out its chunk and the chunks' list, never every item. After a large batch, finished replies show as
// plain text and are rendered as Markdown when their chunk first comes near the screen.

import { el, variant } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { requestSummary, stopText, toolBody } from "./blocks.js";

const BULK = 300; // events in one batch beyond which finished replies render their Markdown when first seen
const PINNED_PX = 48; // this close to the bottom, the transcript follows new content
const CHUNK = 40; // items of one chunk
const BURST_GAP_MS = 50; // events this close together are one burst
const BURST_MS = 1000; // the longest a burst's events wait to be shown

/** A container that puts what it is given in chunks of CHUNK elements (`append` as an element's). */
class Chunks {
  constructor(parent) {
    this.parent = parent;
    this.last = null;
  }

  append(...nodes) {
    for (const node of nodes) {
      if (!this.last || this.last.childElementCount >= CHUNK) {
        this.last = el("div", { class: "chunk" });
        this.parent.append(this.last);
      }
      this.last.append(node);
    }
  }
}

export class Transcript {
  /**
   * `scroller`: the element that scrolls; `root`: where items go. `hooks`: prompted(id) → text the page sent
   * (or undefined), canFork(), fork(messageId), canRewind(), rewind(turnId), answered(requestId) → label|undefined.
   */
  constructor(scroller, root, hooks) {
    this.scroller = scroller;
    this.root = root;
    this.top = new Chunks(root); // turns, and what belongs to no turn
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
    this.lazy = new IntersectionObserver((entries) => this.seen(entries), { root: scroller, rootMargin: "800px 0px" });
    this.plain = new Map(); // an observed element (a chunk) → the replies in it still shown as plain text
    // Following the bottom until the reader scrolls away from it (a wheel, a key, the scroll bar, a finger: layout
    // moves the scroll position too, as chunks get their real size, and that is no reason to stop); back at the
    // bottom, following again. A change of the scroller's size (a request's card shown or gone) or of the
    // transcript's keeps the bottom in view while following.
    this.stick = true;
    this.touched = -Infinity; // when the reader last scrolled by hand
    const touch = () => (this.touched = performance.now());
    for (const name of ["wheel", "keydown", "pointerdown", "touchmove"]) scroller.addEventListener(name, touch, { passive: true });
    scroller.addEventListener("scroll", () => this.scrolled(), { passive: true });
    const resized = new ResizeObserver(() => this.follow());
    resized.observe(scroller);
    resized.observe(root); // chunks taking their real size near the bottom
  }

  scrolled() {
    if (performance.now() - this.touched < 1000) this.stick = this.pinned();
    else if (!this.stick && this.pinned()) this.stick = true;
  }

  follow() {
    if (this.stick) this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  /** Take an event; it is shown at the next frame, with every other event taken before then. */
  push(event) {
    this.queue.push(event);
    this.pushed = performance.now();
    if (this.scheduled) return;
    this.scheduled = true;
    this.since = this.pushed;
    this.schedule();
  }

  schedule() {
    if (document.hidden) setTimeout(() => this.tick(), 200);
    else requestAnimationFrame(() => this.tick());
  }

  tick() {
    // A replay arrives as a burst of large frames: laying out each part of it would cost a frame's rendering per
    // part, so a large batch waits for the burst's end (at most BURST_MS) and is laid out once.
    const now = performance.now();
    if (this.queue.length > BULK && now - this.pushed < BURST_GAP_MS && now - this.since < BURST_MS) return this.schedule();
    this.flush();
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
    if (info && info.id) return this.turn(info.id).body;
    return this.top;
  }

  turn(id) {
    let turn = this.turns.get(id);
    if (!turn) {
      turn = { id, el: el("article", { class: "turn", dataset: { turn: id } }) };
      turn.body = new Chunks(turn.el);
      this.turns.set(id, turn);
      this.top.append(turn.el);
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
    const bubble = this.user(turn.body, text === undefined ? `(prompt ${promptId})` : text, { prompt: promptId });
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
      const watched = message.el.parentElement && message.el.parentElement.classList.contains("chunk") ? message.el.parentElement : message.el;
      const waiting = this.plain.get(watched);
      if (waiting) waiting.push(message);
      else {
        this.plain.set(watched, [message]);
        this.lazy.observe(watched);
      }
    } else {
      renderMarkdown(message.body, text);
    }
  }

  seen(entries) {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      this.lazy.unobserve(entry.target);
      const messages = this.plain.get(entry.target) || [];
      this.plain.delete(entry.target);
      for (const message of messages) {
        if (!message.plain) continue;
        message.plain = false;
        message.body.classList.remove("plain");
        renderMarkdown(message.body, message.parts.join(""));
      }
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
    this.note(this.top, `rewound ${count} turn${count === 1 ? "" : "s"}: the agent's conversation no longer has them`, "diag info");
  }
}
