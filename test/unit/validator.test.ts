import { strict as assert } from 'node:assert';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  FORBIDDEN_CALLS,
  FORBIDDEN_MODULES,
  findCalls,
  findImports,
  validateRepair,
  validateScript,
} from '../../src/env/scoring/validator';

const REALWORLD = join(__dirname, '..', '..', '..', 'shared', 'realworld', 'scripts');

describe('validateScript', () => {
  test('the documented lists: the original three modules first, then the OS and code-loading back doors', () => {
    assert.deepEqual(FORBIDDEN_MODULES.slice(0, 3), ['os', 'subprocess', 'socket']);
    for (const m of ['posix', 'nt', 'ctypes', 'cffi', 'pty', 'multiprocessing', 'runpy', 'zipimport'])
      assert.ok(FORBIDDEN_MODULES.includes(m), m);
    assert.deepEqual([...FORBIDDEN_CALLS].sort(), ['compile', 'eval', 'exec']);
  });

  test('every spelling of a forbidden import is reported with its line', () => {
    const script = [
      'import os',
      'import sys, subprocess as sp',
      'import os.path',
      'from os import path',
      'from socket import socket as s',
      'from os.path import (join,',
      '    exists)',
      "__import__('socket')",
      'importlib.import_module("subprocess")',
    ].join('\n');
    assert.deepEqual(validateScript(script), [
      "line 1: import of forbidden module 'os'",
      "line 2: import of forbidden module 'subprocess'",
      "line 3: import of forbidden module 'os'",
      "line 4: import of forbidden module 'os'",
      "line 5: import of forbidden module 'socket'",
      "line 6: import of forbidden module 'os'",
      "line 8: import of forbidden module 'socket' (via __import__)",
      "line 9: import of forbidden module 'subprocess' (via importlib.import_module)",
    ]);
  });

  test('eval and exec calls, also through builtins', () => {
    assert.deepEqual(validateScript('x = eval("1+1")\n\nbuiltins.exec(code)\n'), [
      "line 1: call to forbidden function 'eval'",
      "line 3: call to forbidden function 'exec'",
    ]);
  });

  test('strings, comments and look-alike names do not trigger', () => {
    const script = [
      '# import os',
      'doc = "import subprocess; eval(x)"',
      "'''",
      'import socket',
      "'''",
      'import socketserver, ossaudiodev',
      'from . import os',
      'model.eval()',
      'cursor.exec()',
      'evaluate = 1',
      'import shutil',
      'shutil.rmtree("out", ignore_errors=True)',
    ].join('\n');
    assert.deepEqual(validateScript(script), []);
  });

  test('a script that does not parse is not itself a violation', () => {
    assert.deepEqual(validateScript('def f(:\n    pass\nprint("x"\n'), []);
  });

  test('constructs in the parts that parse are still reported when another part does not', () => {
    assert.deepEqual(validateScript('import subprocess\ndef f(:\n    pass\n'), ["line 1: import of forbidden module 'subprocess'"]);
  });

  test('a typical training script is allowed', () => {
    const script = [
      'from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments',
      'from datasets import load_dataset',
      'import torch, sys, json, pathlib',
      'args = TrainingArguments(output_dir="out", eval_strategy="epoch")',
      'trainer = Trainer(model=model, args=args)',
      'trainer.train()',
      'model.eval()',
    ].join('\n');
    assert.deepEqual(validateScript(script), []);
  });
});

