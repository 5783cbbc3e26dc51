// make-task's side of src/env/hub: what models and datasets a candidate run needs (derived from the
// script with the args as they are now, so every adaptation re-derives them), plus ids a run's
// error named that the derivation missed; and, from an error, which id was missing offline.
import { deriveHubNeeds, kindOf, looksLikeModelId, type DatasetNeed, type HubFileNeed, type HubNeeds, type ModelNeed } from '../hub/needs';
import type { HubRefusal } from '../hub/ensure';
import { isBaseHubModel } from '../hub/modelTable';
import { hubFileId, sameHubFile } from '../hub/hubFiles';

export const EMPTY_HUB_NEEDS: HubNeeds = { models: [], datasets: [] };

const union = (a: readonly string[] | undefined, b: readonly string[]): string[] => [...new Set([...(a ?? []), ...b])].slice(0, 8);

/** What the hub did for the last run: the needs asked for, what it refused (with its reasons). */
export interface HubRunState {
  needs: HubNeeds;
  refusals: HubRefusal[];
}

/** The needs of a run: derived from the script, args and files, plus `extra` (ids errors named). Base-hub models are left out (the base hub has them). */
export function candidateHubNeeds(
  script: string,
  args: readonly string[],
  files: Readonly<Record<string, string>>,
  extra: HubNeeds = EMPTY_HUB_NEEDS,
): HubNeeds {
  const derived = deriveHubNeeds(script, args, files);
  const models: ModelNeed[] = [];
  for (const m of [...derived.models, ...extra.models]) {
    if (isBaseHubModel(m.id)) continue;
    const same = models.findIndex((x) => x.id === m.id);
    // What an error taught (an adapter, an architecture) wins over the id as derived.
    if (same < 0) models.push(m);
    else if (m.adapter_of || m.architecture) models[same] = { ...models[same], ...m };
  }
  const datasets: DatasetNeed[] = [...derived.datasets];
  for (const d of extra.datasets) {
    const same = datasets.findIndex((x) => x.path === d.path && x.config === d.config);
    if (same >= 0) {
      // Columns a run's KeyError asked for, on top of the derived schema.
      if (d.columns) datasets[same] = { ...datasets[same], columns: { ...datasets[same].columns, ...d.columns } };
      // Splits a run's KeyError on a DatasetDict asked for.
      if (d.splits) datasets[same] = { ...datasets[same], splits: union(datasets[same].splits, d.splits) };
      continue;
    }
    // An id an error named: the schema the script needs, as if the script loaded it by name.
    const like = d.columns
      ? undefined
      : deriveHubNeeds(`${script}\nload_dataset(${JSON.stringify(d.path)})\n`, args, files).datasets.find((x) => x.path === d.path);
    datasets.push(like ? { ...like, from: d.from, ...(d.splits ? { splits: union(like.splits, d.splits) } : {}) } : d);
  }
  const metrics = [...new Set([...(derived.metrics ?? []), ...(extra.metrics ?? [])])];
  const hubFiles = extra.files ?? [];
  return { models, datasets, ...(metrics.length ? { metrics } : {}), ...(hubFiles.length ? { files: hubFiles } : {}) };
}

/** The needs minus what the hub refused: what a task can declare (`hub`, strict) and still run. */
export function providedNeeds(state: HubRunState): HubNeeds {
  const refused = (kind: HubRefusal['kind'], id: string) =>
    state.refusals.some((r) => r.kind === kind && (r.id === id || r.id.startsWith(`${id}/`)));
  const metrics = (state.needs.metrics ?? []).filter((m) => !refused('metric', m));
  const files = (state.needs.files ?? []).filter((f) => !refused('file', hubFileId(f)));
  return {
    models: state.needs.models.filter((m) => !refused('model', m.id)),
    datasets: state.needs.datasets.filter((d) => !refused('dataset', d.path)),
    ...(metrics.length ? { metrics } : {}),
    ...(files.length ? { files } : {}),
  };
}

export interface MissingHubItem {
  kind: 'model' | 'dataset';
  id: string;
}

