// The hub's web page: log in (the token, or a one-time code from `omniagent hub open` in the URL's fragment), then
// watch every session of the hub live, open one to read and steer it, start new ones. Everything goes over the
// sidecar wire on /sidecar; the list stays live through `list` with `after` (it answers when the list changes).

import { $, el } from "./dom.js";
import { Wire } from "./wire.js";
import { SessionView } from "./session.js";
import { newSessionForm, renderPlanUsage, renderSessions } from "./sessions.js";

const PLAN_USAGE_EVERY_MS = 5 * 60 * 1000;
const RETRY_MS = [250, 500, 1000, 2000, 5000];

class App {
  constructor(served) {
    this.served = served;
    this.rows = new Map();
    this.version = null;
    this.view = null;
    this.agents = null; // the hub's agents, once discovered (the new-session form waits for them)
    this.usages = new Map();
    this.generation = 0; // one per connection: a watch loop of an earlier one stops
    this.retries = 0;
    this.wire = new Wire({
      event: (event) => this.view && event.session_id === this.view.id && this.view.event(event),
      closed: (id) => this.view && id === this.view.id && this.view.closed(),
      sessionError: (id, body) => this.view && id === this.view.id && this.view.sessionError(body),
      state: (state) => this.connection(state),
    });
    this.sidebar = $("#sessions");
    this.main = $("#main");
    window.addEventListener("hashchange", () => this.route());
  }

  async start() {
    await this.wire.connect();
    this.generation++;
    this.watch(this.generation);
    this.discover();
    await this.route();
  }

  row(id) {
    return this.rows.get(id);
  }

  connection(state) {
    document.body.dataset.connection = state;
    $("#connection").textContent = state === "open" ? "connected" : "reconnecting…";
    if (state !== "closed") return;
    if (this.view) this.view.following = false; // a closed socket follows nothing
    this.reconnect();
  }

  async reconnect() {
    const wait = RETRY_MS[Math.min(this.retries, RETRY_MS.length - 1)];
    this.retries++;
    await new Promise((resolve) => setTimeout(resolve, wait));
    try {
      await this.wire.connect();
    } catch {
      const answer = await fetch("/auth", { cache: "no-store" }).catch(() => null);
      const state = answer && answer.ok ? await answer.json() : null;
      if (state && !state.logged_in) return showLogin("Your login has expired (or the token was rotated).");
      return this.reconnect();
    }
    this.retries = 0;
    this.generation++;
    this.version = null; // a hub started again counts its list's versions from 0
    this.watch(this.generation);
    if (!this.view) return;
    const view = this.view;
    const row = await this.refreshRow(view.id);
    if (row && !row.past && (row.last_sequence || 0) >= view.cursor) {
      view.attach().catch((error) => view.showProblem(error.message)); // on from the last event shown
      return;
    }
    // The hub was started again: its log of the session starts anew (attaching resumes a session of its last run).
    view.leave();
    this.view = null;
    this.route();
  }

  /** Keep the session list live: each `list` with `after` answers once something it shows changed. */
  async watch(generation) {
    while (generation === this.generation) {
      let listed;
      try {
        listed = await this.wire.call("list", this.version === null ? {} : { after: this.version });
      } catch {
        return; // disconnected: the next connection watches again
      }
      if (generation !== this.generation) return;
      this.version = listed.version;
      this.rows = new Map(listed.sessions.map((row) => [row.id, row]));
      renderSessions(this.sidebar, listed.sessions, this.view ? this.view.id : null);
      if (this.view) this.view.renderMeta();
    }
  }

  /** The row of one session as the hub lists it now. */
  async refreshRow(id) {
    try {
      const listed = await this.wire.call("list");
      this.rows = new Map(listed.sessions.map((row) => [row.id, row]));
    } catch {
      return this.rows.get(id);
    }
    return this.rows.get(id);
  }

  async discover() {
    const first = this.agents === null;
    try {
      const report = await this.wire.call("discover");
      this.agents = report.agents;
    } catch {
      this.agents = [];
    }
    if (first && !this.view) this.home();
    this.readPlanUsage();
  }

