// Python identifier rules, for validating names that primitives write into a script.

export const PYTHON_KEYWORDS: ReadonlySet<string> = new Set([
  'False',
  'None',
  'True',
  'and',
  'as',
  'assert',
  'async',
  'await',
  'break',
  'class',
  'continue',
  'def',
  'del',
  'elif',
  'else',
  'except',
  'finally',
  'for',
  'from',
  'global',
  'if',
  'import',
  'in',
  'is',
  'lambda',
  'nonlocal',
  'not',
  'or',
  'pass',
  'raise',
  'return',
  'try',
  'while',
  'with',
  'yield',
]);

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** An ASCII Python identifier that is not a keyword. */
export function isIdentifier(name: string): boolean {
  return IDENTIFIER.test(name) && !PYTHON_KEYWORDS.has(name);
}

/** A dotted path of identifiers, e.g. `torch.optim`. */
export function isDottedName(name: string): boolean {
  return name.split('.').every(isIdentifier);
}
