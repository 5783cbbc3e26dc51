// Files of hub repos that a script fetches by URL rather than through the HF libraries: an example image
// handed to a processor (`processor(["https://huggingface.co/datasets/<repo>/resolve/main/cat.png", ...])`),
// a `requests.get` of a repo's file. The offline hub can hold such a file (a synthetic one of the kind its
// extension names, in the repo's hub cache), and the offline-hub-files shim answers the URL from it. Any
// other URL stays a download an offline run cannot make (the network-download refusal).
import { HubFileNeedSchema, type HubFileNeed } from './needs';

// https://huggingface.co/[datasets/|spaces/]<org>/<name>/resolve/<revision>/<path>[?query]
const HUB_FILE_URL =
  /https?:\/\/(?:www\.)?huggingface\.co\/(?:(datasets|spaces)\/)?([A-Za-z0-9][\w.-]*\/[\w.-]+|[A-Za-z0-9][\w.-]*)\/resolve\/([\w.-]+)\/([\w.+\-/%]+?)(?=$|[?#"'\s)\]])/g;

/** The kinds of synthetic file the hub writes, by extension. */
export type HubFileKind = 'image' | 'audio' | 'text';
const KIND_BY_EXTENSION: Readonly<Record<string, HubFileKind>> = {
  png: 'image',
  jpg: 'image',
  jpeg: 'image',
  gif: 'image',
  bmp: 'image',
  webp: 'image',
  wav: 'audio',
  txt: 'text',
  json: 'text',
  jsonl: 'text',
  csv: 'text',
  md: 'text',
};

/** The synthetic kind of a hub file by its extension; undefined when the hub has no writer for it. */
export function hubFileKind(path: string): HubFileKind | undefined {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  return ext ? KIND_BY_EXTENSION[ext] : undefined;
}

/** The hub file a URL names, or undefined when it is not a hub file URL (or names an unsafe path). */
export function parseHubFileUrl(url: string, from?: string): HubFileNeed | undefined {
  return hubFileUrls(url, from)[0];
}

/** Every hub file URL in `text` (an error, a script), each once. */
export function hubFileUrls(text: string, from?: string): HubFileNeed[] {
  const out: HubFileNeed[] = [];
  for (const m of text.matchAll(HUB_FILE_URL)) {
    let path: string;
    try {
      path = decodeURIComponent(m[4]);
    } catch {
      continue;
    }
    const repo_type = m[1] === 'datasets' ? 'dataset' : m[1] === 'spaces' ? 'space' : 'model';
    const parsed = HubFileNeedSchema.safeParse({ repo_type, repo: m[2], revision: m[3], path, ...(from ? { from } : {}) });
    if (!parsed.success) continue;
    const n = parsed.data;
    if (!out.some((x) => sameHubFile(x, n))) out.push(n);
  }
  return out;
}

export const sameHubFile = (a: HubFileNeed, b: HubFileNeed): boolean =>
  a.repo_type === b.repo_type && a.repo === b.repo && a.revision === b.revision && a.path === b.path;

/** How the item is named in progress lines and refusals: the URL's tail. */
export const hubFileId = (f: HubFileNeed): string =>
  `${f.repo_type === 'model' ? '' : `${f.repo_type}s/`}${f.repo}/resolve/${f.revision}/${f.path}`;
