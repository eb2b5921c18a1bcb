// The parts of a transcript that are not prose: tool calls (input, output, file diffs), permission and question
// requests, a turn's end. All text goes in as text.

import { el, variant } from "./dom.js";
import { hunks } from "./diff.js";

const DIFF_LINES = 400; // lines of one file's diff shown before "… more"
const OUTPUT_OPEN_LINES = 12; // an output this short is shown open
const OUTPUT_CHARS = 64 * 1024; // the end of a longer output is shown (a build's log: its end says how it went)

const CHOICES = {
  AllowOnce: "Allow once",
  AllowAlways: "Always allow",
  DenyOnce: "Deny",
  DenyAlways: "Always deny",
};

/** A tool's kind as a short label: "Execute", "Edit", "mcp: server/tool". */
export function toolKind(kind) {
  const [name, body] = variant(kind);
  return name === "Mcp" && body ? `mcp ${body.server}/${body.tool}` : name || "Tool";
}

/** What a tool call was given, in one line ("$ cargo test", a path, a pattern, a URL…), or "". */
export function toolInput(input) {
  const [name, body] = variant(input);
  if (name === "Command") return `$ ${body.command}`;
  if (name === "Path") return body;
  if (name === "Pattern" || name === "Url" || name === "Query" || name === "Text") return body;
  return "";
}

/** One file's change as a diff: its path, then each hunk's header and lines, each line a span of its kind. */
export function diffView(diff) {
  const body = el("pre", { class: "diff-body" });
  let shown = 0;
  let total = 0;
  for (const hunk of hunks(diff.old_text, diff.new_text)) {
    total += hunk.lines.length + 1;
    if (shown >= DIFF_LINES) continue;
    const header = `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`;
    body.append(el("span", { class: "diff-line hunk", text: header }));
    shown++;
    for (const [op, text] of hunk.lines) {
      if (shown >= DIFF_LINES) break;
      const kind = op === "+" ? "add" : op === "-" ? "del" : "ctx";
      body.append(el("span", { class: `diff-line ${kind}`, text: op + text }));
      shown++;
    }
  }
  const label = diff.old_text === null || diff.old_text === undefined ? "new file" : "changed";
  return el(
    "div",
    { class: "diff", dataset: { path: diff.path } },
    el("div", { class: "diff-file" }, el("span", { class: "diff-path", text: diff.path }), el("span", { class: "diff-label", text: label })),
    body,
    total > shown ? el("div", { class: "diff-more", text: `… ${total - shown} more lines` }) : null,
  );
}

/** The inside of a tool call's card, from its latest `ToolUpdate` and the output streamed so far. */
export function toolBody(update, streamed) {
  const input = toolInput(update.input);
  const output = update.output !== null && update.output !== undefined ? update.output : streamed;
  const parts = [
    el(
      "div",
      { class: "tool-head" },
      el("span", { class: "tool-kind", text: toolKind(update.kind) }),
      el("span", { class: "tool-title", text: update.title }),
      el("span", { class: "tool-status", dataset: { status: update.status }, text: update.status }),
    ),
  ];
  if (input && input !== update.title) parts.push(el("div", { class: "tool-input", text: input }));
  if (output) {
    const shown = output.length > OUTPUT_CHARS ? `… ${output.length - OUTPUT_CHARS} characters before\n${output.slice(-OUTPUT_CHARS)}` : output;
    const count = output.split("\n").length;
    parts.push(
      el(
        "details",
        { class: "tool-output", open: count <= OUTPUT_OPEN_LINES },
        el("summary", { text: `output · ${count} line${count === 1 ? "" : "s"}` }),
        el("pre", { text: shown }),
      ),
    );
  }
  for (const diff of update.diffs || []) parts.push(diffView(diff));
  return parts;
}

// A completed turn's limit (the sidecar's `Completed.limit`, our extension of the wire), in words.
const LIMITS = { MaxTokens: "the model's output token limit", MaxTurnRequests: "its limit of model requests" };

