// One session on the page: its header (title, agent, directory, status, usage, options, fork, end), its
// transcript, its plan, the requests waiting for an answer, the prompts queued, and the prompt box. The page follows
// one session at a time: it attaches (the hub replays what it keeps), and detaches when another is shown.

import { $, dollars, el, tokens, variant } from "./dom.js";
import { requestCard } from "./blocks.js";
import { Transcript } from "./transcript.js";

const STATUS = { Idle: "idle", Working: "working", NeedsInput: "needs input" };

export class SessionView {
  constructor(app, id) {
    this.app = app;
    this.id = id;
    this.info = null;
    this.cursor = 0; // the last sequence shown
    this.status = "Idle";
    this.following = false;
    this.left = false;
    this.ended = false;
    this.sent = new Map(); // prompt id → what this page sent
    this.answers = new Map(); // request id → what this page answered
    this.dock = new Map(); // request id → its card
    this.build();
    this.transcript = new Transcript(this.scroller, this.items, {
      prompted: (promptId) => this.sent.get(promptId),
      canFork: () => this.has("Fork") && Boolean(this.info && this.info.resume_token),
      fork: (messageId) => this.fork(messageId),
      canRewind: () => this.has("Rollback"),
      rewind: (turnId) => this.askRewind(turnId),
      answered: (requestId) => this.answers.get(requestId),
    });
  }

