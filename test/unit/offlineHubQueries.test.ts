// The offline-hub-queries runtime shim (resources/shims/_forgeenv_shims.py, runtimeShims.ts) and the
// rule that records it. Offline, `huggingface_hub.file_exists` raises, and libraries that call it
// unguarded (PEFT's adapter loading) cannot load what the offline hub holds; the shim answers from the
// local hub cache. Real runs in the 2024-09 venv (skipped, saying why, when it is not built) of a tiny
// script of ours; run this file alone (slow).
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { isSnapshotVenvReady } from '../../src/env/snapshots/venv';
import { diagnose, type RuleContext } from '../../src/env/taskmaking/rules';
import { realRunFixture } from './realRunFixture';

const ctx = (over: Partial<RuleContext> = {}): RuleContext => ({ script: 'x = 1\n', args: [], env: {}, options: undefined, ...over });

// Written after a real run at 2024-06 (peft 0.11.1, huggingface_hub 0.23), paths shortened.
const PEFT_OFFLINE = `Traceback (most recent call last):
  File "train.py", line 40, in <module>
    model = AutoPeftModelForCausalLM.from_pretrained(args.model_name_or_path)
  File "site-packages/peft/utils/save_and_load.py", line 415, in load_peft_weights
    has_remote_safetensors_file = file_exists(
  File "site-packages/huggingface_hub/hf_api.py", line 2601, in file_exists
    get_hf_file_metadata(url, token=token)
  File "site-packages/huggingface_hub/utils/_http.py", line 77, in send
    raise OfflineModeIsEnabled(
huggingface_hub.errors.OfflineModeIsEnabled: Cannot reach https://huggingface.co/forgeenv-adapters/lora-x/resolve/main/adapter_model.safetensors: offline mode is enabled. To disable it, please unset the \`HF_HUB_OFFLINE\` environment variable.
`;

describe('offline-hub-query rule on error texts', () => {
  test('file_exists refused offline adds the shim once', () => {
    const d = diagnose(PEFT_OFFLINE, ctx());
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'offline-hub-query');
    assert.deepEqual(d.outcome.runtime, { shims: ['offline-hub-queries'] });
    const again = diagnose(PEFT_OFFLINE, ctx({ runtime: { shims: ['offline-hub-queries'] } }));
    assert.notEqual(again?.outcome.kind === 'adapt' ? again.outcome.adaptation.rule : undefined, 'offline-hub-query');
  });

  test('an offline refusal of another request (an upload) is not this rule', () => {
    const other = PEFT_OFFLINE.replace(/resolve\/main\/adapter_model.safetensors/, 'api/repos/create');
    const d = diagnose(other, ctx());
    assert.notEqual(d?.outcome.kind === 'adapt' ? d.outcome.adaptation.rule : undefined, 'offline-hub-query');
  });
});

const { realRun } = realRunFixture('forgeenv-offlinehubq-test-');
const SNAPSHOT = '2024-09';
const skip = isSnapshotVenvReady(SNAPSHOT) ? false : `the managed venv of snapshot ${SNAPSHOT} is not built`;

describe(`offline-hub-queries in the real venv of ${SNAPSHOT}`, { skip }, () => {
  test('without it file_exists raises offline; with it, it answers from the local hub cache', { timeout: 600_000 }, async () => {
    process.env.FORGEENV_WARM = '0';
    // gpt2 is in every snapshot's base local hub.
    const script = `from huggingface_hub import file_exists
print("cached", file_exists("gpt2", "config.json"))
print("absent", file_exists("gpt2", "no-such-file.bin"), file_exists("forgeenv/no-such-repo", "config.json"))
`;
    const bare = await realRun(SNAPSHOT, script);
    assert.notEqual(bare.exit_code, 0);
    assert.match(bare.stderr, /OfflineModeIsEnabled/);
    const d = diagnose(`${bare.stdout}\n${bare.stderr}`, ctx({ script }));
    assert.ok(d && d.outcome.kind === 'adapt', `${JSON.stringify(d)}\n${bare.stderr.slice(-2000)}`);
    assert.deepEqual(d.outcome.runtime, { shims: ['offline-hub-queries'] });
    const r = await realRun(SNAPSHOT, script, { shims: ['offline-hub-queries'] });
    assert.equal(r.exit_code, 0, r.stderr.slice(-3000));
    assert.match(r.stdout, /^cached True$/m);
    assert.match(r.stdout, /^absent False False$/m);
  });

  test('the shim masks no drift: a keyword the release does not take still fails', { timeout: 600_000 }, async () => {
    process.env.FORGEENV_WARM = '0';
    const r = await realRun(SNAPSHOT, `from huggingface_hub import file_exists\nfile_exists("gpt2", "config.json", no_such_keyword=1)\n`, {
      shims: ['offline-hub-queries'],
    });
    assert.notEqual(r.exit_code, 0);
    assert.match(r.stderr, /unexpected keyword argument 'no_such_keyword'/);
  });
});
