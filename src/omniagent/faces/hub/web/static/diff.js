// A file change as a unified diff: the lines of the old and new text compared (Myers' O(ND) algorithm), grouped
// in hunks with three lines of context. The wire gives a change as its old text (null: a new file) and new text.

const CONTEXT = 3;
// Beyond this many changed lines (after the common head and tail are set aside), the change is shown as the old
// text out and the new in: the trace the algorithm keeps grows with the square of it.
const MAX_EDITS = 1000;

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
  const v = new Int32Array(2 * max + 3);
  const trace = []; // trace[d]: v over the diagonals -d-1 … d+1 before step d (what backtracking reads)
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace, v, d);
    }
  }
  return null;
}

function backtrack(a, b, trace, last, depth) {
  const script = [];
  let x = a.length;
  let y = b.length;
  for (let d = depth; d > 0; d--) {
    const v = trace[d];
    const at = (k) => v[k + d + 1]; // trace[d] starts at diagonal -d-1
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
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
  // The common head and tail are context: only the middle is compared (a small edit of a large file is cheap).
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const middleA = a.slice(head, a.length - tail);
  const middleB = b.slice(head, b.length - tail);
  const middle = myers(middleA, middleB) || [...middleA.map((line) => ["-", line]), ...middleB.map((line) => ["+", line])];
  const script = [...a.slice(0, head).map((line) => [" ", line]), ...middle, ...a.slice(a.length - tail).map((line) => [" ", line])];
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