  build() {
    this.title = el("h2", { class: "session-title", text: this.id });
    this.badge = el("span", { class: "badge status", dataset: { status: "idle" }, text: "…" });
    this.meta = el("div", { class: "session-meta" });
    this.options = el("div", { class: "options" });
    this.actions = el("div", { class: "session-actions" });
    this.items = el("div", { class: "transcript", dataset: { messages: "0", sequence: "0" } });
    this.scroller = el("div", { class: "scroller" }, this.items);
    this.plan = el("aside", { class: "plan", hidden: true }, el("h3", { text: "Plan" }), el("ol"));
    this.requests = el("div", { class: "dock" });
    this.queued = el("ul", { class: "queued" });
    // Closed until the session is followed: a prompt sent before the hub has it again (a reconnect) would be lost.
    this.input = el("textarea", { class: "prompt-text", rows: 3, placeholder: "Ask the agent… (Enter sends, Shift+Enter a new line)", "aria-label": "prompt", disabled: true });
    this.send = el("button", { type: "submit", class: "send primary", text: "Send", disabled: true });
    this.cancel = el("button", { type: "button", class: "cancel", text: "Cancel turn", disabled: true, onclick: () => this.cancelTurn() });
    this.problem = el("div", { class: "problem", role: "alert" });
    this.form = el("form", { class: "prompt", onsubmit: (event) => this.submit(event) }, this.input, el("div", { class: "prompt-actions" }, this.send, this.cancel));
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) this.submit(event);
    });
    this.root = el(
      "section",
      { class: "session", dataset: { session: this.id } },
      el("header", { class: "session-head" }, el("div", { class: "title-row" }, this.title, this.badge), this.meta, el("div", { class: "controls" }, this.options, this.actions)),
      el("div", { class: "session-main" }, this.scroller, this.plan),
      this.requests,
      this.queued,
      this.problem,
      this.form,
    );
  }

  get following() {
    return this._following;
  }

  /** Whether the hub sends this page the session's events; the prompt box is open only then. */
  set following(value) {
    this._following = value;
    if (!this.input) return; // not built yet
    this.input.disabled = this.send.disabled = this.ended || !value;
  }

  has(feature) {
    const details = this.info && this.info.details;
    return Boolean(details && details.capabilities && (details.capabilities.features || []).includes(feature));
  }

  /** Follow the session: its kept events after the cursor (all of them the first time), then live ones. */
  async attach() {
    const fields = this.cursor > 0 ? { after: this.cursor } : {};
    const attached = await this.app.wire.call("attach", { session: this.id, ...fields });
    this.following = true;
    if (this.left) return this.detach();
    this.setInfo(attached.info);
    if (attached.missed > 0) {
      this.transcript.note(this.transcript.top, `${attached.missed} earlier events are no longer kept by the hub`, "diag info");
    }
    return attached;
  }

  /** The session was opened by this page: the hub follows it for us already. */
  opened(info) {
    this.following = true;
    this.setInfo(info);
  }

  leave() {
    this.left = true;
    if (this.following) this.detach();
  }

  detach() {
    this.following = false;
    this.app.wire.call("detach", { session: this.id }).catch(() => {});
  }

  setInfo(info) {
    this.info = info;
    const row = this.app.row(this.id);
    this.title.textContent = info.title || (row && row.title) || this.id;
    this.setStatus(info.status || "Idle");
    this.renderMeta();
    this.renderOptions();
    this.renderActions();
  }

  setStatus(status) {
    this.status = status;
    const shown = this.ended ? "ended" : STATUS[status] || status;
    this.badge.textContent = shown;
    this.badge.dataset.status = shown.replace(" ", "-");
    this.cancel.disabled = this.ended || status === "Idle";
    this.send.textContent = status === "Idle" ? "Send" : this.has("Steer") ? "Steer" : "Queue";
    this.root.dataset.status = shown.replace(" ", "-");
  }

  renderMeta(usage) {
    if (usage) this.usage = usage;
    const row = this.app.row(this.id);
    const agent = this.info ? this.info.agent.name || this.info.agent.id : row ? row.agent : "";
    const parts = [el("span", { class: "agent", text: agent })];
    if (row) parts.push(el("span", { class: "directory", title: row.directory, text: row.directory }));
    const model = this.info && this.info.configuration && this.info.configuration.options ? this.info.configuration.options.model : null;
    if (model) parts.push(el("span", { class: "model", text: String(model) }));
    if (this.usage) {
      const { used_tokens: used, window_tokens: window, cost_usd: cost } = this.usage;
      parts.push(el("span", { class: "usage", text: `context ${tokens(used)}${window ? ` / ${tokens(window)}` : ""}${cost !== null && cost !== undefined ? ` · ${dollars(cost)}` : ""}` }));
    }
    this.meta.replaceChildren(...parts);
  }

  renderOptions() {
    const details = this.info.details || {};
    const current = (this.info.configuration && this.info.configuration.options) || {};
    const controls = [];
    for (const option of details.config_options || []) {
      if (!option.live) continue;
      const value = option.id in current ? current[option.id] : option.current;
      const [kind, body] = variant(option.kind);
      let control;
      if (kind === "Select") {
        control = el("select", { dataset: { option: option.id }, disabled: this.ended }, body.choices.map((choice) => el("option", { value: choice.value, selected: choice.value === value, text: choice.label })));
        control.addEventListener("change", () => this.configure(option.id, control.value));
      } else {
        control = el("input", { type: "checkbox", dataset: { option: option.id }, disabled: this.ended });
        control.checked = value === true;
        control.addEventListener("change", () => this.configure(option.id, control.checked));
      }
      controls.push(el("label", { class: "option", title: option.category || null }, el("span", { text: option.name }), control));
    }
    this.options.replaceChildren(...controls);
  }

  renderActions() {
    const actions = [];
    if (this.has("Fork") && this.info.resume_token && !this.ended) {
      actions.push(el("button", { type: "button", class: "fork-session", text: "Fork", title: "A new session with this conversation", onclick: () => this.fork(null) }));
    }
    if (!this.ended) actions.push(el("button", { type: "button", class: "end danger", text: "End session", onclick: (event) => this.end(event.target) }));
    this.actions.replaceChildren(...actions);
  }

  /** One event of the session, in sequence order (one already shown, after a reconnect, is skipped). */
  event(event) {
    if (event.sequence <= this.cursor) return;
    this.cursor = event.sequence;
    const [name, body] = variant(event.kind);
    if (name === "SessionUpdated") this.setInfo(body);
    else if (name === "StatusChanged") this.setStatus(body);
    else if (name === "ContextUsage") this.renderMeta(body);
    else if (name === "RequestOpened") this.openRequest(body);
    else if (name === "RequestClosed") this.closeRequest(body.request_id);
    else if (name === "PlanUpdated") this.renderPlan(body.entries);
    else if (name === "PlanUsageUpdated") this.app.planUsage(this.info ? this.info.agent.id : "", body);
    else if (name === "TurnStarted") this.unqueue(variant(body.origin)[1]);
    this.transcript.push(event);
  }

  /** This page stopped getting the session's events: it ended, or the hub let a slow reader go. */
  async closed() {
    this.following = false;
    if (this.left) return;
    const row = await this.app.refreshRow(this.id);
    if (row && row.activity !== "ended" && !this.left) {
      // The hub let us go (too far behind): on from the last event shown. A connection gone meanwhile is the
      // reconnection's to mend.
      await this.attach().catch((error) => this.showProblem(error.message));
      return;
    }
    this.ended = true;
    this.setStatus("Idle");
    this.input.disabled = true;
    this.send.disabled = true;
    this.input.placeholder = "This session has ended.";
    for (const card of this.dock.values()) card.remove();
    this.dock.clear();
    this.renderOptions();
    this.renderActions();
  }

  sessionError(body) {
    this.showProblem(`the agent stopped: ${body.message}`);
  }

  openRequest(body) {
    const [, request] = variant(body);
    if (this.dock.has(request.id)) return;
    const card = requestCard(body, (answer, label) => this.answer(request.id, answer, label, card));
    this.dock.set(request.id, card);
    this.requests.append(card);
  }

  closeRequest(id) {
    const card = this.dock.get(id);
    if (card) card.remove();
    this.dock.delete(id);
  }

  async answer(id, answer, label, card) {
    for (const button of card.querySelectorAll("button")) button.disabled = true;
    try {
      this.answers.set(id, label);
      await this.app.wire.call("answer", { session: this.id, request: id, answer });
    } catch (error) {
      this.answers.delete(id);
      for (const button of card.querySelectorAll("button")) button.disabled = false;
      this.showProblem(error.message);
    }
  }

  renderPlan(entries) {
    const list = $("ol", this.plan);
    list.replaceChildren(...entries.map((entry) => el("li", { dataset: { status: entry.status }, text: entry.text })));
    this.plan.hidden = entries.length === 0;
  }

  async submit(event) {
    event.preventDefault();
    const text = this.input.value.trim();
    if (!text || this.ended) return;
    this.input.value = "";
    this.showProblem("");
    try {
      const delivery = await this.app.wire.call("prompt", { session: this.id, text });
      this.sent.set(delivery.prompt_id, text);
      const [kind, body] = variant(delivery.kind);
      if (kind === "Queued") this.queue(delivery.prompt_id, text, body.position);
      else if (kind === "Steered") this.transcript.user(this.transcript.turn(body.turn_id).body, text, { prompt: delivery.prompt_id, steered: "" });
    } catch (error) {
      this.input.value = text;
      this.showProblem(error.message);
    }
  }

  queue(promptId, text) {
    const item = el("li", { dataset: { prompt: promptId } }, el("span", { class: "queued-label", text: "queued" }), el("span", { class: "queued-text", text }));
    item.append(el("button", { type: "button", class: "small", text: "Remove", onclick: () => this.dequeue(promptId) }));
    this.queued.append(item);
  }

  unqueue(promptId) {
    const item = this.queued.querySelector(`li[data-prompt="${CSS.escape(String(promptId))}"]`);
    if (item) item.remove();
  }

  async dequeue(promptId) {
    try {
      await this.app.wire.call("dequeue", { session: this.id, prompt: promptId });
      this.unqueue(promptId);
    } catch (error) {
      this.showProblem(error.message);
    }
  }

  async cancelTurn() {
    try {
      await this.app.wire.call("cancel", { session: this.id });
    } catch (error) {
      this.showProblem(error.message);
    }
  }

  async configure(option, value) {
    try {
      await this.app.wire.call("configure", { session: this.id, option, value });
    } catch (error) {
      this.showProblem(error.message);
      this.renderOptions();
    }
  }

  async fork(messageId) {
    const row = this.app.row(this.id);
    const fields = { agent: this.info.agent.id, dir: row ? row.directory : ".", fork: this.info.resume_token };
    if (messageId) fields.fork_at = messageId;
    try {
      const info = await this.app.wire.call("open", fields);
      this.app.adopt(info, fields.dir);
    } catch (error) {
      this.showProblem(error.message);
    }
  }

  askRewind(turnId) {
    const count = this.transcript.turnsFrom(turnId);
    if (!count || this.status !== "Idle") {
      this.showProblem("rewind when the session is idle");
      return;
    }
    const scopes = [["Conversation", "Rewind the conversation"]];
    if (this.has("RollbackFiles")) scopes.push(["ConversationAndFiles", "Rewind the conversation and the files"]);
    const box = el("div", { class: "confirm", role: "dialog" }, el("span", { text: `Take back ${count} turn${count === 1 ? "" : "s"}?` }));
    for (const [scope, label] of scopes) {
      box.append(el("button", { type: "button", class: "danger", dataset: { scope }, text: label, onclick: () => this.rewind(count, scope, box) }));
    }
    box.append(el("button", { type: "button", text: "Keep them", onclick: () => box.remove() }));
    this.problem.replaceChildren(box);
  }

  async rewind(count, scope, box) {
    box.remove();
    try {
      await this.app.wire.call("rollback", { session: this.id, turns: count, scope });
      this.transcript.markRewound(count);
    } catch (error) {
      this.showProblem(error.message);
    }
  }

  async end(button) {
    if (button.dataset.confirm !== "yes") {
      button.dataset.confirm = "yes";
      button.textContent = "End it for every client?";
      return;
    }
    try {
      await this.app.wire.call("close", { session: this.id });
    } catch (error) {
      this.showProblem(error.message);
    }
  }

  showProblem(text) {
    this.problem.replaceChildren(text ? el("span", { text }) : "");
  }
}
