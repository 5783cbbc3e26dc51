// The warm runtime's Python side: started exactly like a cold run (same bwrap sandbox, launcher,
// rlimits, environment, run folder and uid), it imports the mode's libraries first, with its output
// sent to /dev/null, says it is ready on stdout, then waits on stdin for the run (argv, one JSON
// line) and runs the script in place as `__main__`. One zygote serves one run: it is a cold
// run started ahead of time, never shared, so isolation is the cold run's by construction
// (docs/sandbox.md, "Warm runtime"). Nothing is forked, so the fork-safety recipe (one OpenMP
// thread) is not needed: torch keeps a cold run's thread count. Real mode's RNGs are seeded like a
// cold run's (resources/shims/_forgeenv_seed.py), and seeded again just before the script. gc.freeze
// is used for speed alone (the run's collections skip the import-time heap), and the heap is never
// collected at exit: the prompt exit (docs/sandbox.md, "Prompt exit").
//
// Same outcome as `python -u train.py args`: sys.argv, sys.orig_argv, sys.path[0], the interpreter's
// own `__main__` emptied, with `__file__`/`__loader__`, stdin /dev/null; an uncaught exception goes
// to `sys.excepthook` without the driver's frame and exits 1; SystemExit exits as the interpreter's
// does; a SyntaxError prints as the interpreter prints it; the shutdown's observable steps are
// redone for the run's objects (_forgeenv_prompt_exit), or the interpreter's own shutdown runs. What
// differs: the libraries are already in `sys.modules` (silently: a preparation step that prints, an
// import-time warning among them, fails the zygote closed and is left to the script from then on, see
// printedStep), `traceback.extract_stack()` inside the script shows two
// `<string>` frames below the script's, `gc.get_objects()` omits the frozen import-time heap, and
// import-time objects are never finalized at exit.
import { z } from 'zod';

/** First bytes on stdout once the imports are done (the host strips them; a script never sees them). */
export const READY_MARKER = '\0forgeenv-zygote ready\n';
/** What a zygote prints instead when its preparation failed or printed anything: it then exits (two failures in a row and its key stays cold). */
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

export const RunRequestSchema = z.object({ argv: z.array(z.string()).min(1) });
export type RunRequest = z.infer<typeof RunRequestSchema>;

