// Counts added/removed lines of a unified diff by walking hunks with their header counts, so a
// removed line that itself starts with "--" is never mistaken for a file header.
export interface DiffLineCounts {
  added: number;
  removed: number;
}

const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;

export function countDiffLines(diff: string): DiffLineCounts {
  let added = 0;
  let removed = 0;
  let oldLeft = 0;
  let newLeft = 0;
  let start = 0;
  while (start <= diff.length) {
    let end = diff.indexOf('\n', start);
    if (end === -1) end = diff.length;
    const line = diff.charCodeAt(end - 1) === 13 ? diff.slice(start, end - 1) : diff.slice(start, end);
    start = end + 1;
    if (oldLeft > 0 || newLeft > 0) {
      const c = line[0];
      if (c === '+') {
        added++;
        newLeft--;
      } else if (c === '-') {
        removed++;
        oldLeft--;
      } else if (c === ' ' || line === '') {
        oldLeft--;
        newLeft--;
      } // '\ No newline at end of file' belongs to the previous line
      continue;
    }
    const m = HUNK.exec(line);
    if (m) {
      oldLeft = m[1] === undefined ? 1 : Number(m[1]);
      newLeft = m[2] === undefined ? 1 : Number(m[2]);
    }
  }
  return { added, removed };
}
