// The no-hub-push runtime shim (resources/shims/_forgeenv_shims.py, runtimeShims.ts) and the rule
// that records it: real runs in the snapshot venvs (skipped, saying why, when a venv is not built) of
// a tiny script of ours that pushes a tiny model to the Hub. Without the shim the offline run fails
// at the upload; the rule diagnoses that very error text; with the shim the upload is a recorded
// no-op; a keyword the release removed from push_to_hub still fails (drift is not masked).
// The real-run tests are slow: run this file alone.
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { prepareRealRun } from '../../src/env/run/realMode';
import { getSnapshot } from '../../src/env/snapshots/registry';
import { realRunFixture } from './realRunFixture';
import { isSnapshotVenvReady } from '../../src/env/snapshots/venv';
import { diagnose, type RuleContext } from '../../src/env/taskmaking/rules';

const PUSH = (kwargs: string) => `from transformers import BertConfig, BertModel
from huggingface_hub import HfApi, create_repo
model = BertModel(BertConfig(vocab_size=16, hidden_size=8, num_hidden_layers=1, num_attention_heads=1, intermediate_size=8))
create_repo("me/tiny", exist_ok=True)
HfApi().upload_folder(folder_path=".", repo_id="me/tiny")
print("pushed", model.push_to_hub("me/tiny"${kwargs}))
`;

const ctx = (script: string, over: Partial<RuleContext> = {}): RuleContext => ({ script, args: [], env: {}, options: undefined, ...over });

const { realRun } = realRunFixture('forgeenv-nohubpush-test-');

describe('hub-push rule on recorded error texts', () => {
  test('a token-less upload the script makes adds the shim once; an option named push_to_hub alone does not', () => {
    // Recorded (snapshot 2026-11, huggingface_hub 2.4; 2024-09 prints the same last line).
    const out = `Traceback (most recent call last):\n  File "train.py", line 4, in <module>\n    create_repo("me/tiny", exist_ok=True)\n  File "site-packages/huggingface_hub/utils/_http.py", line 294, in hf_request_event_hook\n    raise OfflineModeIsEnabled(\nhuggingface_hub.errors.OfflineModeIsEnabled: Cannot reach https://huggingface.co/api/repos/create: offline mode is enabled. To disable it, please unset the \`HF_HUB_OFFLINE\` environment variable.\n`;
    const d = diagnose(out, ctx('model.push_to_hub("me/x")\n'));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'hub-push');
    assert.deepEqual(d.outcome.runtime, { shims: ['no-hub-push'] });
    assert.match(d.outcome.adaptation.change, /^runtime shim no-hub-push: /);
    const again = diagnose(out, ctx('model.push_to_hub("me/x")\n', { runtime: { shims: ['no-hub-push'] } }));
    assert.notEqual(again?.outcome.kind === 'adapt' ? again.outcome.adaptation.rule : undefined, 'hub-push');
    assert.equal(diagnose(out, ctx('if args.push_to_hub:\n    pass\n'))?.outcome.kind === 'adapt', false);
  });
});

for (const snapshot of ['2024-09', '2026-11']) {
  const skip = isSnapshotVenvReady(snapshot) ? false : `the managed venv of snapshot ${snapshot} is not built`;
  describe(`no-hub-push in the real venv of ${snapshot}`, { skip }, () => {
    test(
      'without it the upload fails and the rule asks for it; with it the uploads are recorded no-ops',
      { timeout: 600_000 },
      async () => {
        process.env.FORGEENV_WARM = '0';
        const script = PUSH('');
        const bare = await realRun(snapshot, script);
        assert.notEqual(bare.exit_code, 0);
        const d = diagnose(`${bare.stdout}\n${bare.stderr}`, ctx(script));
        assert.ok(d && d.outcome.kind === 'adapt', `${JSON.stringify(d)}\n${bare.stderr.slice(-2000)}`);
        assert.deepEqual(d.outcome.runtime, { shims: ['no-hub-push'] });
        const r = await realRun(snapshot, script, { shims: ['no-hub-push'] });
        assert.equal(r.exit_code, 0, r.stderr.slice(-3000));
        assert.match(r.stderr, /forgeenv no-hub-push: create_repo\(me\/tiny\) not sent/);
        assert.match(r.stderr, /forgeenv no-hub-push: upload_folder\(me\/tiny\) not sent/);
        // push_to_hub ran as the release has it (saved to a temporary folder), down to its commit.
        assert.match(r.stderr, /forgeenv no-hub-push: create_commit\(me\/tiny\) not sent/);
        assert.match(r.stdout, /pushed https:\/\/huggingface\.co\/me\/tiny/);
      },
    );

    test('the shim masks no drift: a keyword the release does not take still fails', { timeout: 600_000 }, async () => {
      process.env.FORGEENV_WARM = '0';
      // huggingface_hub's create_repo never took `no_such_keyword`; transformers 5 removed push_to_hub(use_auth_token=).
      const r = await realRun(snapshot, `from huggingface_hub import create_repo\ncreate_repo("me/tiny", no_such_keyword=1)\n`, {
        shims: ['no-hub-push'],
      });
      assert.notEqual(r.exit_code, 0);
      assert.match(r.stderr, /unexpected keyword argument 'no_such_keyword'/);
      // token=True wants a token first: the placeholder the hub-token-required rule sets.
      const real = await prepareRealRun({ libraryVersions: { ...getSnapshot(snapshot).versions }, snapshot });
      const auth = await realRun(snapshot, PUSH(', use_auth_token=True'), {
        shims: ['no-hub-push'],
        extraEnv: { ...real.env, HF_TOKEN: 'hf_forgeenv_offline', HUGGING_FACE_HUB_TOKEN: 'hf_forgeenv_offline' },
      });
      if (snapshot === '2026-11') {
        assert.notEqual(auth.exit_code, 0);
        assert.match(auth.stderr, /unexpected keyword argument 'use_auth_token'/);
      } else assert.equal(auth.exit_code, 0, auth.stderr.slice(-2000));
    });
  });
}
