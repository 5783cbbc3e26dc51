// ChangeTokenizerBehavior: tokenizer calls go back to a convention another transformers version
// used. Three behaviours, each a real drift:
// - as_target_tokenizer: `labels = tok(text_target=t, ...)` becomes
//   `with tok.as_target_tokenizer():` + `labels = tok(t, ...)` (the pre-4.21 idiom; removed ≥ 4.45);
// - pad_to_max_length: `padding="max_length"` becomes `pad_to_max_length=True` (ignored ≥ 4.45);
// - is_pretokenized: `is_split_into_words=` becomes `is_pretokenized=` (renamed in transformers 3/4).
// RestoreTokenizerBehavior is the exact inverse of each.
import type { SyntaxNode } from '@lezer/common';
import { z } from 'zod';
import type { TextEdit } from '../python/edits';
import { endsLine, indentationAt, startsLine } from '../python/lines';
import { readStringLiteral } from '../python/strings';
import type { CallSite } from '../python/scriptIndex';
import { definePrimitive, driftProposals, refuse, type Plan, type ScriptContext } from './engine';
import { keywordArg, lastSegment, lineOf, receiverOf } from './queries';

export const TOKENIZER_BEHAVIORS = ['as_target_tokenizer', 'pad_to_max_length', 'is_pretokenized'] as const;
const Behavior = z.enum(TOKENIZER_BEHAVIORS);

export const TokenizerBehaviorParamsSchema = z
  .object({
    behavior: Behavior.describe(
      'as_target_tokenizer: text_target= → `with tokenizer.as_target_tokenizer():`; pad_to_max_length: padding="max_length" → pad_to_max_length=True; is_pretokenized: is_split_into_words= → is_pretokenized=.',
    ),
  })
  .strict();
export type TokenizerBehaviorParams = z.infer<typeof TokenizerBehaviorParamsSchema>;

export const RestoreTokenizerParamsSchema = z
  .object({
    behavior: Behavior.describe('The behaviour ChangeTokenizerBehavior applied.'),
    quote: z.enum(['"', "'"]).optional().describe('pad_to_max_length: the quote style of the restored "max_length" (default ").'),
  })
  .strict();
export type RestoreTokenizerParams = z.infer<typeof RestoreTokenizerParamsSchema>;

const TOKENIZER_METHODS = new Set(['encode', 'encode_plus', 'batch_encode_plus', 'pad', 'prepare_seq2seq_batch', '__call__']);

/** Chains bound to a tokenizer: assigned from a `*Tokenizer*` call, or named like one. */
function tokenizerChains(ctx: ScriptContext): Set<string> {
  const out = new Set<string>();
  for (const a of ctx.index.assignments) if (a.call?.callee && /Tokenizer/.test(a.call.callee)) out.add(a.target);
  return out;
}

const looksLikeTokenizer = (chain: string, known: Set<string>) =>
  known.has(chain) || /^(tokenizer|tok)$|_tokenizer$/i.test(lastSegment(chain));

export function tokenizerCalls(ctx: ScriptContext): CallSite[] {
  const known = tokenizerChains(ctx);
  return ctx.index.calls.filter((c) => {
    if (!c.callee) return false;
    if (looksLikeTokenizer(c.callee, known)) return true;
    const receiver = receiverOf(c);
    return receiver !== null && TOKENIZER_METHODS.has(c.method!.name) && looksLikeTokenizer(receiver, known);
  });
}

// --- keyword behaviours -------------------------------------------------------------------------

