// The page's side: every session of the hub at a glance (any agent: status, directory, title, cost, context use),
// the plan usage of logged-in agents, and the form that starts a new session.

import { dollars, el, shortPath, tokens } from "./dom.js";

const ACTIVITY = { working: "working", needs_input: "needs input", idle: "idle", ended: "ended" };

/** One row of the session list: a link to the session. */
function sessionRow(row, current) {
  const activity = ACTIVITY[row.activity] || row.activity;
  const usage = row.usage;
  const figures = [];
  if (usage && usage.cost_usd !== null && usage.cost_usd !== undefined) figures.push(el("span", { class: "cost", text: dollars(usage.cost_usd) }));
  if (usage) {
    const label = `${tokens(usage.used_tokens)}${usage.window_tokens ? ` / ${tokens(usage.window_tokens)}` : ""} tokens`;
    figures.push(el("span", { class: "context", text: label }));
    if (usage.window_tokens) figures.push(el("meter", { class: "context-meter", min: 0, max: usage.window_tokens, value: usage.used_tokens, title: label }));
  }
  const clients = row.clients.length;
  return el(
    "a",
    { class: `session-row${row.id === current ? " current" : ""}`, href: `#/s/${encodeURIComponent(row.id)}`, dataset: { session: row.id, activity: row.activity } },
    el("div", { class: "row-top" }, el("span", { class: "row-title", text: row.title || "untitled" }), el("span", { class: "badge status", dataset: { status: activity.replace(" ", "-") }, text: activity })),
    el("div", { class: "row-meta" }, el("span", { class: "row-agent", text: row.agent }), el("span", { class: "row-dir", title: row.directory, text: shortPath(row.directory) }), el("span", { class: "row-id", text: row.id })),
    figures.length || clients ? el("div", { class: "row-figures" }, ...figures, clients ? el("span", { class: "clients", title: row.clients.map((c) => `${c.name} (${c.role})`).join(", "), text: `${clients} attached` }) : null) : null,
  );
}

/** The session list: live sessions, then (folded) those of earlier runs of the hub. */
export function renderSessions(root, rows, current) {
  const live = rows.filter((row) => !row.past);
  const past = rows.filter((row) => row.past);
  const parts = [el("h3", { text: `Sessions (${live.length})` })];
  if (!live.length) parts.push(el("p", { class: "empty", text: "No session yet." }));
  parts.push(el("div", { class: "rows" }, live.map((row) => sessionRow(row, current))));
  if (past.length) {
    parts.push(el("details", { class: "past" }, el("summary", { text: `Earlier runs (${past.length})` }), el("div", { class: "rows" }, past.map((row) => sessionRow(row, current)))));
  }
  root.replaceChildren(...parts);
}

/** The plan usage bars: one block per logged-in agent that reports its plan's quota windows. */
export function renderPlanUsage(root, usages) {
  const blocks = [];
  for (const [agent, usage] of usages) {
    const windows = usage.windows.map((window) =>
      el(
        "div",
        { class: "window" },
        el("span", { class: "window-label", text: window.label }),
        el("meter", { min: 0, max: 100, low: 60, high: 85, optimum: 0, value: window.used_percent }),
        el("span", { class: "window-used", text: `${window.used_percent}%` }),
        window.resets_at ? el("span", { class: "window-reset", text: `resets ${new Date(window.resets_at.secs_since_epoch * 1000).toLocaleString()}` }) : null,
      ),
    );
    blocks.push(el("div", { class: "plan-usage", dataset: { agent } }, el("div", { class: "plan-agent", text: usage.plan ? `${agent} · ${usage.plan}` : agent }), ...windows));
  }
  root.hidden = blocks.length === 0;
  root.replaceChildren(el("h3", { text: "Plan usage" }), ...blocks);
}

/**
 * The form of a new session: agent (from the hub's discovery), directory, model (the agent's choices, when it
 * offers them), permission mode. `start(fields)` opens it; `probe(agent)` reads the agent's options.
 */
export function newSessionForm({ agents, directory, start, probe }) {
  const agent = el("select", { id: "new-agent", name: "agent", required: true }, agents.map((a) => el("option", { value: a.id, text: a.name && a.name !== a.id ? `${a.name} (${a.id})` : a.id })));
  const dir = el("input", { id: "new-dir", name: "dir", required: true, value: directory || "", placeholder: "/path/to/the/project", autocomplete: "off" });
  const model = el("select", { id: "new-model", name: "model" }, el("option", { value: "", text: "the agent's default" }));
  const mode = el("select", { id: "new-permission", name: "permission" }, el("option", { value: "Ask", text: "ask before acting" }), el("option", { value: "AutoApprove", text: "approve everything" }));
  const problem = el("div", { class: "problem", role: "alert" });
  const button = el("button", { type: "submit", class: "primary", text: "Start the session" });
  let asked = 0; // the latest probe: an earlier one answering later is ignored
  const loadModels = async () => {
    const mine = ++asked;
    const chosen = agent.value;
    model.replaceChildren(el("option", { value: "", text: "the agent's default" }));
    try {
      const details = await probe(chosen);
      if (mine !== asked) return;
      const option = (details.config_options || []).find((o) => o.id === "model" || o.category === "model");
      const kind = option ? option.kind : null;
      if (option && kind && kind.Select) {
        for (const choice of kind.Select.choices) model.append(el("option", { value: choice.value, text: choice.label }));
        model.dataset.option = option.id;
      }
    } catch (error) {
      if (mine === asked) problem.textContent = `could not read ${chosen}'s options: ${error.message}`;
    }
  };
  agent.addEventListener("change", loadModels);
  const form = el(
    "form",
    { class: "new-session", id: "new-session" },
    el("h2", { text: "New session" }),
    el("label", {}, el("span", { text: "Agent" }), agent),
    el("label", {}, el("span", { text: "Directory" }), dir),
    el("label", {}, el("span", { text: "Model" }), model),
    el("label", {}, el("span", { text: "Permissions" }), mode),
    el("div", { class: "form-actions" }, button),
    problem,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    problem.textContent = "";
    const fields = { agent: agent.value, dir: dir.value.trim(), permission_mode: mode.value };
    if (model.value) fields.configure = { [model.dataset.option || "model"]: model.value };
    try {
      await start(fields);
    } catch (error) {
      problem.textContent = error.message;
    } finally {
      button.disabled = false;
    }
  });
  if (agents.length) loadModels();
  return form;
}
