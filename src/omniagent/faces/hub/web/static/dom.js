// Elements built from text only: nothing here parses HTML. Every string an agent sent reaches the page through
// `el` (textContent, attribute values) or through the sanitizing Markdown renderer (markdown.js), never innerHTML.

/**
 * A new element: `props` sets the class, text, data-* and attributes (values as strings), `on…` listeners;
 * children are nodes or strings (as text).
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** The element `selector` finds in `root` (the document by default). */
export function $(selector, root = document) {
  return root.querySelector(selector);
}

/** A variant of the sidecar wire as [name, body]: unit variants are bare strings, data variants one-key objects. */
export function variant(value) {
  if (typeof value === "string") return [value, null];
  if (value && typeof value === "object") {
    const keys = Object.keys(value);
    if (keys.length === 1) return [keys[0], value[keys[0]]];
  }
  return ["", value];
}

/** A number of tokens, short: 812, 12.4k, 1.2M. */
export function tokens(count) {
  if (count === null || count === undefined) return "";
  if (count < 1000) return String(count);
  if (count < 1_000_000) return `${(count / 1000).toFixed(count < 10_000 ? 1 : 0)}k`;
  return `${(count / 1_000_000).toFixed(1)}M`;
}

/** A cost in dollars: $0.0021, $1.24. */
export function dollars(cost) {
  if (cost === null || cost === undefined) return "";
  return cost < 0.01 ? `$${cost.toFixed(4)}` : `$${cost.toFixed(2)}`;
}

/** The last two parts of a path, for a narrow column (the whole path in its title). */
export function shortPath(path) {
  const parts = String(path || "").split("/").filter(Boolean);
  return parts.length <= 2 ? String(path || "") : `…/${parts.slice(-2).join("/")}`;
}