// Error texts of transformers/huggingface_hub/datasets across eras that name the id missing offline.
const MODEL_PATTERNS: readonly RegExp[] = [
  /(?:Incorrect path_or_model_id:|Can't load (?:tokenizer|the model|config|the configuration) for) '([^']+)'/,
  /it looks like (\S+?) is not the path to a directory/,
  /(?:^|[\s'])([A-Za-z0-9][\w.-]*(?:\/[\w.-]+)?)'? is not a local folder and is not a valid model identifier/,
  /huggingface\.co\/([A-Za-z0-9][\w.-]*\/[\w.-]+)\/resolve\//,
  /OSError: ([A-Za-z0-9][\w.-]*\/[\w.-]+) does not appear to have a file named/,
];
const DATASET_PATTERNS: readonly RegExp[] = [
  /Dataset '([^']+)' doesn't exist on the Hub/,
  /Couldn't find (?:a dataset script at [^\n]*? or any data file in the same directory\. Couldn't find )?'([^']+)' on the Hugging Face Hub/,
  /Couldn't reach '([^']+)' on the Hub/,
  /huggingface\.co\/(?:api\/)?datasets\/([A-Za-z0-9][\w.-]*(?:\/[\w.-]+)?)/,
  /DatasetNotFoundError: [^\n]*?'([^']+)'/,
];

/** The model or dataset id a run's error says is missing offline; undefined when it names none. */
export function missingHubItem(errorText: string): MissingHubItem | undefined {
  for (const p of DATASET_PATTERNS) {
    const m = p.exec(errorText);
    if (m?.[1]) return { kind: 'dataset', id: m[1] };
  }
  for (const p of MODEL_PATTERNS) {
    const m = p.exec(errorText);
    if (m?.[1] && looksLikeModelId(m[1])) return { kind: 'model', id: m[1] };
  }
  return undefined;
}

/** Whether the needs already ask for the item. */
export function needsHave(needs: HubNeeds, item: MissingHubItem): boolean {
  return item.kind === 'model'
    ? needs.models.some((m) => m.id === item.id)
    : needs.datasets.some((d) => d.path === item.id || `${d.path}/${d.config ?? ''}` === item.id);
}

/** `extra` with the item added (provenance: the error). */
export function withItem(extra: HubNeeds, item: MissingHubItem): HubNeeds {
  return item.kind === 'model'
    ? { ...extra, models: [...extra.models, { id: item.id, from: 'named by a run error' }] }
    : { ...extra, datasets: [...extra.datasets, { path: item.id, from: 'named by a run error' }] };
}

/** `extra` with the metric added (a run's error named it: a name the derivation could not resolve). */
export function withMetric(extra: HubNeeds, name: string): HubNeeds {
  return { ...extra, metrics: [...new Set([...(extra.metrics ?? []), name])] };
}

/** `extra` with the hub files added (a run fetched their URLs), each once. */
export function withFiles(extra: HubNeeds, files: readonly HubFileNeed[]): HubNeeds {
  const out = [...(extra.files ?? [])];
  for (const f of files) if (!out.some((x) => sameHubFile(x, f))) out.push(f);
  return { ...extra, files: out };
}

/** `extra` with column `col` added to each of `datasets` (provenance: the KeyError). */
export function withColumn(extra: HubNeeds, datasets: readonly DatasetNeed[], col: string): HubNeeds {
  const out = extra.datasets.map((d) => ({ ...d }));
  for (const d of datasets) {
    const at = out.find((x) => x.path === d.path && x.config === d.config);
    if (at) at.columns = { ...d.columns, ...at.columns, [col]: kindOf(col) };
    else
      out.push({
        path: d.path,
        ...(d.config ? { config: d.config } : {}),
        ...(d.format ? { format: d.format } : {}),
        columns: { ...d.columns, [col]: kindOf(col) },
        // Nested columns keep their structure (nestedShapes.ts).
        ...(d.shapes ? { shapes: d.shapes } : {}),
        from: 'a column a run asked for',
      });
  }
  return { ...extra, datasets: out };
}

/** `extra` with split `split` added to each of `datasets` (provenance: a KeyError on a DatasetDict). */
export function withSplit(extra: HubNeeds, datasets: readonly DatasetNeed[], split: string): HubNeeds {
  const out = extra.datasets.map((d) => ({ ...d }));
  for (const d of datasets) {
    const at = out.find((x) => x.path === d.path && x.config === d.config);
    if (at) at.splits = union(union(d.splits, at.splits ?? []), [split]);
    else
      out.push({
        path: d.path,
        ...(d.config ? { config: d.config } : {}),
        ...(d.format ? { format: d.format } : {}),
        splits: union(d.splits, [split]),
        from: 'a split a run asked for',
      });
  }
  return { ...extra, datasets: out };
}