const DRIVER = String.raw`import os, sys
def _forgeenv_zygote(names):
    # A file that learns which exit the run took (tests), or "-".
    report, names = ("" if names[0] == "-" else names[0]), names[1:]
    cut = names.index("--") if "--" in names else len(names)
    modules, rest = names[:cut], names[cut + 1:]
    cut = rest.index("--") if "--" in rest else len(rest)
    attributes, calls = rest[:cut], rest[cut + 1:]
    null = os.open(os.devnull, os.O_RDWR)
    # What the preparation prints goes to a file of no name, and must be nothing: a cold run prints it
    # where the script imports the library, and a warning shown once is never shown again (torch's
    # deprecated reduce_op), so a zygote whose preparation printed anything fails closed, naming the
    # step that printed.
    try:
        said = os.memfd_create("forgeenv-zygote")
    except (AttributeError, OSError):
        said = os.open(os.devnull, os.O_RDWR)
    out, err = os.dup(1), os.dup(2)
    os.dup2(said, 1)
    os.dup2(said, 2)
    failed = None
    from importlib.util import find_spec
    steps = [("import", n) for n in modules] + [("attribute", a) for a in attributes] + [("call", c) for c in calls]
    for kind, item in steps:
        try:
            if kind == "import":
                # A library the interpreter lacks is skipped: the script's own import fails as it would cold.
                if find_spec(item) is not None:
                    __import__(item)
            elif kind == "attribute":
                mod, _, attr = item.partition(":")
                if mod in sys.modules:
                    getattr(sys.modules[mod], attr)
            else:
                mod, fn, arg = item.split(":", 2)
                f = getattr(sys.modules.get(mod), fn, None)
                if f is not None:
                    f(arg)
        except BaseException as e:
            failed = ("import %s: %s" if kind == "import" else "%s: %s") % (item, type(e).__name__)
            break
        # The step that printed is named: the host leaves it to the script from then on (printedStep).
        printed = _forgeenv_printed(said)
        if printed:
            failed = "the preparation printed %d bytes at %s (a cold run prints them where the script gets there): %r" % (printed[0], item, printed[1])
            break
    # The import-time heap never becomes garbage: out of the collector's sight, every collection in
    # the run (accelerate calls gc.collect() after training: 0.75 s with torch and transformers
    # loaded) costs what the script's own objects cost.
    # At exit it stays frozen: the prompt exit finalizes the run's own objects and never walks it
    # (_forgeenv_prompt_exit); only the slow path unfreezes it for the interpreter's shutdown.
    import builtins, gc
    gc.collect()
    printed = _forgeenv_printed(said)
    if printed and not failed:
        failed = "the preparation printed %d bytes (a cold run prints them where the script gets there): %r" % printed
    os.close(said)
    gc.freeze()
    # What a cold shutdown restores the builtins to (their copy at start-up, near enough), and the
    # streams flushed last (sys is cleared by then).
    global _forgeenv_builtins, _forgeenv_streams
    _forgeenv_builtins = dict(vars(builtins))
    _forgeenv_streams = (sys.__stdout__, sys.__stderr__)
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
    # The interpreter's own __main__, emptied to what a script's starts with (the same keys in the
    # same order): libraries keep it from import time (dill's _main_module pickles by it).
    m = sys.modules["__main__"]
    for k in list(m.__dict__):
        if k not in ("__name__", "__doc__", "__package__", "__loader__", "__spec__", "__annotations__", "__builtins__"):
            del m.__dict__[k]
    m.__dict__.update(__file__=path, __cached__=None, __builtins__=builtins, __loader__=SourceFileLoader("__main__", path), __spec__=None, __package__=None)
    # Real mode seeds at start-up and as numpy and torch finish importing (resources/shims): the
    # script starts from that state here too, whatever the imports ahead did.
    if "_forgeenv_seed" in sys.modules:
        sys.modules["_forgeenv_seed"].seed_all()
    with open(path, "rb") as f:
        source = f.read()
    try:
        return compile(source, path, "exec", dont_inherit=True), m.__dict__, report
    except SyntaxError as e:
        # As the interpreter prints a script that does not compile: no traceback at all.
        e.__traceback__ = None
        sys.excepthook(type(e), e, None)
        sys.stderr.flush()
        os._exit(1)
def _forgeenv_printed(said):
    # (bytes, their first 120) the preparation has printed so far, or None.
    sys.stdout.flush()
    sys.stderr.flush()
    n = os.lseek(said, 0, os.SEEK_END)
    if not n:
        return None
    os.lseek(said, 0, os.SEEK_SET)
    return n, os.read(said, 120)
def _forgeenv_prompt_exit(kind, code, report):
    # What the interpreter's shutdown does that a script can observe, in its order (Py_FinalizeEx),
    # for the objects the run made; the frozen import-time heap is never walked.
    # kind: "exit" (os._exit(code)) or "sigint" (die by SIGINT, as an uncaught KeyboardInterrupt).
    import atexit, gc, io, signal, threading, types, weakref
    streams, Exception_, tell, exit_, kill, pid = _forgeenv_streams, BaseException, _forgeenv_tell, os._exit, os.kill, os.getpid()
    set_handler, sigint, default = signal.signal, signal.SIGINT, signal.SIG_DFL
    threading._shutdown()
    atexit._run_exitfuncs()
    try:
        for f in (sys.stdout, sys.stderr):
            if f is not None:
                f.flush()
    except BaseException:
        return "a standard stream failed to flush"
    # The first collection of a cold shutdown (the run's cycles only: the import-time heap is frozen).
    if gc.isenabled():
        gc.collect()
    # What the rest of the shutdown would finalize observably (the run's objects a module, __main__
    # among them, still holds): then the interpreter's own shutdown runs, the slow path. Else the
    # rest (modules cleared, the heap freed) has nothing a script could observe, and is skipped.
    kept = _forgeenv_finalizable(gc, io, types, weakref)
    how = "prompt"
    if kind == "sigint" and not kept:
        set_handler(sigint, default)
    if kept:
        # The rest of finalize_modules, but for collecting the frozen heap: the run's objects are
        # finalized where a cold shutdown finalizes them. A builtin the run added or replaced would
        # die earlier cold (the builtins are restored from a copy): the interpreter's shutdown then.
        import builtins
        if any(_forgeenv_builtins.get(k, _forgeenv_builtins) is not v for k, v in vars(builtins).items()):
            return "the builtins changed (%s)" % kept
        # __main__ kept by a library (dill keeps it, with torch): a cold shutdown clears its names
        # like any module's. Kept by nothing else, it is collected instead (its finalizers see its
        # names), which the driver's frame, holding its dict, cannot redo: the slow path then.
        if sys.getrefcount(sys.modules["__main__"]) <= 2:
            return "__main__ is not kept (%s)" % kept
        if kind == "sigint":
            set_handler(sigint, default)
        _forgeenv_finalize_modules(gc, weakref, builtins)
        how = "prompt, modules cleared (%s)" % kept
    # Modules are cleared now: only what was bound before.
    for f in streams:
        try:
            f.flush()
        except Exception_:
            pass
    if report:
        tell(report, how)
    if kind == "sigint":
        kill(pid, sigint)
    exit_(code)
def _forgeenv_finalize_modules(gc, weakref, builtins):
    # As CPython 3.11's finalize_modules: special names out of sys, every module out of sys.modules
    # (weakly kept, in order), a collection, then each module still alive cleared in reverse order
    # (names with one leading underscore first, then all but __builtins__), sys and builtins last.
    if "_" in vars(builtins):
        builtins._ = None
    for name in ("path", "argv", "ps1", "ps2", "last_type", "last_value", "last_traceback", "path_hooks", "path_importer_cache", "meta_path", "__interactivehook__"):
        if name in vars(sys):
            setattr(sys, name, None)
    for name in ("stdin", "stdout", "stderr"):
        setattr(sys, name, vars(sys).get("__%s__" % name))
    modules = []
    for name in list(sys.modules):
        module = sys.modules[name]
        if issubclass(type(module), type(sys)):
            modules.append(weakref.ref(module))
        module = None
        sys.modules[name] = None
    sys.modules.clear()
    gc.collect()
    own = (vars(sys), vars(builtins))
    for ref in reversed(modules):
        module = ref()
        if module is not None and vars(module) not in own:
            _forgeenv_clear(vars(module))
        module = None
    _forgeenv_clear(vars(sys))
    _forgeenv_clear(vars(builtins))
def _forgeenv_clear(d, list=list, type=type, str=str):
    for k in list(d):
        if type(k) is str and k[:1] == "_" and k[1:2] != "_" and d[k] is not None:
            d[k] = None
    for k in list(d):
        if type(k) is str and k != "__builtins__" and d[k] is not None:
            d[k] = None
def _forgeenv_tell(path, what, o=os.open, w=os.write, c=os.close, flags=os.O_WRONLY | os.O_CREAT | os.O_APPEND):
    fd = o(path, flags, 0o600)
    w(fd, what.encode() + b"\n")
    c(fd)
def _forgeenv_finalizable(gc, io, types, weakref):
    # What a cold shutdown would still finalize, observably: an object with __del__ (a class's own
    # or a builtin's: files flush), an open file, a suspended generator (its finally blocks), a
    # weakref callback (the weakref module's own bookkeeping and _abc's registry cleanup aside).
    # Objects are judged by their type: a run's object may print from its own __getattribute__
    # (isinstance looks up __class__ through it), which a cold shutdown never calls.
    found = set()
    quiet = ("weakref", "_weakrefset")
    plain = (types.FunctionType, types.MethodType, types.BuiltinMethodType)
    for o in gc.get_objects():
        t = type(o)
        if t in (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType):
            frame = getattr(o, "gi_frame", None) or getattr(o, "cr_frame", None) or getattr(o, "ag_frame", None)
            if frame is not None and frame.f_lasti >= 0:
                found.add("a suspended %s" % o.__qualname__)
        elif issubclass(t, io.IOBase):
            # A cold shutdown reads a file's "closed" too (io's finalizer), through a __getattribute__
            # of its own if it has one: such a file goes to the interpreter's shutdown unread.
            try:
                closed = o.closed if t.__getattribute__ is object.__getattribute__ else False
            except BaseException:
                closed = False
            if not closed:
                found.add("an open %s" % t.__qualname__)
        elif getattr(t, "__del__", None) is not None:
            found.add("a %s.%s with __del__" % (t.__module__, t.__qualname__))
        if len(found) < 8 and weakref.getweakrefcount(o):
            for r in weakref.getweakrefs(o):
                cb = getattr(r, "__callback__", None)
                named = cb if type(cb) in plain else type(cb)
                if cb is None or getattr(named, "__module__", None) in quiet:
                    continue
                if type(cb) is types.BuiltinMethodType and cb.__name__ == "_destroy" and isinstance(cb.__self__, weakref.ref):
                    continue
                found.add("a weakref callback on a %s: %s" % (t.__qualname__, getattr(named, "__qualname__", type(cb).__qualname__)))
        if len(found) >= 8:
            break
    return "; ".join(sorted(found))
def _forgeenv_main():
    _forgeenv_code, _forgeenv_globals, _forgeenv_report = _forgeenv_zygote(sys.argv[1:])
    try:
        exec(_forgeenv_code, _forgeenv_globals)
    except SystemExit as _forgeenv_e:
        # As _Py_HandleSystemExit: None is 0, an int its own value, anything else printed to stderr and 1.
        _forgeenv_kind, _forgeenv_exit = "exit", _forgeenv_e.code
        if _forgeenv_exit is None:
            _forgeenv_exit = 0
        elif issubclass(type(_forgeenv_exit), int):
            _forgeenv_exit = _forgeenv_exit & 0xFF if -(2**63) <= _forgeenv_exit < 2**63 else 255
        else:
            if sys.stderr is not None:
                sys.stderr.write(str(_forgeenv_exit))
                sys.stderr.write("\n")
            else:
                sys.__stderr__.write(str(_forgeenv_exit) + "\n")
            _forgeenv_exit = 1
    except BaseException as _forgeenv_e:
        # The interpreter prints the exception's own __traceback__: drop the zygote's frame from it.
        _forgeenv_e.__traceback__ = _forgeenv_e.__traceback__.tb_next
        sys.last_type, sys.last_value, sys.last_traceback = type(_forgeenv_e), _forgeenv_e, _forgeenv_e.__traceback__
        sys.excepthook(type(_forgeenv_e), _forgeenv_e, _forgeenv_e.__traceback__)
        # The interpreter ends on SIGINT after its shutdown (threads joined, then atexit): the same here.
        _forgeenv_kind = "sigint" if isinstance(_forgeenv_e, KeyboardInterrupt) else "exit"
        _forgeenv_exit = 1
    else:
        _forgeenv_kind, _forgeenv_exit = "exit", 0
    # Nothing of the driver's may keep the script's objects alive: a cold shutdown holds none of them.
    del _forgeenv_code, _forgeenv_globals
    _forgeenv_e = None
    _forgeenv_slow = _forgeenv_prompt_exit(_forgeenv_kind, _forgeenv_exit, _forgeenv_report)
    if _forgeenv_report:
        _forgeenv_tell(_forgeenv_report, "slow: " + _forgeenv_slow)
    # The slow path: the interpreter's own shutdown over the whole heap, unfrozen (__main__ was
    # frozen with it; frozen, triton's nanobind objects outlive the shutdown and print "leaked"),
    # ending as the script did.
    import gc as _forgeenv_gc
    _forgeenv_gc.unfreeze()
    if _forgeenv_kind == "sigint":
        sys.excepthook = lambda *a: None
        raise KeyboardInterrupt
    raise SystemExit(_forgeenv_exit)
`;

