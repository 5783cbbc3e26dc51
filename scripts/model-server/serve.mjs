#!/usr/bin/env node
// The offline model behind an OpenAI-compatible chat endpoint: a small shim over node-llama-cpp
// (installed by scripts/setup-model.sh, outside the extension's dependencies) serving
// POST /v1/chat/completions, GET /v1/models and GET /health on loopback. One request generates at
// a time (a 135M model on a shared 2-core machine gains nothing from parallel decoding); the others
// wait in order. Each request starts from an empty context: no state leaks between requests.
//
//   node scripts/model-server/serve.mjs [--port 8089] [--host 127.0.0.1] [--model FILE.gguf]
//        [--threads 1] [--context 8192] [--max-tokens 2048]
// Prints `listening on http://HOST:PORT` once the model is loaded (--port 0 picks a free port).
import { createServer } from 'node:http';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';

const cache = process.env.FORGEENV_CACHE_DIR || join(homedir(), '.cache', 'forgeenv');
const { values } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.FORGEENV_MODEL_PORT || '8089' },
    host: { type: 'string', default: '127.0.0.1' },
    model: { type: 'string', default: join(cache, 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf') },
    name: { type: 'string', default: 'smollm2-135m-instruct' },
    runtime: { type: 'string', default: join(cache, 'model-server') },
    // One thread: with two, llama.cpp's threads spin-wait for each other and stall for minutes when
    // the cores are busy with other work (measured here under load), while one thread is ~100 tokens/s.
    threads: { type: 'string', default: process.env.FORGEENV_MODEL_THREADS || '1' },
    context: { type: 'string', default: '8192' },
    'max-tokens': { type: 'string', default: '2048' },
  },
});

function fail(message) {
  process.stderr.write(`model-server: ${message}\n`);
  process.exit(1);
}
const positiveInt = (name) => {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < (name === 'port' ? 0 : 1))
    fail(`--${name} must be a ${name === 'port' ? 'non-negative' : 'positive'} integer, not "${values[name]}"`);
  return n;
};
const port = positiveInt('port');
const threads = positiveInt('threads');
const contextSize = positiveInt('context');
const maxTokensCap = positiveInt('max-tokens');
const runtimeEntry = join(values.runtime, 'node_modules', 'node-llama-cpp', 'dist', 'index.js');
if (!existsSync(runtimeEntry)) fail(`node-llama-cpp is not installed in ${values.runtime}: run bash scripts/setup-model.sh`);
if (!existsSync(values.model)) fail(`no model file at ${values.model}: run bash scripts/setup-model.sh`);

const { getLlama, LlamaChat, LlamaLogLevel } = await import(pathToFileURL(runtimeEntry).href);

/** The part of OpenAI's chat completion request this server honours; anything else is ignored. */
const ChatRequestSchema = z.object({
  model: z.string().optional(),
  messages: z
    .array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() }))
    .min(1)
    .refine((m) => m.length > 0 && m[m.length - 1].role === 'user', "the last message must be the user's"),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().gt(0).max(1).optional(),
  max_tokens: z.number().int().positive().optional(),
  max_completion_tokens: z.number().int().positive().optional(),
  seed: z.number().int().optional(),
  n: z.literal(1).optional(),
  stream: z.literal(false).optional(),
});

const MAX_BODY_BYTES = 1 << 20;

const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error, progressLogs: false });
const model = await llama.loadModel({ modelPath: values.model });
const context = await model.createContext({ contextSize, threads, sequences: 1 });

/** Chains generations so exactly one runs at a time. */
let queue = Promise.resolve();
function serialized(fn) {
  const run = queue.then(fn, fn);
  queue = run.catch(() => undefined);
  return run;
}

async function complete(req) {
  const history = req.messages.map((m) =>
    m.role === 'system'
      ? { type: 'system', text: m.content }
      : m.role === 'user'
        ? { type: 'user', text: m.content }
        : { type: 'model', response: [m.content] },
  );
  const promptTokens = req.messages.reduce((n, m) => n + model.tokenize(m.content).length, 0);
  if (promptTokens >= contextSize) {
    const e = new Error(`the prompt has ${promptTokens} tokens, over this server's context of ${contextSize} (--context)`);
    e.status = 400;
    throw e;
  }
  const sequence = context.getSequence();
  const chat = new LlamaChat({ contextSequence: sequence });
  try {
    const maxTokens = Math.min(req.max_completion_tokens ?? req.max_tokens ?? 1024, maxTokensCap);
    const res = await chat.generateResponse(history, {
      maxTokens,
      temperature: req.temperature ?? 0.7,
      ...(req.top_p !== undefined ? { topP: req.top_p } : {}),
      ...(req.seed !== undefined ? { seed: req.seed } : {}),
    });
    const completionTokens = model.tokenize(res.response).length;
    const finish = res.metadata?.stopReason === 'maxTokens' ? 'length' : 'stop';
    return { text: res.response, finish, promptTokens, completionTokens };
  } finally {
    chat.dispose();
    sequence.dispose();
  }
}

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
const errorBody = (message, type = 'invalid_request_error') => ({ error: { message, type } });

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(Object.assign(new Error(`request body over ${MAX_BODY_BYTES} bytes`), { status: 413 }));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const server = createServer(async (req, res) => {
  try {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '');
    if (req.method === 'GET' && path === '/health') return send(res, 200, { status: 'ok' });
    if (req.method === 'GET' && path === '/v1/models') {
      return send(res, 200, { object: 'list', data: [{ id: values.name, object: 'model', created: 0, owned_by: 'forgeenv' }] });
    }
    if (path !== '/v1/chat/completions') return send(res, 404, errorBody(`no route ${req.method} ${path}`, 'not_found'));
    if (req.method !== 'POST') return send(res, 405, errorBody('use POST'));
    let json;
    try {
      json = JSON.parse(await readBody(req));
    } catch (e) {
      return send(res, e.status ?? 400, errorBody(e.status ? e.message : `the body is not JSON: ${e.message}`));
    }
    const parsed = ChatRequestSchema.safeParse(json);
    if (!parsed.success)
      return send(res, 400, errorBody(parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')));
    const out = await serialized(() => complete(parsed.data));
    send(res, 200, {
      id: `chatcmpl-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: values.name,
      choices: [{ index: 0, message: { role: 'assistant', content: out.text }, finish_reason: out.finish }],
      usage: {
        prompt_tokens: out.promptTokens,
        completion_tokens: out.completionTokens,
        total_tokens: out.promptTokens + out.completionTokens,
      },
    });
  } catch (e) {
    if (!res.headersSent)
      send(res, e.status ?? 500, errorBody(e.message ?? String(e), e.status ? 'invalid_request_error' : 'server_error'));
  }
});

async function shutdown() {
  server.close();
  await context.dispose().catch(() => undefined);
  await model.dispose().catch(() => undefined);
  await llama.dispose().catch(() => undefined);
  process.exit(0);
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

server.listen(port, values.host, () => {
  const addr = server.address();
  process.stdout.write(
    `listening on http://${values.host}:${addr.port} (model ${values.name}, ${threads} thread(s), context ${contextSize})\n`,
  );
});
