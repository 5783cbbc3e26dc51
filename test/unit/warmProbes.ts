// Scripts whose outcome (exit code, stdout, stderr) must be the same warm and cold: the
// interpreter's own behaviour (argv, __main__, exceptions, SystemExit) and its shutdown (threads,
// atexit, finalizers, buffered output), which the zygote's prompt exit redoes (zygote.ts). Run
// in simulated mode by warmRuntime.test.ts and in real mode by warmRealExit.test.ts.
export const PROBES: Record<string, string> = {
  'uncaught exception with a chained cause':
    'def f():\n    try:\n        {}["k"]\n    except KeyError as e:\n        raise ValueError("wrapped") from e\nprint("before")\nf()\n',
  SyntaxError: 'print("never")\nx = (\n',
  'sys.exit with a message': 'import sys\nprint("out")\nsys.exit("bye")\n',
  'sys.exit(3) and atexit': 'import atexit, sys\natexit.register(lambda: print("atexit ran"))\nsys.exit(3)\n',
  'argv, __main__, __file__, sys.path[0], stdin, cwd':
    'import os, sys\nprint(sys.argv, __name__, os.path.basename(__file__), sys.path[0] == os.getcwd(), repr(sys.stdin.read()), os.getcwd() == os.environ["HOME"])\nprint(sorted(k for k in globals() if not k.startswith("__")), __spec__, __package__, __doc__)\n',
  'if __name__ == "__main__" and pickling a __main__ class':
    'import pickle\nclass C:\n    pass\nif __name__ == "__main__":\n    print(type(pickle.loads(pickle.dumps(C()))).__qualname__)\n',
  'an exception in a thread, then a non-daemon thread joined at exit':
    'import threading, time\nthreading.Thread(target=lambda: 1/0).start()\ntime.sleep(0.2)\nthreading.Thread(target=lambda: (time.sleep(0.3), print("joined"))).start()\n',
  'a warning and an import error of a drifted name':
    'import warnings\nwarnings.warn("careful", FutureWarning)\nfrom transformers import NoSuchThingAnywhere\n',
  'an exception raised by a library frame': 'from transformers import AutoTokenizer\nAutoTokenizer.from_pretrained(12345)\n',
  KeyboardInterrupt: 'raise KeyboardInterrupt\n',
  // A warm run never collects the import-time heap at exit (zygote.ts, the prompt exit): the script's
  // own objects must still be finalized as in a cold run, wherever they are kept.
  'finalizers at shutdown: globals, a cycle, an object kept by a library, an unclosed file':
    'import sys, transformers\nclass Loud:\n    def __init__(self, name):\n        self.name = name\n    def __del__(self, write=sys.__stdout__.write):\n        write("del %s\\n" % self.name)\na = Loud("global")\nb = Loud("cycle")\nb.me = b\ntransformers.FORGEENV_KEPT = Loud("kept by a library")\nf = open("unclosed.txt", "w")\nf.write("data")\nprint("end of script")\n',
  // The prompt exit (zygote.ts): the interpreter's shutdown, step by step, for the run's objects.
  'a non-daemon thread that prints after the script ends':
    'import threading, time\ndef late():\n    time.sleep(0.3)\n    print("thread done", flush=True)\nthreading.Thread(target=late).start()\nprint("main done")\n',
  'atexit functions of the script, in reverse order':
    'import atexit\natexit.register(print, "first registered")\natexit.register(print, "last registered")\nprint("end")\n',
  '__del__ in a reference cycle and on a global, weakref.finalize and a weakref callback':
    'import sys, weakref\nclass Loud:\n    def __init__(self, name):\n        self.name = name\n    def __del__(self):\n        print("del", self.name)\nx = Loud("cycle")\ny = Loud("partner")\nx.other, y.other = y, x\ndel x, y\ng = Loud("global")\nclass T:\n    pass\nt = T()\nweakref.finalize(t, print, "finalize ran")\nu = T()\nr = weakref.ref(u, lambda ref: print("callback ran"))\nprint("end")\n',
  'sys.exit inside try/finally': 'import sys\ntry:\n    print("try")\n    sys.exit(4)\nfinally:\n    print("finally")\n',
  'SystemExit(None) after output without a newline': 'import sys\nprint("a", end="")\nsys.exit(None)\n',
  'SystemExit with an object code': 'raise SystemExit(["not", "an", "int"])\n',
  'SystemExit with a code beyond a byte': 'import sys\nsys.exit(258)\n',
  'output buffered without a newline at exit': 'import sys\nsys.stdout.write("no newline")\nsys.stderr.write("err no newline")\n',
  'a suspended generator with a finally':
    'def gen():\n    try:\n        yield 1\n    finally:\n        print("generator closed")\ng = gen()\nnext(g)\nprint("end")\n',
  'a finalizer that prints during an uncaught exception':
    'class Loud:\n    def __del__(self):\n        print("del after the traceback")\ndef f():\n    keep = Loud()\n    raise RuntimeError("boom")\nf()\n',
  'KeyboardInterrupt with a finalizer and an atexit function':
    'import atexit\natexit.register(print, "atexit")\nclass Loud:\n    def __del__(self):\n        print("del")\nx = Loud()\nraise KeyboardInterrupt\n',
  'stdout replaced by the script':
    'import sys\nsys.stdout = open("log.txt", "w")\nprint("to the file")\nsys.__stdout__.write("real stdout\\n")\n',
};
