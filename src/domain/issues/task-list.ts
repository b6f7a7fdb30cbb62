/**
 * Task list items in a description (TaskList::Filter of the Service): list items starting with
 * `[ ]`, `[x]` or `[X]` (and `[~]`, an inapplicable task, counted as neither), outside code blocks.
 */
const ITEM = /^\s*(?:[-+*]|\d+[.)])\s+\[([ xX~])\]\s/;

export function taskCompletion(text: string): { count: number; completed: number } {
  let count = 0;
  let completed = 0;
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const f = /^\s*(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (fence === null) fence = f[1][0];
      else if (f[1][0] === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const m = ITEM.exec(line);
    if (!m || m[1] === '~') continue;
    count++;
    if (m[1] !== ' ') completed++;
  }
  return { count, completed };
}
