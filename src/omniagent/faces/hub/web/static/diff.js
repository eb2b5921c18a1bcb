// A file change as a unified diff: the lines of the old and new text compared (Myers' O(ND) algorithm), grouped
// in hunks with three lines of context. The wire gives a change as its old text (null: a new file) and new text.

const CONTEXT = 3;
const MAX_EDITS = 4000; // beyond this many changed lines, the change is shown as the old text out, the new in

function lines(text) {
  if (!text) return [];
  const out = text.split("\n");
  if (out[out.length - 1] === "") out.pop();
  return out;
}

/** The edit script between two lists of lines: [[" " | "-" | "+", line], …] in order, or null past MAX_EDITS. */
function myers(a, b) {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, MAX_EDITS);
  const offset = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace, v, d, offset);
    }
  }
  return null;
}

function backtrack(a, b, trace, last, depth, offset) {
  const script = [];
  let x = a.length;
  let y = b.length;
  for (let d = depth; d > 0; d--) {
    const v = trace[d];
    const k = x - y;
    const prevK = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? k + 1 : k - 1;
    const prevX = v[offset + prevK];
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) script.push([" ", a[--x]]), y--;
    if (x === prevX) script.push(["+", b[--y]]);
    else script.push(["-", a[--x]]);
  }
  while (x > 0 && y > 0) script.push([" ", a[--x]]), y--;
  return script.reverse();
}

/**
 * The hunks of the change from `oldText` to `newText`: [{oldStart, oldLines, newStart, newLines, lines: [[op, text]]}].
 */
export function hunks(oldText, newText) {
  const a = lines(oldText);
  const b = lines(newText);
  const script = myers(a, b) || [...a.map((line) => ["-", line]), ...b.map((line) => ["+", line])];
  const out = [];
  let current = null;
  let previous = null; // the hunk closed last: a change within 2 × CONTEXT lines of it continues it
  let oldNo = 1;
  let newNo = 1;
  let since = Infinity; // context lines since the last change
  const pending = []; // context lines before the next change
  for (const [op, text] of script) {
    if (op === " ") {
      if (current && since < CONTEXT) {
        current.lines.push([op, text]);
        current.oldLines++;
        current.newLines++;
      } else {
        pending.push([op, text, oldNo, newNo]);
        if (pending.length > CONTEXT) pending.shift();
        if (since === CONTEXT) [previous, current] = [current, null];
      }
      since++;
      oldNo++;
      newNo++;
      continue;
    }
    const first = pending[0];
    if (!current && previous && first && first[2] === previous.oldStart + previous.oldLines) {
      current = previous;
      for (const [o, t] of pending) current.lines.push([o, t]);
      current.oldLines += pending.length;
      current.newLines += pending.length;
    }
    if (!current) {
      current = {
        oldStart: first ? first[2] : oldNo,
        newStart: first ? first[3] : newNo,
        oldLines: pending.length,
        newLines: pending.length,
        lines: pending.map(([o, t]) => [o, t]),
      };
      out.push(current);
    }
    pending.length = 0;
    current.lines.push([op, text]);
    if (op === "-") {
      current.oldLines++;
      oldNo++;
    } else {
      current.newLines++;
      newNo++;
    }
    since = 0;
  }
  return out;
}
