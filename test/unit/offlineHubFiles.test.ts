// Hub files fetched by URL (src/env/hub/hubFiles.ts), the hub-file-url rule that asks the hub for them, and
// the offline-hub-files runtime shim (resources/shims/_forgeenv_shims.py) that answers their URLs from the
// local hub cache. Real runs in the 2024-09 and 2025-03 venvs (skipped, saying why, when not built) of a tiny
// script of ours; run this file alone (slow).
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { hubFileKind, hubFileUrls } from '../../src/env/hub/hubFiles';
import type { RunResult } from '../../src/env/run/executor';
import type { RuntimeShim } from '../../src/env/run/runtimeShims';
import { isSnapshotVenvReady } from '../../src/env/snapshots/venv';
import type { HubNeeds } from '../../src/env/hub/needs';
import { diagnose, type RuleContext } from '../../src/env/taskmaking/rules';
import { realRunFixture } from './realRunFixture';

const ctx = (over: Partial<RuleContext> = {}): RuleContext => ({ script: 'x = 1\n', args: [], env: {}, options: undefined, ...over });

describe('hub file URLs', () => {
  test('model, dataset and space files are parsed; queries dropped, escapes decoded; other URLs are not hub files', () => {
    const text = [
      'a = "https://huggingface.co/acme/tiny-net/resolve/main/config.json"',
      'b = "https://huggingface.co/datasets/acme/samples/resolve/v1.0/imgs/cat%2B1.png?download=true"',
      'c = "https://huggingface.co/spaces/acme/demo/resolve/main/clip.wav"',
      'd = "https://huggingface.co/gpt2/resolve/main/vocab.json"',
      'e = "https://example.org/acme/samples/resolve/main/cat.png"',
      'f = "https://huggingface.co/datasets/acme/samples/blob/main/cat.png"',
      'g = "https://huggingface.co/datasets/acme/samples/resolve/main/../secret.png"',
    ].join('\n');
    assert.deepEqual(hubFileUrls(text), [
      { repo_type: 'model', repo: 'acme/tiny-net', revision: 'main', path: 'config.json' },
      { repo_type: 'dataset', repo: 'acme/samples', revision: 'v1.0', path: 'imgs/cat+1.png' },
      { repo_type: 'space', repo: 'acme/demo', revision: 'main', path: 'clip.wav' },
      { repo_type: 'model', repo: 'gpt2', revision: 'main', path: 'vocab.json' },
    ]);
    assert.equal(hubFileKind('imgs/a.JPG'), 'image');
    assert.equal(hubFileKind('clip.wav'), 'audio');
    assert.equal(hubFileKind('weights.bin'), undefined);
  });
});

// Recorded from a run at 2025-03 (transformers 4.50, requests 2.32) of a processor handed an image URL; repo renamed.
const HUB_URL_ERROR = `Traceback (most recent call last):
  File "/tmp/run/train.py", line 12, in <module>
    inputs = processor(prompts, return_tensors="pt")
  File "site-packages/transformers/image_processing_base.py", line 548, in fetch_images
    response = requests.get(image_url_or_urls, stream=True, headers=headers)
requests.exceptions.ConnectionError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with url: /datasets/acme/picture-samples/resolve/main/cat.png (Caused by NameResolutionError("<urllib3.connection.HTTPSConnection object at 0x7f>: Failed to resolve 'huggingface.co' ([Errno -3] Temporary failure in name resolution)"))
`;

