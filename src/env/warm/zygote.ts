// The warm runtime's Python side: started exactly like a cold run (same bwrap sandbox, launcher,
// rlimits, environment, run folder and uid), it imports the mode's libraries first, with its output
// sent to /dev/null, says it is ready on stdout, then waits on stdin for the run (argv, one JSON
// line) and runs the script in place as a fresh `__main__`. One zygote serves one run: it is a cold
// run started ahead of time, never shared, so isolation is the cold run's by construction
// (docs/sandbox.md, "Warm runtime"). Nothing is forked, so the fork-safety recipe (one OpenMP
// thread) is not needed: torch keeps a cold run's thread count. Real mode's RNGs are seeded like a
// cold run's (resources/shims/_forgeenv_seed.py), and seeded again just before the script. gc.freeze
// is used for speed alone (the run's collections skip the import-time heap); real mode undoes it at
// exit, simulated mode keeps it (WARM_UNFREEZE_AT_EXIT).
//
// Same outcome as `python -u train.py args`: sys.argv, sys.orig_argv, sys.path[0], `__main__` with
// `__file__`/`__loader__`, stdin /dev/null; an uncaught exception goes to `sys.excepthook` without
// the zygote's frame and exits 1; SystemExit is left to the interpreter; a SyntaxError prints as the
// interpreter prints it. What differs: the libraries are already in `sys.modules` (their import-time
// warnings were printed to /dev/null), `traceback.extract_stack()` inside the script shows one
// `<string>` frame below the script's, and atexit holds one function of the zygote's.
import { z } from 'zod';

/** First bytes on stdout once the imports are done (the host strips them; a script never sees them). */
export const READY_MARKER = '\0forgeenv-zygote ready\n';
/** What a zygote prints instead when an import failed: it then exits, and its key stays cold. */
export const FAILED_MARKER = '\0forgeenv-zygote failed ';

/** What each mode imports ahead: what the corpus and the real-world scripts import (their import time is most of a run). */
export const WARM_IMPORTS: Record<'simulated' | 'real', string[]> = {
  simulated: ['torch', 'transformers', 'datasets', 'trl', 'peft', 'accelerate', 'evaluate'],
  real: ['torch', 'transformers', 'datasets', 'trl', 'peft', 'accelerate', 'evaluate'],
};

/**
 * Names the libraries load lazily on first use (transformers and others resolve most names on
 * attribute access, which imports the submodule then: seconds each for `Trainer` or a model class).
 * Touched in the zygote after the imports, only in modules it imported; one that raises makes the
 * zygote fail closed. Real mode only: the stand-ins import eagerly.
 */
export const WARM_ATTRIBUTES: Record<'simulated' | 'real', string[]> = {
  simulated: [],
  real: [
    'transformers:AutoTokenizer',
    'transformers:AutoConfig',
    'transformers:AutoModel',
    'transformers:AutoModelForSequenceClassification',
    'transformers:AutoModelForCausalLM',
    'transformers:AutoModelForTokenClassification',
    'transformers:AutoModelForQuestionAnswering',
    'transformers:AutoModelForSeq2SeqLM',
    'transformers:Trainer',
    'transformers:TrainingArguments',
    'transformers:DataCollatorWithPadding',
    'transformers:pipeline',
    'transformers:DistilBertForSequenceClassification',
    'transformers:BertForTokenClassification',
    'transformers:GPT2LMHeadModel',
    'transformers:RobertaForSequenceClassification',
    'transformers:T5ForConditionalGeneration',
    'datasets:load_dataset',
    'peft:LoraConfig',
    'peft:get_peft_model',
    'trl:SFTTrainer',
  ],
};

/**
 * Caches the libraries fill on a script's first use, built ahead: `module:function:argument`, called
 * in the zygote after the attributes when the module is loaded and has the function (else skipped);
 * one that raises makes the zygote fail closed. Only pure bookkeeping that a cold run would build
 * identically on first use (no torch op, no file written, no RNG drawn). transformers 5's
 * checkpoint conversion table compiles ~1,000 regular expressions on the first `from_pretrained`
 * (0.3-0.7 s of every real run).
 */
export const WARM_CALLS: Record<'simulated' | 'real', string[]> = {
  simulated: [],
  real: ['transformers.conversion_mapping:get_checkpoint_conversion_mapping:bert'],
};

/**
 * Whether the zygote unfreezes the import-time heap at exit (gc.unfreeze in atexit). Real mode: yes,
 * frozen, triton's nanobind objects outlive the shutdown and print "leaked". Simulated mode: no. The
 * shutdown's collections then skip the stand-ins' heap (their recorded API data: most of a
 * warm run's time, 150-200 ms of CPU, went to collecting it at exit). What a cold run's shutdown
 * does and this one skips is finalizing import-time objects in reference cycles: the stand-ins
 * have no finalizer (no `__del__`, `weakref.finalize` or atexit function: a unit test keeps it so),
 * and the script's own objects are not frozen, so they are finalized as in a cold run.
 */
export const WARM_UNFREEZE_AT_EXIT: Record<'simulated' | 'real', boolean> = { simulated: false, real: true };

export const RunRequestSchema = z.object({ argv: z.array(z.string()).min(1) });
export type RunRequest = z.infer<typeof RunRequestSchema>;