function planPadForward(ctx: ScriptContext): Plan {
  const calls = tokenizerCalls(ctx);
  const edits: TextEdit[] = [];
  const quotes = new Set<string>();
  for (const c of calls) {
    if (keywordArg(c, 'pad_to_max_length'))
      refuse(NAME, `the tokenizer call on line ${lineOf(ctx.script, c.from)} already passes pad_to_max_length=`);
    const a = keywordArg(c, 'padding');
    const lit = a && readStringLiteral(ctx.script, a.valueFrom, a.valueTo);
    if (!a || !lit || !lit.plain || lit.prefix || lit.quote.length !== 1 || lit.raw !== 'max_length') continue;
    quotes.add(lit.quote);
    edits.push({ from: a.from, to: a.to, insert: 'pad_to_max_length=True' });
  }
  if (edits.length === 0) refuse(NAME, 'no tokenizer call passes padding="max_length"');
  if (quotes.size > 1) refuse(NAME, 'the padding="max_length" arguments mix quote styles, so they could not be restored exactly');
  const quote = [...quotes][0];
  return {
    edits,
    inverse: {
      primitive_type: RESTORE,
      params: quote === '"' ? { behavior: 'pad_to_max_length' } : { behavior: 'pad_to_max_length', quote },
    },
  };
}

function planPadRestore(ctx: ScriptContext, quote: string): Plan {
  const edits: TextEdit[] = [];
  for (const c of tokenizerCalls(ctx)) {
    const a = keywordArg(c, 'pad_to_max_length');
    if (!a || ctx.script.slice(a.valueFrom, a.valueTo) !== 'True') continue;
    if (keywordArg(c, 'padding'))
      refuse(RESTORE, `the tokenizer call on line ${lineOf(ctx.script, c.from)} passes both padding= and pad_to_max_length=`);
    edits.push({ from: a.from, to: a.to, insert: `padding=${quote}max_length${quote}` });
  }
  if (edits.length === 0) refuse(RESTORE, 'no tokenizer call passes pad_to_max_length=True');
  return { edits, inverse: { primitive_type: NAME, params: { behavior: 'pad_to_max_length' } } };
}

function planKeywordRename(primitive: string, ctx: ScriptContext, from: string, to: string, inverse: string): Plan {
  const edits: TextEdit[] = [];
  for (const c of tokenizerCalls(ctx)) {
    if (keywordArg(c, to)) refuse(primitive, `the tokenizer call on line ${lineOf(ctx.script, c.from)} already passes ${to}=`);
    const a = keywordArg(c, from);
    if (a) edits.push({ from: a.nameFrom!, to: a.nameTo!, insert: to });
  }
  if (edits.length === 0) refuse(primitive, `no tokenizer call passes ${from}=`);
  return { edits, inverse: { primitive_type: inverse, params: { behavior: 'is_pretokenized' } } };
}

// --- as_target_tokenizer ------------------------------------------------------------------------

const SIMPLE_STATEMENTS = new Set(['AssignStatement', 'ExpressionStatement', 'ReturnStatement']);

function enclosingStatement(node: SyntaxNode): SyntaxNode | null {
  for (let n: SyntaxNode | null = node.parent; n; n = n.parent) if (n.type.is('Statement')) return n;
  return null;
}

/** The file's indentation step (the first block's), default four spaces. */
function indentUnit(ctx: ScriptContext): string {
  let unit: string | undefined;
  ctx.parsed.tree.iterate({
    enter(ref) {
      if (unit !== undefined) return false;
      if (ref.name !== 'Body') return true;
      for (let c = ref.node.firstChild; c; c = c.nextSibling) {
        if (!c.type.is('Statement')) continue;
        if (!startsLine(ctx.script, c.from)) break;
        const inner = indentationAt(ctx.script, c.from);
        const outer = indentationAt(ctx.script, ref.node.parent?.from ?? 0);
        if (inner.startsWith(outer) && inner.length > outer.length) unit = inner.slice(outer.length);
        break;
      }
      return true;
    },
  });
  return unit ?? '    ';
}

/** Offsets where the statement's second and later non-empty lines start. */
function continuationLineStarts(source: string, stmt: { from: number; to: number }): number[] {
  const out: number[] = [];
  for (let i = source.indexOf('\n', stmt.from); i !== -1 && i + 1 < stmt.to; i = source.indexOf('\n', i + 1)) {
    if (source[i + 1] !== '\n' && source[i + 1] !== '\r') out.push(i + 1);
  }
  return out;
}

