// The page's line diff (faces/hub/web/static/diff.js) checked on many random changes: its hunks, applied, give the
// new text from the old one; every hunk's counts and positions are right; context is at most 3 lines around each
// change; changes at most 6 unchanged lines apart are one hunk. Run by test_page_diff.py.
// Usage: node diff_check.mjs PATH/TO/diff.js CASES

const [, , module, cases] = process.argv;
const { hunks } = await import(module);

let seed = 42;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const pick = (n) => Math.floor(random() * n);

function text(lines) {
  return lines.length ? lines.join("\n") + "\n" : "";
}

function mutate(lines) {
  const out = lines.slice();
  for (let edits = pick(6); edits > 0; edits--) {
    const at = pick(out.length + 1);
    const what = pick(3);
    if (what === 0 && out.length) out.splice(at % out.length, 1);
    else if (what === 1) out.splice(at, 0, `new ${pick(1000)}`);
    else if (out.length) out[at % out.length] = `changed ${pick(1000)}`;
  }
  return out;
}

function check(oldLines, newLines) {
  const found = hunks(oldLines === null ? null : text(oldLines), text(newLines));
  const old = oldLines || [];
  const rebuilt = [];
  let next = 0; // the next old line not yet copied
  let previousEnd = 0;
  for (const hunk of found) {
    const start = hunk.oldLines === 0 ? hunk.oldStart : hunk.oldStart - 1;
    if (start < previousEnd) throw new Error(`hunks overlap at ${hunk.oldStart}`);
    // Changes at most 6 unchanged lines apart share their context: one hunk, so two hunks never touch.
    if (start === previousEnd && previousEnd > 0) throw new Error(`hunks at ${previousEnd} should be one`);
    rebuilt.push(...old.slice(next, start));
    let oldCount = 0;
    let newCount = 0;
    let position = start;
    for (const [op, line] of hunk.lines) {
      if (op !== "+") {
        if (old[position] !== line) throw new Error(`hunk at ${hunk.oldStart} does not match the old text`);
        position++;
        oldCount++;
      }
      if (op !== "-") {
        rebuilt.push(line);
        newCount++;
      }
    }
    if (oldCount !== hunk.oldLines || newCount !== hunk.newLines) throw new Error(`counts of the hunk at ${hunk.oldStart}`);
    const lead = hunk.lines.findIndex(([op]) => op !== " ");
    const trail = [...hunk.lines].reverse().findIndex(([op]) => op !== " ");
    if (lead < 0 || lead > 3 || trail > 3) throw new Error(`context of the hunk at ${hunk.oldStart}: ${lead}, ${trail}`);
    next = position;
    previousEnd = position;
  }
  rebuilt.push(...old.slice(next));
  if (text(rebuilt) !== text(newLines)) throw new Error("the hunks applied do not give the new text");
}

for (let i = 0; i < Number(cases); i++) {
  const size = pick(i % 10 === 0 ? 400 : 30);
  const old = Array.from({ length: size }, (_, n) => `line ${n % (1 + pick(20))}`); // repeats: ambiguous matches
  check(i % 17 === 0 ? null : old, i % 17 === 0 ? old : mutate(old));
}
check(["a"], []);
check([], ["a"]);
console.log(`ok ${cases}`);