/** A stop reason in words, and a class for it. */
export function stopText(stop) {
  const [name, body] = variant(stop);
  if (name === "Completed" && body && body.limit) return [`stopped at ${LIMITS[body.limit] || body.limit}`, "completed"];
  if (name === "Completed") return body && body.source === "Inferred" ? ["idle", "idle"] : ["turn complete", "completed"];
  if (name === "Cancelled") return ["cancelled", "cancelled"];
  if (name === "Refused") return ["refused by the agent", "refused"];
  if (name === "Failed") return [`failed: ${body ? body.message : ""}`, "failed"];
  return [name, "other"];
}

/** What a request asks, in one line (for the transcript's record of it). */
export function requestSummary(request) {
  const [name, body] = variant(request);
  if (name === "Permission") return `Permission: ${body.tool.title}`;
  if (name === "Question") return `Question: ${body.questions.map((q) => q.text).join(" · ")}`;
  return name;
}

/**
 * A request's card with its answers: `answer(payload, label)` is called with the wire's answer
 * ({"Permission": choice} or {"Question": [...]}) when a button is clicked.
 */
export function requestCard(request, answer) {
  const [name, body] = variant(request);
  const card = el("div", { class: "request", dataset: { request: body.id, kind: name } });
  if (name === "Permission") {
    const tool = body.tool;
    const input = toolInput(tool.input);
    const parts = [
      el("div", { class: "request-title" }, el("span", { class: "badge ask", text: "permission" }), el("span", { class: "tool-kind", text: toolKind(tool.kind) }), el("span", { class: "tool-title", text: tool.title })),
      input && input !== tool.title ? el("div", { class: "tool-input", text: input }) : null,
      body.detail ? el("div", { class: "request-detail", text: body.detail }) : null,
      ...(tool.diffs || []).map(diffView),
      el(
        "div",
        { class: "request-actions" },
        body.options.map((choice) =>
          el("button", {
            type: "button",
            class: choice.startsWith("Allow") ? "allow" : "deny",
            dataset: { choice },
            text: CHOICES[choice] || choice,
            onclick: () => answer({ Permission: choice }, CHOICES[choice] || choice),
          }),
        ),
      ),
    ];
    card.append(...parts.filter(Boolean));
    return card;
  }
  card.append(el("div", { class: "request-title" }, el("span", { class: "badge ask", text: "question" })));
  const readers = body.questions.map((question) => questionField(card, question));
  card.append(
    el(
      "div",
      { class: "request-actions" },
      el("button", { type: "button", class: "allow", text: "Answer", onclick: () => answer({ Question: readers.map((read) => read()) }, "answered") }),
    ),
  );
  return card;
}

/** One question's inputs, appended to `card`; returns what reads its answer ({"Choices": [...]} or {"Text": …}). */
function questionField(card, question) {
  const secret = question.header === "Secret";
  const box = el("fieldset", { class: "question" }, el("legend", { text: question.header && !secret ? `${question.header}: ${question.text}` : question.text }));
  const group = `q-${question.id}-${Math.random().toString(36).slice(2)}`;
  const boxes = question.choices.map((choice) => {
    const input = el("input", { type: question.multi_select ? "checkbox" : "radio", name: group, value: choice.id });
    box.append(el("label", { class: "choice", title: choice.description || null }, input, ` ${choice.label}`));
    return input;
  });
  let text = null;
  if (question.allows_free_text || question.choices.length === 0) {
    text = el("input", { type: secret ? "password" : "text", class: "answer-text", autocomplete: "off", placeholder: secret ? "secret (not kept)" : "your answer" });
    box.append(text);
  }
  card.append(box);
  return () => {
    const chosen = boxes.filter((input) => input.checked).map((input) => input.value);
    if (chosen.length || !text) return { Choices: chosen };
    const value = text.value;
    if (secret) text.value = "";
    return { Text: value };
  };
}
