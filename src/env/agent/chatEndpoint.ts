// A model as the repair agent: one chat completion from any OpenAI-compatible endpoint (OpenAI,
// vLLM, llama.cpp's server, `transformers serve`, our offline SmolLM2 shim). The answer is remote
// input, so it is validated with zod; every request has a deadline, and failures that may pass
// (network errors, timeouts, 408/429/5xx) are retried a bounded number of times with backoff.
// The outcome always says how many requests, retries and timeouts it took.
import { z } from 'zod';
import { formatZodError } from '../schemas';

/** How the model is sampled; recorded with every attempt (`info.agent.sampling`). */
export const SamplingSchema = z.object({
  temperature: z.number().min(0).max(2),
  top_p: z.number().gt(0).max(1).optional(),
  max_tokens: z.number().int().positive().max(32_768),
  /** Sent as OpenAI's `seed` (servers that honour it make the attempt reproducible). */
  seed: z.number().int().nonnegative().optional(),
});
export type Sampling = z.infer<typeof SamplingSchema>;

/** The part of an OpenAI chat completion response we read. */
const ChatResponseSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullable().optional() }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: z.object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() }).partial().nullable().optional(),
});

export interface EndpointOptions {
  /** Base URL (`http://host:port/v1`) or the full `…/chat/completions` URL. */
  endpoint: string;
  model: string;
  /** Per request, in milliseconds. */
  timeoutMs: number;
  /** Extra tries after the first, for failures that may pass. */
  retries: number;
  apiKey?: string;
  /** Delay before retry i (0-based); default 500 ms doubling, at most 8 s. */
  backoffMs?: (retry: number) => number;
  signal?: AbortSignal;
}

export interface RequestStats {
  requests: number;
  retries: number;
  timeouts: number;
  latency_ms: number;
}

export type ChatOutcome =
  | {
      ok: true;
      text: string;
      finish_reason: string | null;
      usage?: { prompt_tokens?: number; completion_tokens?: number };
      stats: RequestStats;
    }
  | { ok: false; error: string; stats: RequestStats };

/** The chat completions URL of an endpoint, or an error message for a URL we will not call. */
export function chatCompletionsUrl(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new Error(`--endpoint "${endpoint}" is not a URL (e.g. http://127.0.0.1:8089/v1)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--endpoint must be http(s), not ${url.protocol}`);
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = /\/chat\/completions$/.test(path) ? path : `${path}/chat/completions`;
  return url.toString();
}

const RETRYABLE_STATUS = new Set([408, 409, 425, 429, 500, 502, 503, 504]);
const MAX_RESPONSE_BYTES = 8 << 20;

class AttemptError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

/** Asks the model once for (system, user), retrying what may pass. Never throws for endpoint failures. */
export async function chatComplete(opts: EndpointOptions, system: string, user: string, sampling: Sampling): Promise<ChatOutcome> {
  const url = chatCompletionsUrl(opts.endpoint);
  const backoff = opts.backoffMs ?? ((i: number) => Math.min(8000, 500 * 2 ** i));
  const body = JSON.stringify({
    model: opts.model,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    stream: false,
    ...sampling,
  });
  const stats: RequestStats = { requests: 0, retries: 0, timeouts: 0, latency_ms: 0 };
  const started = Date.now();
  let lastError = 'no request was made';
  for (let attempt = 0; attempt <= opts.retries; attempt++) {
    if (opts.signal?.aborted) return { ok: false, error: 'cancelled', stats: { ...stats, latency_ms: Date.now() - started } };
    if (attempt > 0) {
      stats.retries++;
      await sleep(backoff(attempt - 1), opts.signal);
    }
    stats.requests++;
    try {
      const r = await requestOnce(url, body, opts);
      return { ok: true, ...r, stats: { ...stats, latency_ms: Date.now() - started } };
    } catch (e) {
      const err = e instanceof AttemptError ? e : new AttemptError(String(e), false);
      if (err.timedOut) stats.timeouts++;
      lastError = err.message;
      if (!err.retryable) break;
    }
  }
  const tries = stats.requests === 1 ? '1 request' : `${stats.requests} requests`;
  return { ok: false, error: `${lastError} (${tries})`, stats: { ...stats, latency_ms: Date.now() - started } };
}

async function requestOnce(
  url: string,
  body: string,
  opts: EndpointOptions,
): Promise<{ text: string; finish_reason: string | null; usage?: { prompt_tokens?: number; completion_tokens?: number } }> {
  const deadline = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([deadline, opts.signal]) : deadline;
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}) },
      body,
      signal,
    });
    text = await readCapped(res);
  } catch (e) {
    if (deadline.aborted) throw new AttemptError(`the endpoint did not answer within ${Math.round(opts.timeoutMs / 1000)} s`, true, true);
    if (opts.signal?.aborted) throw new AttemptError('cancelled', false);
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new AttemptError(`the endpoint could not be reached: ${cause?.code ?? cause?.message ?? (e as Error).message}`, true);
  }
  if (!res.ok) {
    const detail = text.slice(0, 300).replace(/\s+/g, ' ').trim();
    throw new AttemptError(`the endpoint answered HTTP ${res.status}${detail ? `: ${detail}` : ''}`, RETRYABLE_STATUS.has(res.status));
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AttemptError(`the endpoint's answer is not JSON: ${text.slice(0, 120)}`, false);
  }
  const parsed = ChatResponseSchema.safeParse(json);
  if (!parsed.success)
    throw new AttemptError(`the endpoint's answer is not an OpenAI chat completion: ${formatZodError(parsed.error)}`, false);
  const choice = parsed.data.choices[0];
  return {
    text: choice.message.content ?? '',
    finish_reason: choice.finish_reason ?? null,
    ...(parsed.data.usage ? { usage: parsed.data.usage } : {}),
  };
}

/** The body as text, refusing more than MAX_RESPONSE_BYTES (a runaway server cannot fill memory). */
async function readCapped(res: Response): Promise<string> {
  if (!res.body) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_RESPONSE_BYTES) throw new AttemptError(`the endpoint's answer is over ${MAX_RESPONSE_BYTES} bytes`, false);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
