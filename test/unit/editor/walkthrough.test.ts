// The walkthrough's descriptions are not Markdown: VS Code renders ``double`` backticks as code and
// shows single ones literally (the step reads "`simulated`"), so only double backticks are used.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';

const pkg = JSON.parse(readFileSync(join(resolve(__dirname, '../../..'), 'package.json'), 'utf8')) as {
  contributes: { walkthroughs: Array<{ id: string; description: string; steps: Array<{ id: string; description: string }> }> };
};

describe('walkthrough descriptions', () => {
  test('code is marked with double backticks, never single ones', () => {
    const texts = pkg.contributes.walkthroughs.flatMap((w) => [
      [w.id, w.description],
      ...w.steps.map((s) => [`${w.id}/${s.id}`, s.description]),
    ]);
    assert.ok(texts.length > 1, 'the walkthrough has steps');
    for (const [where, text] of texts) {
      const rest = (text ?? '').replace(/``[^`]+``/g, '');
      assert.ok(!rest.includes('`'), `${where}: a single backtick shows literally: ${text}`);
    }
  });
});
