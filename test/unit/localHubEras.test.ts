// The local hub generator (make_hub.py) in each built snapshot venv's own libraries, the oldest era
// first: 2023-06 (tokenizers 0.13, datasets 2.13) failed to build its hub (Metaspace without
// prepend_scheme; DatasetBuilder without dataset_name). Checks a Unigram tokenizer (Metaspace) and a
// Hub dataset written then read back offline with load_dataset, as a script reads it, plus a
// base-hub dataset served with more rows (`.select(range(N))`). Skipped, saying why, per venv absent.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { resourcesDir, simlibsDir } from '../../src/env/paths';
import { isSnapshotVenvReady, snapshotPython } from '../../src/env/snapshots/venv';

const work = mkdtempSync(join(tmpdir(), 'forgeenv-hub-eras-'));
after(() => rmSync(work, { recursive: true, force: true }));

function py(snapshot: string, code: string, env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync(snapshotPython(snapshot), ['-c', code], {
    env: { PATH: process.env.PATH, HOME: work, PYTHONDONTWRITEBYTECODE: '1', ...env },
    encoding: 'utf8',
    timeout: 300_000,
  });
  assert.equal(r.status, 0, `python failed:\n${r.stderr.slice(-3000)}`);
  return r.stdout;
}

const WRITE = (out: string) => `
import sys, os
sys.path.insert(0, ${JSON.stringify(join(resourcesDir(), 'localhub'))})
import make_hub
os.environ.update(make_hub.offline_env(${JSON.stringify(out)}))
synthetic = make_hub.load_synthetic(${JSON.stringify(simlibsDir())})
tok, _ = make_hub.train_tokenizer("t5", make_hub.corpus_text(synthetic))
print("pieces", tok.encode("hello world").tokens[0][0] == "\\u2581")
make_hub.write_dataset(${JSON.stringify(out)}, "glue", "sst2", synthetic)
make_hub.write_dataset(${JSON.stringify(out)}, "timdettmers/openassistant-guanaco", None, synthetic)
features, tables = make_hub.base_dataset_tables("imdb", None, synthetic, rows=300)
make_hub.prepare_dataset(${JSON.stringify(out)}, "imdb", "default", features, tables)
`;

const READ = `
import datasets
for path, config in [("glue", "sst2"), ("timdettmers/openassistant-guanaco", None), ("imdb", None)]:
    d = datasets.load_dataset(path, config)
    print(path, d["train"].num_rows, ",".join(sorted(d["train"].column_names)))
`;

for (const snapshot of ['2023-06', '2024-09']) {
  const skip = isSnapshotVenvReady(snapshot) ? false : `the ${snapshot} snapshot venv is not built (${snapshotPython(snapshot)})`;
  describe(`make_hub.py in the ${snapshot} venv`, { skip }, () => {
    test(
      "a Metaspace tokenizer trains; hub datasets written by the era's datasets load offline, a base dataset with more rows too",
      { timeout: 600_000 },
      () => {
        const out = join(work, snapshot);
        assert.match(py(snapshot, WRITE(out)), /pieces True/);
        const read = py(snapshot, READ, { HF_HOME: out, HF_DATASETS_OFFLINE: '1', HF_HUB_OFFLINE: '1' });
        assert.match(read, /^glue 64 idx,label,sentence$/m);
        assert.match(read, /^timdettmers\/openassistant-guanaco 64 text$/m);
        assert.match(read, /^imdb 300 label,text$/m);
      },
    );
  });
}
