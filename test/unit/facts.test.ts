// Facts that more than one file must state: each is defined once in code and checked here
// wherever it is repeated (docs, fallback lists). The score view's reward labels are typed by
// the reward's breakdown interfaces, so the compiler checks those.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { FALLBACK_ORDER } from '../../src/env/drift/generator';
import { breakagePrimitives } from '../../src/env/primitives/registry';
import { CLI_EXPORT_FORMATS, EXPORT_FORMATS } from '../../src/store/export/formats';
import { FILTER_CHOICES } from '../../src/store/export/selection';

const ROOT = resolve(__dirname, '../..');
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

describe('one place per fact', () => {
  test('the drift generator falls back over exactly the registered breakage primitives', () => {
    assert.deepEqual(
      [...FALLBACK_ORDER].sort(),
      breakagePrimitives()
        .map((p) => p.name)
        .sort(),
    );
  });

  test('README and docs name every export format and filter as the CLI accepts them', () => {
    const formats = `--format ${CLI_EXPORT_FORMATS.join('|')}`;
    assert.deepEqual(
      CLI_EXPORT_FORMATS.filter((f) => f !== 'trl-dpo'),
      [...EXPORT_FORMATS],
    );
    for (const doc of ['README.md', 'docs/dataset-format.md']) assert.ok(read(doc).includes(formats), `${doc} lists ${formats}`);
    const spec = read('docs/dataset-format.md');
    for (const c of Object.values(FILTER_CHOICES))
      assert.ok(
        spec.includes(`[${c.flag} ${Object.keys(c.values).join('|')}]`),
        `docs/dataset-format.md documents ${c.flag} as the CLI does`,
      );
  });

  test('package.json declares the data commands the README names', () => {
    const pkg = JSON.parse(read('package.json')) as {
      contributes: { commands: Array<{ command: string; shortTitle?: string; title: string }> };
    };
    const readme = read('README.md');
    for (const id of ['forgeenv.review.export', 'forgeenv.review.rescore']) {
      const c = pkg.contributes.commands.find((x) => x.command === id);
      assert.ok(c, `${id} is declared`);
      assert.ok(readme.includes(c.shortTitle ?? c.title), `README names ${c.shortTitle ?? c.title}`);
    }
  });
});

describe('the packaged README', () => {
  test('has no relative links: vsce refuses them without a repository URL, and `npm start` packages the extension', () => {
    const links = [...read('README.md').matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
    const relative = links.filter((l) => !/^(https?:|mailto:|#)/.test(l));
    assert.deepEqual(relative, [], `relative links in README.md: ${relative.join(', ')}`);
  });
});
