// Agents' Markdown, rendered by markdown-it (vendored, see vendor/markdown-it-LICENSE.txt and
// scripts/vendor_markdown_it.py) with HTML off: markup in a reply is shown as text, never parsed. Links keep only
// http(s) and mailto schemes (and relative ones); images are not rendered, so a reply cannot make the page fetch
// anything (the Content-Security-Policy would refuse it too). Links open in a new tab without an opener.

import markdownit from "./vendor/markdown-it.esm.min.mjs";

const md = markdownit({ html: false, linkify: false, typographer: false, breaks: false });
md.disable(["image"]);

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const ALLOWED = /^(https?|mailto):/i;
md.validateLink = (url) => {
  const href = String(url).trim();
  return !SCHEME.test(href) || ALLOWED.test(href);
};

const renderToken = (tokens, index, options, env, self) => self.renderToken(tokens, index, options);
const linkOpen = md.renderer.rules.link_open || renderToken;
md.renderer.rules.link_open = (tokens, index, options, env, self) => {
  tokens[index].attrSet("target", "_blank");
  tokens[index].attrSet("rel", "noopener noreferrer nofollow");
  return linkOpen(tokens, index, options, env, self);
};

/** Render `text` as Markdown into `target` (its children replaced). */
export function renderMarkdown(target, text) {
  target.innerHTML = md.render(text);
}