// The driver's names live in a namespace of their own: __main__ is the script's.
const ZYGOTE = `import sys  # forgeenv-zygote
_forgeenv = {"__builtins__": __builtins__, "__name__": "forgeenv_zygote"}
exec(${JSON.stringify(DRIVER)}, _forgeenv)
_forgeenv["_forgeenv_main"]()
`;

/**
 * Python's argv for a zygote: `python -u -c <zygote> <report file>|- <module…> -- <module:attribute…>
 * -- <module:function:argument…>` (the launcher execs it like a script). The report file, for tests,
 * learns which exit a run took: `prompt`, or `slow: <why>`.
 */
export function zygoteArgv(
  python: string,
  modules: string[],
  attributes: string[] = [],
  calls: string[] = [],
  exitReport?: string,
): string[] {
  return [python, '-u', '-c', ZYGOTE, exitReport || '-', ...modules, '--', ...attributes, '--', ...calls];
}

/**
 * The preparation step (a module, `module:attribute` or `module:function:argument`) a zygote's failure
 * says printed: the host leaves it to the script from then on, which then prints it where a cold run does.
 */
export function printedStep(failure: string | undefined): string | undefined {
  return /the preparation printed \d+ bytes at (\S+) /.exec(failure ?? '')?.[1];
}

/** The one JSON line a zygote reads on stdin. */
export function encodeRequest(r: RunRequest): Buffer {
  return Buffer.from(`${JSON.stringify(RunRequestSchema.parse(r))}\n`, 'utf8');
}