describe('hub-file-url rule on error texts', () => {
  test('a hub file URL the run fetched: the file in the hub and the offline-hub-files shim, once; then refused', () => {
    const d = diagnose(HUB_URL_ERROR, ctx());
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'hub-file-url');
    assert.deepEqual(d.outcome.runtime, { shims: ['offline-hub-files'] });
    assert.deepEqual(
      d.outcome.hub?.files?.map((f) => [f.repo_type, f.repo, f.revision, f.path]),
      [['dataset', 'acme/picture-samples', 'main', 'cat.png']],
    );
    const again = diagnose(HUB_URL_ERROR, ctx({ runtime: d.outcome.runtime, hubExtra: d.outcome.hub }));
    assert.ok(again && again.outcome.kind === 'refuse', JSON.stringify(again));
    assert.equal(again.outcome.rule, 'network-download');
  });

  test('an error naming no URL takes the hub file URLs written in the script; none there: refused', () => {
    const err =
      'Traceback (most recent call last):\nurllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>\n';
    const script = 'import urllib.request\nurllib.request.urlopen("https://huggingface.co/acme/tiny-net/resolve/main/notes.txt")\n';
    const d = diagnose(err, ctx({ script }));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.deepEqual(
      d.outcome.hub?.files?.map((f) => f.path),
      ['notes.txt'],
    );
    const none = diagnose(err, ctx({ script: 'import urllib.request\nurllib.request.urlopen("https://example.org/notes.txt")\n' }));
    assert.ok(none && none.outcome.kind === 'refuse' && none.outcome.rule === 'network-download');
  });
});

const { realRun } = realRunFixture('forgeenv-offlinehubfiles-test-');

const run = (snapshot: string, script: string, shims: RuntimeShim[], needs?: HubNeeds): Promise<RunResult> =>
  realRun(snapshot, script, shims.length ? { shims } : {}, needs ? { needs, strict: true } : undefined);

// A script the project has never seen: an example image and a text file fetched by URL, then a URL off the hub.
const SCRIPT = `import io, urllib.request, requests, wave
img = "https://huggingface.co/datasets/acme/picture-samples/resolve/main/imgs/cat.png"
r = requests.get(img, stream=True, headers={"User-Agent": "x"})
print("requests", r.status_code, r.content[:8] == b"\\x89PNG\\r\\n\\x1a\\n", r.headers["Content-Type"])
from PIL import Image
print("image", Image.open(io.BytesIO(r.content)).size)
with urllib.request.urlopen(urllib.request.Request("https://huggingface.co/acme/tiny-net/resolve/main/clip.wav")) as f:
    print("urllib", f.status, wave.open(io.BytesIO(f.read())).getframerate())
try:
    requests.get("https://example.org/cat.png", timeout=5)
    print("other fetched")
except requests.exceptions.ConnectionError:
    print("other refused")
`;

for (const snapshot of ['2024-09', '2025-03']) {
  const skip = isSnapshotVenvReady(snapshot) ? false : `the managed venv of snapshot ${snapshot} is not built`;
  describe(`offline-hub-files in the real venv of ${snapshot}`, { skip }, () => {
    test(
      'without it the hub URL fails offline; the rule asks for the files; with them, both URLs are served and others still fail',
      {
        timeout: 900_000,
      },
      async () => {
        process.env.FORGEENV_WARM = '0';
        const bare = await run(snapshot, SCRIPT, []);
        assert.notEqual(bare.exit_code, 0);
        const d = diagnose(`${bare.stdout}\n${bare.stderr}`, ctx({ script: SCRIPT }));
        assert.ok(
          d && d.outcome.kind === 'adapt' && d.outcome.runtime && d.outcome.hub,
          `${JSON.stringify(d)}\n${bare.stderr.slice(-1500)}`,
        );
        assert.equal(d.outcome.adaptation.rule, 'hub-file-url');
        // The error names the image URL only; the wav is named by the next run's error.
        const needs: HubNeeds = { models: [], datasets: [], files: hubFileUrls(SCRIPT) };
        const r = await run(snapshot, SCRIPT, d.outcome.runtime.shims, needs);
        assert.equal(r.exit_code, 0, r.stderr.slice(-3000));
        assert.match(r.stdout, /^requests 200 True image\/png$/m);
        assert.match(r.stdout, /^image \(32, 32\)$/m);
        assert.match(r.stdout, /^urllib 200 16000$/m);
        assert.match(r.stdout, /^other refused$/m);
        // The files alone, without the shim: the URL still goes to the network.
        const noShim = await run(snapshot, SCRIPT, [], needs);
        assert.notEqual(noShim.exit_code, 0);
        assert.match(noShim.stderr, /ConnectionError|NameResolution|Max retries/);
      },
    );
  });
}
