// How the API surface layer hands calls to our hand-written stand-ins, and stand-in behaviour checked
// against the drift catalog: real python3 runs probes under resources/simlibs with the committed API
// data of a snapshot (resources/snapshots/api, including _renamed_kwargs.json).
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simlibsDir } from '../../src/env/paths';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs `code` in simulated mode at `snapshot`; stdout lines are the probe's answers. */
function sim(code: string, snapshot: string) {
  const cwd = mkdtempSync(join(tmpdir(), 'forgeenv-calls-'));
  dirs.push(cwd);
  const r = spawnSync('python3', ['-W', 'always', '-c', code], {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONPATH: simlibsDir(), FORGEENV_SNAPSHOT: snapshot },
  });
  return { status: r.status, stdout: (r.stdout ?? '').trim(), stderr: r.stderr ?? '' };
}

describe('arguments reach our implementation as the user passed them', () => {
  test('positionals stay positional although the real parameter has another name', () => {
    // accelerate 0.20: accumulate(self, model) / gather_for_metrics(self, tensor); ours take *models / input_data.
    const r = sim(
      `
import torch
from accelerate import Accelerator
acc = Accelerator(cpu=True)
model = torch.nn.Linear(2, 2)
with acc.accumulate(model):
    pass
print(acc.gather_for_metrics(torch.tensor([1.0, 2.0])).tolist())
`,
      '2023-06',
    );
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, '[1.0, 2.0]');
  });

  test('a keyword the real signature lacks is still refused with CPython wording', () => {
    const r = sim(
      `
from accelerate import Accelerator
try:
    Accelerator(cpu=True).gather_for_metrics(input_data=[1])
except TypeError as e:
    print(e)
`,
      '2023-06',
    );
    assert.match(r.stdout, /gather_for_metrics\(\) got an unexpected keyword argument 'input_data'/, r.stderr);
  });
});

describe('keywords a real renaming decorator accepts (_renamed_kwargs.json)', () => {
  // trl 0.12 mapped SFTTrainer(tokenizer=) to processing_class silently; no snapshot holds 0.12 since the pins come from
  // cut-off dates (2024-09: 0.11.1, 2025-03: 0.16.0), and 0.13 removed the keyword: the real 0.16 refuses it.
  test('trl 0.11 SFTTrainer takes tokenizer=; trl 0.16 refuses it with the real TypeError', () => {
    const code = `
import warnings
from trl import SFTTrainer
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("gpt2")
tok.pad_token = tok.eos_token
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    try:
        SFTTrainer(model="gpt2", tokenizer=tok, train_dataset=None)
        print("accepted")
    except TypeError as e:
        print("TypeError", e)
    except Exception as e:
        print("accepted", type(e).__name__)
print([str(x.message) for x in w if "tokenizer" in str(x.message) and "deprecated" in str(x.message)])
`;
    const r = sim(code, '2025-03');
    assert.match(r.stdout, /^TypeError SFTTrainer\.__init__\(\) got an unexpected keyword argument 'tokenizer'/, r.stderr);
    const old = sim(code, '2024-09');
    assert.match(old.stdout, /^accepted/, old.stderr);
  });

  test('transformers Trainer(tokenizer=) at 4.50 warns with the recorded message once', () => {
    const r = sim(
      `
import warnings
from transformers import Trainer, TrainingArguments, AutoTokenizer, AutoModelForSequenceClassification
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    Trainer(model=model, args=TrainingArguments(output_dir="out", report_to=[]), tokenizer=tok)
msgs = [str(x.message) for x in w if "processing_class" in str(x.message)]
print(len(msgs), msgs[0] if msgs else "")
`,
      '2025-03',
    );
    assert.equal(
      r.stdout,
      '1 `tokenizer` is deprecated and will be removed in version 5.0.0 for `Trainer.__init__`. Use `processing_class` instead.',
      r.stderr,
    );
  });

  test('huggingface_hub use_auth_token= is accepted (validate_hf_hub_args renames it to token=)', () => {
    const r = sim(
      `
from huggingface_hub import hf_hub_download
try:
    hf_hub_download("user/repo", "config.json", local_files_only=True, use_auth_token=False)
except Exception as e:
    print(type(e).__name__)
`,
      '2025-09',
    );
    assert.equal(r.stdout, 'LocalEntryNotFoundError', r.stderr);
  });
});