describe('validateRepair: the repair is judged against the broken script', () => {
  const broken = [
    'import os, subprocess',
    'import torch',
    'out = os.path.join("out", "x")',
    'subprocess.run(["nvidia-smi"])',
    'x = eval("1 + 1")',
    'model.train()',
  ].join('\n');

  test('the broken script against itself, and a repair that only fixes an API, are allowed', () => {
    assert.deepEqual(validateRepair(broken, broken), []);
    assert.deepEqual(validateRepair(broken.replace('model.train()', 'model.train(mode=True)'), broken), []);
    // Editing a line that holds a construct keeps its count: allowed.
    assert.deepEqual(validateRepair(broken.replace('["nvidia-smi"]', '["nvidia-smi", "-L"]').replace('"1 + 1"', '"2"'), broken), []);
    // Removing constructs is fine.
    assert.deepEqual(validateRepair('import torch\nmodel.train()\n', broken), []);
  });

  test('an added construct is refused on its line; a second occurrence of an existing one is counted', () => {
    const once = 'import os\nos.system("echo a")\nprint(1)\n';
    assert.deepEqual(validateRepair('import os\nos.system("echo a")\nprint(1)\nos.system("echo b")\n', once), [
      'line 4: use of os.system (the broken script has 1, the repair 2)',
    ]);
    // The same line duplicated: the counts still catch it.
    assert.deepEqual(validateRepair('import os\nos.system("echo a")\nos.system("echo a")\nprint(1)\n', once), [
      'line 3: use of os.system (the broken script has 1, the repair 2)',
    ]);
    assert.deepEqual(validateRepair('import torch\nimport os\nprint(1)\n', 'import torch\nprint(1)\n'), [
      "line 2: import of forbidden module 'os'",
    ]);
    assert.deepEqual(validateRepair(broken + '\ny = eval("3")', broken), [
      "line 7: call to forbidden function 'eval' (the broken script has 1, the repair 2)",
    ]);
    assert.deepEqual(validateRepair(broken + '\nimport subprocess as sp', broken), [
      "line 7: import of forbidden module 'subprocess' (the broken script has 1, the repair 2)",
    ]);
  });

  test('harmless parts of os stay usable in a repair of a script that imports it', () => {
    const base = 'import os\nout = "out"\n';
    const repair =
      'import os\nout = os.path.join(os.getcwd(), os.environ.get("OUT", "out"))\nos.makedirs(out, exist_ok=True)\nn = os.cpu_count()\n';
    assert.deepEqual(validateRepair(repair, base), []);
    for (const bad of ['os.system("x")', 'os.popen("x")', 'os.execv("/bin/sh", [])', 'os.remove("x")', 'os.fork()', 'f = os.posix_spawn']) {
      assert.equal(validateRepair(`${base}${bad}\n`, base).length, 1, bad);
    }
  });

  test('bypasses are refused wherever the repair adds them, and allowed when the broken script already has them', () => {
    const base = 'import importlib, builtins, sys, asyncio, os, subprocess\nname = "json"\n';
    const bypasses: Array<[string, RegExp]> = [
      ['m = importlib.import_module(name)', /import with a computed module name \(via importlib\.import_module\)/],
      ['m = importlib.import_module("o" + "s")', /computed module name/],
      ['m = importlib.import_module("subprocess")', /import of forbidden module 'subprocess' \(via importlib\.import_module\)/],
      ['m = __import__(name)', /computed module name \(via __import__\)/],
      ['imp = __import__', /reference to an importer \(via __import__\)/],
      ['from importlib import import_module as im\nm = im(name)', /computed module name \(via im\)/],
      ['e = getattr(builtins, "ev" + "al")', /reflection on module 'builtins'/],
      ['e = getattr(__builtins__, "exec")', /access to '__builtins__'/],
      ['e = vars(builtins)["eval"]', /reflection on module 'builtins'/],
      ['e = builtins.__dict__["exec"]', /builtins' namespace/],
      ['e = globals()["__builtins__"]', /string '__builtins__'/],
      ['f = eval', /reference to forbidden function 'eval'/],
      ['builtins.exec("1")', /call to forbidden function 'exec'/],
      ['c = ().__class__.__bases__[0].__subclasses__()', /attribute '__subclasses__'/],
      ['g = load.__globals__', /attribute '__globals__'/],
      ['import posix', /forbidden module 'posix'/],
      ['import nt', /forbidden module 'nt'/],
      ['import ctypes', /forbidden module 'ctypes'/],
      ['from cffi import FFI', /forbidden module 'cffi'/],
      ['import pty', /forbidden module 'pty'/],
      ['import multiprocessing', /forbidden module 'multiprocessing'/],
      ['import importlib.machinery', /forbidden module 'importlib\.machinery'/],
      ['from importlib import machinery', /forbidden module 'importlib\.machinery'/],
      ['spec = importlib.util.spec_from_file_location("m", "m.py")', /module loading through 'spec_from_file_location'/],
      ['spec.loader.exec_module(mod)', /module loading through 'exec_module'/],
      ['m = sys.modules["os"]', /use of sys\.modules/],
      ['m = sys.modules.get("subprocess")', /use of sys\.modules/],
      ['m = getattr(sys, "modules")', /reflection on module 'sys'/],
      ['t = open("/proc/self/environ").read()', /path under \/proc/],
      ['t = open(f"/proc/{pid}/mem", "rb")', /path under \/proc/],
      ['p = asyncio.create_subprocess_shell("ls")', /use of asyncio\.create_subprocess_shell/],
      ['sh = getattr(os, "sys" + "tem")', /reference to forbidden module 'os'/],
      ['run = subprocess', /reference to forbidden module 'subprocess'/],
      ['from subprocess import run as r\nr(["ls"])', /use of subprocess\.run \(as r\)/],
    ];
    for (const [code, message] of bypasses) {
      const found = validateRepair(`${base}${code}\n`, base);
      assert.ok(found.length >= 1, `not caught: ${code}`);
      assert.ok(
        found.some((f) => message.test(f)),
        `${code}: ${found.join(' | ')}`,
      );
      assert.ok(
        found.every((f) => /^line (3|4): /.test(f)),
        `${code}: ${found.join(' | ')}`,
      );
      // Present in the broken script already: the repair adds nothing.
      assert.deepEqual(validateRepair(`${base}${code}\n`, `${base}${code}\n`), [], code);
    }
  });

  // The review's bypasses (and their near relatives), each one an added line that must be reported.
  // The validator is advisory (the sandbox contains runs); these are the cheap holes, closed.
  const reviewBypasses: Array<[string, string, RegExp]> = [
    [
      'from shutil import os',
      'from shutil import os\nos.system("id")',
      /import of forbidden module 'os' \(through shutil\)[\s\S]*use of os\.system/,
    ],
    ['from shutil import os as o', 'from shutil import os as o\no.system("id")', /use of os\.system \(as o\.system\)/],
    [
      'from tempfile import _os',
      'from tempfile import _os\n_os.popen("id")',
      /import of forbidden module 'os' \(through tempfile\)[\s\S]*use of os\.popen/,
    ],
    ['shutil.os.system', 'shutil.os.system("id")', /use of os\.system through another module \(shutil\.os\.system\)/],
    [
      'from shutil import subprocess',
      'from shutil import subprocess as sp\nsp.run(["id"])',
      /import of forbidden module 'subprocess' \(through shutil\)/,
    ],
    [
      'types.FunctionType(compile(…))',
      'f = types.FunctionType(compile("import os", "x", "exec"), {})',
      /use of types\.FunctionType[\s\S]*call to forbidden function 'compile'/,
    ],
    ['compile alone', 'c = compile(src, "x", "exec")', /call to forbidden function 'compile'/],
    [
      'from types import CodeType',
      'from types import CodeType\nc = CodeType(*args)',
      /use of types\.CodeType \(makes a function from a code object\) \(as CodeType\)/,
    ],
    ['__code__.replace', 'g = f.__code__.replace(co_consts=(1,))', /access to attribute '__code__'/],
    [
      'pickle.loads',
      'x = pickle.loads(b"cos\\nsystem\\n(S\'id\'\\ntR.")',
      /use of pickle\.loads \(deserialising runs code the data names\)/,
    ],
    ['from pickle import loads', 'from pickle import loads as l\nx = l(blob)', /use of pickle\.loads/],
    ['pickle.Unpickler', 'x = pickle.Unpickler(f).load()', /use of pickle\.Unpickler/],
    ['marshal.loads', 'import marshal\nc = marshal.loads(blob)', /use of marshal\.loads/],
    ['sys.__dict__', 'm = sys.__dict__["modules"]', /access to the namespace of module 'sys' \(sys\.__dict__\)/],
    ["getattr(x, '__' + 'import__')", 'i = getattr(x, "__" + "import__")', /name '__import__' assembled from pieces/],
    ["'__imp' 'ort__'", 'i = getattr(x, "__imp" "ort__")', /name '__import__' assembled from pieces/],
    ["globals()['__built' + 'ins__']", 'g = globals()["__built" + "ins__"]', /name '__builtins__' assembled from pieces/],
    ["'ev' + 'al' on any receiver", 'e = getattr(b, "ev" + "al")', /name 'eval' assembled from pieces/],
    ['getattr with chr()', 'i = getattr(x, chr(95) * 2 + "import" + chr(95) * 2)', /attribute name built at run time/],
    ["getattr with ''.join", 'i = getattr(x, "".join(["__", "imp", "ort__"]))', /attribute name built at run time/],
    ['getattr with a reversed string', 'i = getattr(x, "__tropmi__"[::-1])', /attribute name built at run time/],
    [
      '__import__("builtins")',
      'b = __import__("builtins")\nb.eval("1")',
      /dynamic import of 'builtins' \(via __import__; its uses cannot be followed\)/,
    ],
    ['import_module("sys")', 'm = importlib.import_module("sys").modules', /dynamic import of 'sys'/],
    ['__getattribute__', 'e = object.__getattribute__(b, n)', /access to attribute '__getattribute__'/],
  ];
  for (const [what, code, message] of reviewBypasses) {
    test(`review bypass: ${what}`, () => {
      const base = 'import importlib, shutil, types, pickle, sys, tempfile\nname = "json"\n';
      const found = validateRepair(`${base}${code}\n`, base);
      assert.match(found.join('\n'), message, `not caught: ${code}`);
      assert.ok(
        found.every((f) => /^line (3|4): /.test(f)),
        found.join('\n'),
      );
      // Present in the broken script already: the repair adds nothing (the policy judges the repair).
      assert.deepEqual(validateRepair(`${base}${code}\n`, `${base}${code}\n`), [], code);
    });
  }

  test('the new checks leave ordinary training code alone', () => {
    const script = [
      'import os, re, pickle, json, torch',
      'from torch import compile as tc',
      'pat = re.compile(r"loss=(\\d+)")',
      'model = torch.compile(model)',
      'state = pickle.dumps(obj)',
      'data = json.loads(text)',
      'name = getattr(args, key)',
      'val = getattr(config, f"layer_{i}", None)',
      'setattr(model, "dropout", 0.1)',
      'path = "out" + "/" + "model.bin"',
      'code = response.code',
      'print(err.code, self.__class__.__name__, args.__dict__)',
    ].join('\n');
    assert.deepEqual(validateRepair(`${script}\nx = 1\n`, script), []);
    assert.deepEqual(
      validateScript(script).filter((f) => !/'os'/.test(f)),
      [],
    );
  });

  test('names used as definitions, keywords and attributes are not uses', () => {
    const script = 'class M:\n    def eval(self, os=None):\n        return f(exec=1)\nmodel.eval()\nimportlib_ok = 1\nsplit = "eval"\n';
    assert.deepEqual(validateScript(script), []);
  });

  test(
    'real script with import os runs: every real-world script is allowed against itself, though the strict check refuses most',
    { skip: !existsSync(REALWORLD) && 'no real-world corpus' },
    () => {
      const files = readdirSync(REALWORLD).filter((f) => f.endsWith('.py'));
      assert.equal(files.length, 32);
      let strictRefused = 0;
      for (const f of files) {
        const script = readFileSync(join(REALWORLD, f), 'utf8');
        assert.deepEqual(validateRepair(script, script), [], f);
        if (validateScript(script).length) strictRefused++;
      }
      assert.ok(strictRefused >= 15, `the strict check refuses ${strictRefused}`);
      const sagemaker = readFileSync(join(REALWORLD, '23_nb_sagemaker_vit_image_classification.py'), 'utf8');
      assert.match(validateScript(sagemaker).join('\n'), /import of forbidden module 'subprocess'/);
      // A repair of it that renames an API is allowed; one that adds a shell call is not.
      const repaired = sagemaker.replace(/evaluation_strategy/g, 'eval_strategy');
      assert.notEqual(repaired, sagemaker);
      assert.deepEqual(validateRepair(repaired, sagemaker), []);
      assert.equal(validateRepair(`${repaired}\nsubprocess.run(["sh", "-c", "id"])\n`, sagemaker).length, 1);
    },
  );
});

describe('syntax helpers', () => {
  test('findImports reports module, names, relativity and line', () => {
    assert.deepEqual(findImports('import a.b as c, d\nfrom .m import x as y, z\nfrom p import *\n'), [
      { module: 'a.b', names: [], relative: false, line: 1 },
      { module: 'd', names: [], relative: false, line: 1 },
      { module: 'm', names: ['x', 'z'], relative: true, line: 2 },
      { module: 'p', names: ['*'], relative: false, line: 3 },
    ]);
  });

  test('findCalls gives dotted callees', () => {
    assert.deepEqual(
      findCalls('trainer.train()\nprint(a.b.c(1))\nx().y()\n').map((c) => [c.callee, c.line]),
      [
        ['trainer.train', 1],
        ['print', 2],
        ['a.b.c', 2],
        ['.y', 3],
        ['x', 3],
      ],
    );
  });
});