function hasMultilineString(ctx: ScriptContext, stmt: { from: number; to: number }): boolean {
  return ctx.index.strings.some((s) => s.from >= stmt.from && s.to <= stmt.to && ctx.script.slice(s.from, s.to).includes('\n'));
}

function planTargetForward(ctx: ScriptContext): Plan {
  const { script, index } = ctx;
  if (index.namesByText.has('as_target_tokenizer'))
    refuse(NAME, 'the script already uses as_target_tokenizer(), so the change could not be undone exactly');
  const sites = index.calls.filter((c) => keywordArg(c, 'text_target'));
  if (sites.length === 0) refuse(NAME, 'no call passes text_target=');
  const unit = indentUnit(ctx);
  const edits: TextEdit[] = [];
  const used = new Set<number>();
  let reason = '';
  for (const c of sites) {
    const line = lineOf(script, c.from);
    const arg = keywordArg(c, 'text_target')!;
    const stmt = enclosingStatement(c.node);
    if (!c.callee || c.method) reason ||= `line ${line}: the tokenizer is not called directly (tokenizer(text_target=...))`;
    else if (c.args[0] !== arg || c.args.some((a) => a.kind === 'positional' || a.kind === 'star'))
      reason ||= `line ${line}: text_target= is combined with input texts; only a call whose text is text_target alone can move into as_target_tokenizer()`;
    else if (!stmt || !SIMPLE_STATEMENTS.has(stmt.name) || !['Script', 'Body'].includes(stmt.parent?.name ?? ''))
      reason ||= `line ${line}: the call is not a statement of its own`;
    else if (!startsLine(script, stmt.from) || !endsLine(script, stmt.to)) reason ||= `line ${line}: the statement shares its line`;
    else if (used.has(stmt.from)) reason ||= `line ${line}: two text_target= calls in one statement`;
    else if (hasMultilineString(ctx, stmt)) reason ||= `line ${line}: the statement contains a multi-line string`;
    else {
      used.add(stmt.from);
      const indent = indentationAt(script, stmt.from);
      edits.push({ from: stmt.from, to: stmt.from, insert: `with ${c.callee}.as_target_tokenizer():\n${indent}${unit}` });
      for (const ls of continuationLineStarts(script, stmt)) edits.push({ from: ls, to: ls, insert: unit });
      edits.push({ from: arg.nameFrom!, to: arg.valueFrom, insert: '' });
    }
  }
  if (edits.length === 0) refuse(NAME, reason);
  return { edits, inverse: { primitive_type: RESTORE, params: { behavior: 'as_target_tokenizer' } } };
}