describe('stand-in behaviour measured against the real releases', () => {
  test('huggingface_hub errors have the real hierarchy (requests before 1.0)', () => {
    const code = `
from huggingface_hub.utils import HfHubHTTPError, LocalEntryNotFoundError, EntryNotFoundError
print(sorted({c.__module__.split(".")[0] for c in HfHubHTTPError.__mro__} - {"builtins", "huggingface_hub"}), issubclass(LocalEntryNotFoundError, (EntryNotFoundError, FileNotFoundError)))
`;
    const old = sim(code, '2025-03');
    assert.equal(old.stdout, "['requests'] True", old.stderr);
  });

  test('load_dataset: an unknown keyword of a packaged builder is its config TypeError; a real option is accepted', () => {
    const r = sim(
      `
with open("d.csv", "w") as f:
    f.write("a;b\\n1;2\\n")
from datasets import load_dataset
print(load_dataset("csv", data_files="d.csv", delimiter=";")["train"].column_names)
try:
    load_dataset("csv", data_files="d.csv", not_an_option=1)
except Exception as e:
    print(type(e).__name__, e)
`,
      '2024-09',
    );
    assert.equal(r.stdout, "['a', 'b']\nTypeError CsvConfig.__init__() got an unexpected keyword argument 'not_an_option'", r.stderr);
  });

  test('datasets 4.0: ds["col"] is a Column and Sequence(feature) a List; before, a list and a Sequence', () => {
    const code = `
from datasets import Dataset, Features, Sequence, Value
ds = Dataset.from_dict({"a": [1, 2, 3]})
col = ds["a"]
print(type(col).__name__, list(col), col[1], type(Sequence(Value("int32"))).__name__)
`;
    assert.equal(sim(code, '2025-09').stdout, 'Column [1, 2, 3] 2 List');
    assert.equal(sim(code, '2025-03').stdout, 'list [1, 2, 3] 2 Sequence');
  });

  test('a tokenizers.Tokenizer built in the script drives PreTrainedTokenizerFast(tokenizer_object=)', () => {
    const r = sim(
      `
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast
raw = Tokenizer(models.WordLevel(unk_token="[UNK]"))
raw.pre_tokenizer = pre_tokenizers.Whitespace()
raw.train_from_iterator(["hello world", "hello there", "hello"], trainers.WordLevelTrainer(special_tokens=["[PAD]", "[UNK]"]))
tok = PreTrainedTokenizerFast(tokenizer_object=raw, pad_token="[PAD]", unk_token="[UNK]")
enc = tok(["hello world", "there zzz hello"], padding=True)
print(raw.get_vocab()["hello"], enc["input_ids"], tok.pad_token_id, tok.decode(enc["input_ids"][0]))
`,
      '2025-03',
    );
    // Equal counts rank alphabetically (there=3, world=4), as the real WordLevelTrainer orders them.
    assert.equal(r.stdout, '2 [[2, 4, 0], [3, 1, 2]] 0 hello world [PAD]', r.stderr);
  });

  test('a method the release defines on a subclass stays on it although our base hides it', () => {
    // transformers 4.30 defines convert_tokens_to_ids on PreTrainedTokenizerFast, not on
    // PreTrainedTokenizerBase (where our stand-in has it): the base hides it, the fast tokenizer keeps it.
    const code = `
from transformers import AutoTokenizer, PreTrainedTokenizerBase
tok = AutoTokenizer.from_pretrained("facebook/bart-base")
print(type(tok).__name__, isinstance(tok.convert_tokens_to_ids(["<s>"])[0], int), hasattr(PreTrainedTokenizerBase, "convert_tokens_to_ids"))
`;
    const r = sim(code, '2023-06');
    assert.equal(r.stdout, 'BartTokenizerFast True False', r.stderr);
  });

  test('trl 0.9 ran BCO through KTOTrainer(embedding_func=); 0.8 and 0.10 refuse the keyword', () => {
    const code = `
from trl import KTOTrainer
try:
    KTOTrainer(model=None, embedding_func=len)
except TypeError as e:
    print(e)
except Exception as e:
    print("accepted")
`;
    assert.equal(sim(code, '2024-06').stdout, 'accepted');
    assert.match(sim(code, '2024-04').stdout, /KTOTrainer.__init__\(\) got an unexpected keyword argument 'embedding_func'/);
    assert.match(sim(code, '2024-09').stdout, /KTOTrainer.__init__\(\) got an unexpected keyword argument 'embedding_func'/);
  });

  test('a public subpackage the release lacks is not importable although our stand-in has it', () => {
    const code = `
try:
    import trl.experimental
    print("OK")
except ModuleNotFoundError as e:
    print(e)
`;
    assert.equal(sim(code, '2025-09').stdout, "No module named 'trl.experimental'");
    assert.equal(sim(code, '2026-11').stdout, 'OK');
  });
});