  async readPlanUsage() {
    await Promise.all(
      this.agents.map(async (agent) => {
        try {
          this.usages.set(agent.id, await this.wire.call("plan_usage", { agent: agent.id }));
        } catch {
          this.usages.delete(agent.id); // not logged in to a plan, or the agent cannot tell: no bars
        }
      }),
    );
    renderPlanUsage($("#plan-usage"), this.usages);
    clearTimeout(this.planTimer);
    this.planTimer = setTimeout(() => this.readPlanUsage(), PLAN_USAGE_EVERY_MS);
  }

  planUsage(agent, usage) {
    if (!agent) return;
    this.usages.set(agent, usage);
    renderPlanUsage($("#plan-usage"), this.usages);
  }

  async route() {
    const match = /^#\/s\/(.+)$/.exec(location.hash);
    const id = match ? decodeURIComponent(match[1]) : null;
    if (id && this.view && this.view.id === id) return;
    if (this.view) this.view.leave();
    this.view = null;
    if (!id) return this.home();
    const view = new SessionView(this, id);
    this.view = view;
    this.main.replaceChildren(view.root);
    renderSessions(this.sidebar, [...this.rows.values()], id);
    try {
      await view.attach();
      view.input.focus();
    } catch (error) {
      view.showProblem(`could not follow ${id}: ${error.message}`);
    }
  }

  home() {
    renderSessions(this.sidebar, [...this.rows.values()], null);
    if (this.agents === null) {
      this.main.replaceChildren(el("section", { class: "home" }, el("p", { class: "hint", text: "Asking the hub which agents it has…" })));
      return; // `discover` shows the form when it knows
    }
    const latest = [...this.rows.values()].filter((row) => !row.past).pop();
    const form = newSessionForm({
      agents: this.agents,
      directory: latest ? latest.directory : "",
      probe: (agent) => this.wire.call("probe", { agent }),
      start: async (fields) => this.adopt(await this.wire.call("open", fields), fields.dir),
    });
    this.main.replaceChildren(el("section", { class: "home" }, form, el("p", { class: "hint", text: "Pick a session on the left to watch it, answer its requests and steer it, or start one here." })));
  }

  /** A session this page just opened (or forked): the hub follows it for us already; show it. */
  adopt(info, directory) {
    if (this.view) this.view.leave();
    const row = { id: info.id, agent: info.agent.id, directory, title: info.title, activity: "idle", clients: [], usage: null, past: false };
    if (!this.rows.has(info.id)) this.rows.set(info.id, row);
    const view = new SessionView(this, info.id);
    this.view = view;
    view.opened(info);
    this.main.replaceChildren(view.root);
    history.pushState(null, "", `#/s/${encodeURIComponent(info.id)}`);
    renderSessions(this.sidebar, [...this.rows.values()], info.id);
    view.input.focus();
  }
}

function showLogin(message) {
  $("#app").hidden = true;
  $("#login").hidden = false;
  $("#logout").hidden = true;
  $("#login-problem").textContent = message || "";
  $("#token").focus();
}

async function login(fields) {
  const answer = await fetch("/login", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(fields),
    cache: "no-store",
  });
  return answer.status === 204;
}

async function enter() {
  const answer = await fetch("/auth", { cache: "no-store" });
  const served = answer.ok ? await answer.json() : { logged_in: false };
  if (!served.logged_in) return showLogin();
  $("#login").hidden = true;
  $("#app").hidden = false;
  $("#logout").hidden = false;
  const batch = $("#batch-link");
  batch.hidden = !served.batch;
  if (served.batch) batch.href = served.batch;
  $("#version").textContent = `omniagent ${served.version}`;
  const app = new App(served);
  window.omniagentPage = app; // for the benchmarks and the curious: the page's state, read-only by convention
  try {
    await app.start();
  } catch (error) {
    showLogin(`The hub refused the connection: ${error.message}`);
  }
}

async function boot() {
  $("#login-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const field = $("#token");
    const token = field.value.trim();
    field.value = "";
    if (token && (await login({ token }))) return enter();
    showLogin("That is not the hub's token.");
  });
  $("#logout").addEventListener("click", async () => {
    await fetch("/logout", { method: "POST", cache: "no-store" });
    location.reload();
  });
  // `omniagent hub open`: a one-time code in the fragment (never sent to a server); gone from the address at once.
  const code = /^#code=([\w.-]+)$/.exec(location.hash);
  if (code) {
    history.replaceState(null, "", location.pathname);
    if (!(await login({ code: code[1] }))) return showLogin("That login link is used or expired: run `omniagent hub open` again.");
  }
  return enter();
}

boot();
