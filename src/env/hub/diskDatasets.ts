// Datasets a script reads with `load_from_disk(PATH)`: a folder an earlier step saved with
// `save_to_disk` (a notebook's preprocessing, a SageMaker channel). Real mode builds a synthetic one
// with the snapshot's own `datasets` (make_hub_items.py, kind `disk_dataset`) into the run's hub
// under `disk/<PATH>`, and each run gets PATH as a link to it in its run folder. The schema is read
// off the script: a folder the script hands to a model without `map` is already preprocessed (model
// inputs: token ids, pixel values, labels); the keys it reads and the splits it indexes are added.
import { join } from 'node:path';
import type { ColumnKind, DatasetNeed } from './needs';

/** The folder of the run's hub (HF_HOME) that holds the saved datasets, by their relative path. */
export const DISK_DATASET_DIR = 'disk';

const SPLITS = /^(train|test|validation|valid|dev|eval|evaluation)$/;
const IMAGE_MODEL =
  /ForImageClassification|VisionEncoderDecoder|ImageProcessor|FeatureExtractor|pixel_values|\bViT\w*|Donut\w*|AutoImageProcessor/;
const GENERATIVE = /ForCausalLM|ForSeq2SeqLM|ForConditionalGeneration|VisionEncoderDecoder|Seq2SeqTrainer|DataCollatorForLanguageModeling/;
const CLASSIFIER = /For(?:Sequence|Image|Audio|Token)Classification|num_labels|num_classes/;

/** The variables assigned a `load_from_disk(...)` result (`train_ds = load_from_disk(args.training_dir)`). */
export function diskDatasetVariables(script: string): string[] {
  return [...new Set([...script.matchAll(/^[ \t]*([A-Za-z_]\w*)\s*=\s*(?:[\w.]+\.)?load_from_disk\(/gm)].map((m) => m[1]))];
}

/** Whether the script calls `load_from_disk` at all. */
export const readsFromDisk = (script: string): boolean => /\bload_from_disk\s*\(/.test(script);

export interface DiskDatasetSchema {
  columns: Record<string, ColumnKind>;
  labels?: Record<string, string[]>;
  /** Splits the script indexes (`ds["train"]`): a DatasetDict; none: a Dataset. */
  splits?: string[];
}

/**
 * The schema of the saved datasets `script` loads from disk: the keys it reads from them
 * (`ds["labels"]`, `ds[0]["pixel_values"]`, `ds.features["label"]`), and, when it never `map`s them
 * (they reach the model as saved), the model inputs its model kind takes.
 */
export function diskDatasetSchema(script: string): DiskDatasetSchema {
  const vars = diskDatasetVariables(script);
  const cols = new Map<string, ColumnKind>();
  const splits = new Set<string>();
  const generative = GENERATIVE.test(script);
  const kindOfKey = (key: string): ColumnKind => {
    if (key === 'pixel_values') return 'pixels';
    if (key === 'input_ids' || key === 'attention_mask' || key === 'token_type_ids' || key === 'decoder_input_ids') return 'token_ids';
    if (key === 'labels' && generative) return 'token_ids';
    if (/^(label|labels)$|_label$/.test(key)) return 'label';
    if (/^(image|img)s?$/.test(key)) return 'image';
    return 'string';
  };
  let mapped = false;
  for (const v of vars) {
    // `v["x"]`, `v[0]["x"]`, `v["train"][0]["x"]`, `v.features["x"]`.
    const re = new RegExp(`\\b${v}((?:\\.features)?(?:\\[[^\\]\\n]*\\])+)`, 'g');
    for (const m of script.matchAll(re)) {
      for (const k of m[1].matchAll(/\[\s*(["'])([A-Za-z_][\w-]*)\1\s*\]/g)) {
        const key = k[2];
        if (SPLITS.test(key) && !m[1].startsWith('.features')) splits.add(key);
        else if (!cols.has(key)) cols.set(key, kindOfKey(key));
      }
    }
    if (new RegExp(`\\b${v}(?:\\[[^\\]\\n]*\\])?\\.(?:map|with_transform|set_transform)\\(`).test(script)) mapped = true;
  }
  if (!mapped) {
    if (IMAGE_MODEL.test(script)) cols.set('pixel_values', 'pixels');
    else {
      if (!cols.has('input_ids')) cols.set('input_ids', 'token_ids');
      if (!cols.has('attention_mask')) cols.set('attention_mask', 'token_ids');
    }
    const hasLabel = [...cols.keys()].some((k) => /^(label|labels)$/.test(k));
    if (!hasLabel) {
      if (generative) cols.set('labels', 'token_ids');
      else if (CLASSIFIER.test(script)) cols.set('label', 'label');
    }
  }
  if (cols.size === 0) cols.set('text', 'string');
  return { columns: Object.fromEntries(cols), ...(splits.size ? { splits: [...splits] } : {}) };
}

/** A relative folder a run can hold (no absolute path, no `..`). */
export function isRunRelativeFolder(path: string): boolean {
  const p = path.replace(/^\.\//, '').replace(/\/+$/, '');
  return p.length > 0 && !p.startsWith('/') && p.split('/').every((s) => s !== '' && s !== '.' && s !== '..' && /^[\w.+-]+$/.test(s));
}

/** The need of a saved dataset at `path`, with the schema the script reads. */
export function diskDatasetNeed(script: string, path: string, from: string): DatasetNeed {
  const s = diskDatasetSchema(script);
  return {
    path: path.replace(/^\.\//, '').replace(/\/+$/, ''),
    format: 'disk',
    columns: s.columns,
    ...(s.labels ? { labels: s.labels } : {}),
    ...(s.splits ? { splits: s.splits } : {}),
    from,
  };
}

/** The folder of the run's hub that holds binary data files (parquet) by their relative path. */
export const HUB_DATA_FILES_DIR = 'files';

/**
 * Run-folder links (relative path -> absolute target in the run's hub) of what the hub builds for the
 * run folder: saved datasets (`disk`) and binary data files (`parquet`), which a task's text files cannot hold.
 */
export function diskDatasetLinks(needs: readonly DatasetNeed[], hubDir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of needs) {
    if (!isRunRelativeFolder(n.path)) continue;
    if (n.format === 'disk') out[n.path] = join(hubDir, DISK_DATASET_DIR, ...n.path.split('/'));
    else if (n.format === 'parquet') out[n.path] = join(hubDir, HUB_DATA_FILES_DIR, ...n.path.split('/'));
  }
  return out;
}