function planTargetRestore(ctx: ScriptContext): Plan {
  const { script, index } = ctx;
  const opens = index.calls.filter(
    (c) => c.method?.name === 'as_target_tokenizer' && c.args.length === 0 && c.node.parent?.name === 'WithStatement',
  );
  if (opens.length === 0) refuse(RESTORE, 'there is no `with <tokenizer>.as_target_tokenizer():` block');
  const edits: TextEdit[] = [];
  for (const open of opens) {
    const withNode = open.node.parent!;
    const line = lineOf(script, withNode.from);
    const body = withNode.lastChild;
    const items = [];
    for (let c = withNode.firstChild; c; c = c.nextSibling)
      if (c.name !== 'with' && c.name !== 'Body' && c.name !== 'Comment') items.push(c);
    const stmts: SyntaxNode[] = [];
    for (let c = body?.firstChild ?? null; c; c = c.nextSibling) if (c.type.is('Statement')) stmts.push(c);
    const stmt = stmts[0];
    const receiver = receiverOf(open);
    if (!body || body.name !== 'Body' || items.length !== 1 || stmts.length !== 1 || !stmt || !receiver)
      refuse(RESTORE, `line ${line}: the with block must hold exactly one statement`);
    if (!startsLine(script, withNode.from) || !/^:[ \t]*\n[ \t]*$/.test(script.slice(open.to, stmt.from)))
      refuse(RESTORE, `line ${line}: the with block is not laid out as \`with ...:\` + one indented line`);
    const indent = indentationAt(script, withNode.from);
    const inner = indentationAt(script, stmt.from);
    if (!inner.startsWith(indent) || inner.length <= indent.length) refuse(RESTORE, `line ${line}: the with block's body is not indented`);
    const unit = inner.slice(indent.length);
    const targets = index.calls.filter((c) => c.from >= stmt.from && c.to <= stmt.to && c.callee === receiver);
    if (targets.length !== 1)
      refuse(RESTORE, `line ${line}: expected one call of ${receiver}(...) inside the with block, found ${targets.length}`);
    const target = targets[0];
    const first = target.args[0];
    if (
      !first ||
      first.kind !== 'positional' ||
      target.args.filter((a) => a.kind === 'positional').length !== 1 ||
      keywordArg(target, 'text_target')
    ) {
      refuse(RESTORE, `line ${line}: ${receiver}(...) inside the with block must take exactly one positional text`);
    }
    edits.push({ from: withNode.from, to: stmt.from, insert: '' });
    for (const ls of continuationLineStarts(script, stmt)) {
      if (!script.startsWith(unit, ls))
        refuse(RESTORE, `line ${lineOf(script, ls)}: a continuation line is not indented by the block's step`);
      edits.push({ from: ls, to: ls + unit.length, insert: '' });
    }
    edits.push({ from: first.from, to: first.from, insert: 'text_target=' });
  }
  return { edits, inverse: { primitive_type: NAME, params: { behavior: 'as_target_tokenizer' } } };
}

const NAME = 'ChangeTokenizerBehavior';
const RESTORE = 'RestoreTokenizerBehavior';

export const ChangeTokenizerBehavior = definePrimitive<TokenizerBehaviorParams>({
  name: NAME,
  category: 'tokenizer_drift',
  kind: 'breakage',
  description:
    'Makes tokenizer calls use a convention of another transformers version (as_target_tokenizer, pad_to_max_length, is_pretokenized).',
  models:
    'tokenizer.as_target_tokenizer() → text_target= (removed ≥ 4.45); pad_to_max_length=True → padding="max_length"; is_pretokenized → is_split_into_words',
  paramsSchema: TokenizerBehaviorParamsSchema,
  label: (p) =>
    ({
      as_target_tokenizer: 'tokenize labels inside `with tokenizer.as_target_tokenizer():` instead of text_target=',
      pad_to_max_length: 'padding="max_length" → pad_to_max_length=True',
      is_pretokenized: 'is_split_into_words= → is_pretokenized=',
    })[p.behavior],
  plan(ctx, p) {
    if (p.behavior === 'as_target_tokenizer') return planTargetForward(ctx);
    if (p.behavior === 'pad_to_max_length') return planPadForward(ctx);
    return planKeywordRename(NAME, ctx, 'is_split_into_words', 'is_pretokenized', RESTORE);
  },
  propose: (_ctx, versions) => driftProposals(NAME, versions),
});

export const RestoreTokenizerBehavior = definePrimitive<RestoreTokenizerParams>({
  name: RESTORE,
  category: 'tokenizer_drift',
  kind: 'inverse',
  description: 'Undoes ChangeTokenizerBehavior: back to text_target=, padding="max_length" or is_split_into_words=.',
  models: 'the repair of an outdated tokenizer convention, e.g. as_target_tokenizer() → text_target=',
  paramsSchema: RestoreTokenizerParamsSchema,
  label: (p) => `restore the current tokenizer convention (${p.behavior})`,
  plan(ctx, p) {
    if (p.behavior === 'as_target_tokenizer') return planTargetRestore(ctx);
    if (p.behavior === 'pad_to_max_length') return planPadRestore(ctx, p.quote ?? '"');
    return planKeywordRename(RESTORE, ctx, 'is_pretokenized', 'is_split_into_words', NAME);
  },
  propose: (_ctx, versions) => driftProposals<TokenizerBehaviorParams>(NAME, versions),
});