const ZYGOTE = String.raw`import os, sys  # forgeenv-zygote
def _forgeenv_zygote(names):
    unfreeze_at_exit, names = names[0] == "unfreeze", names[1:]
    cut = names.index("--") if "--" in names else len(names)
    modules, rest = names[:cut], names[cut + 1:]
    cut = rest.index("--") if "--" in rest else len(rest)
    attributes, calls = rest[:cut], rest[cut + 1:]
    null = os.open(os.devnull, os.O_RDWR)
    out, err = os.dup(1), os.dup(2)
    os.dup2(null, 1)
    os.dup2(null, 2)
    failed = None
    from importlib.util import find_spec
    for name in modules:
        try:
            # A library the interpreter lacks is skipped: the script's own import fails as it would cold.
            if find_spec(name) is not None:
                __import__(name)
        except BaseException as e:
            failed = "%s: %s" % (name, type(e).__name__)
            break
    for item in attributes if not failed else []:
        mod, _, attr = item.partition(":")
        if mod in sys.modules:
            try:
                getattr(sys.modules[mod], attr)
            except BaseException as e:
                failed = "%s: %s" % (item, type(e).__name__)
                break
    for item in calls if not failed else []:
        mod, fn, arg = item.split(":", 2)
        f = getattr(sys.modules.get(mod), fn, None)
        if f is not None:
            try:
                f(arg)
            except BaseException as e:
                failed = "%s: %s" % (item, type(e).__name__)
                break
    # The import-time heap never becomes garbage: out of the collector's sight, every collection in
    # the run (accelerate calls gc.collect() after training: 0.75 s with torch and transformers
    # loaded) costs what the script's own objects cost.
    # Real mode: unfrozen at exit (the script's own atexit functions run first), so that the shutdown
    # collects what a cold run's collects: frozen, triton's nanobind objects outlive it and print
    # "leaked". Simulated mode: kept frozen (WARM_UNFREEZE_AT_EXIT in zygote.ts says why).
    import atexit, gc
    gc.collect()
    gc.freeze()
    if unfreeze_at_exit:
        atexit.register(gc.unfreeze)
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.close(out)
    os.close(err)
    if failed:
        os.write(1, b"\0forgeenv-zygote failed " + failed.encode("utf-8", "replace") + b"\n")
        os._exit(0)
    os.write(1, b"\0forgeenv-zygote ready\n")
    data = b""
    while not data.endswith(b"\n"):
        b = os.read(0, 65536)
        if not b:
            os._exit(0)
        data += b
    os.dup2(null, 0)
    os.close(null)
    import builtins, json, types
    from importlib.machinery import SourceFileLoader
    argv = json.loads(data.decode("utf-8"))["argv"]
    path = os.path.abspath(argv[0])
    sys.argv = list(argv)
    sys.orig_argv = [sys.orig_argv[0], "-u"] + list(argv)
    sys.path[0] = os.path.dirname(path)
    m = types.ModuleType("__main__")
    m.__dict__.update(__file__=path, __cached__=None, __builtins__=builtins, __loader__=SourceFileLoader("__main__", path), __spec__=None, __package__=None)
    sys.modules["__main__"] = m
    # Real mode seeds at start-up and as numpy and torch finish importing (resources/shims): the
    # script starts from that state here too, whatever the imports ahead did.
    if "_forgeenv_seed" in sys.modules:
        sys.modules["_forgeenv_seed"].seed_all()
    with open(path, "rb") as f:
        source = f.read()
    try:
        return compile(source, path, "exec", dont_inherit=True), m.__dict__
    except SyntaxError as e:
        # As the interpreter prints a script that does not compile: no traceback at all.
        e.__traceback__ = None
        sys.excepthook(type(e), e, None)
        sys.stderr.flush()
        os._exit(1)
_forgeenv_code, _forgeenv_globals = _forgeenv_zygote(sys.argv[1:])
del _forgeenv_zygote
try:
    exec(_forgeenv_code, _forgeenv_globals)
except SystemExit:
    raise
except BaseException as _forgeenv_e:
    # The interpreter prints the exception's own __traceback__: drop the zygote's frame from it.
    _forgeenv_e.__traceback__ = _forgeenv_e.__traceback__.tb_next
    sys.excepthook(type(_forgeenv_e), _forgeenv_e, _forgeenv_e.__traceback__)
    if isinstance(_forgeenv_e, KeyboardInterrupt):
        # The interpreter ends on SIGINT after its shutdown (threads joined, then atexit): the same here.
        import atexit, signal, threading
        threading._shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    raise SystemExit(1)
`;

/**
 * Python's argv for a zygote: `python -u -c <zygote> unfreeze|frozen <module…> -- <module:attribute…>
 * -- <module:function:argument…>` (the launcher execs it like a script).
 */
export function zygoteArgv(
  python: string,
  modules: string[],
  attributes: string[] = [],
  calls: string[] = [],
  unfreezeAtExit = true,
): string[] {
  return [python, '-u', '-c', ZYGOTE, unfreezeAtExit ? 'unfreeze' : 'frozen', ...modules, '--', ...attributes, '--', ...calls];
}

/** The one JSON line a zygote reads on stdin. */
export function encodeRequest(r: RunRequest): Buffer {
  return Buffer.from(`${JSON.stringify(RunRequestSchema.parse(r))}\n`, 'utf8');
}
