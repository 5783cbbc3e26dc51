// The prompt under Make Task's arguments question: what the script's parser requires, and never
// "requires no arguments" for a script whose parser may need some the derivation could not see.
// No vscode import.
import type { DerivedArgs } from '../../../env/tasks/scriptArgs';

export function argumentHint(derived: DerivedArgs): string {
  const names = derived.required.map((r) => (r.option ? `--${r.name}` : r.name)).join(', ');
  if (derived.required.length)
    return `Prefilled with what the script requires (${derived.style}: ${names}). Check the values; empty: none.`;
  switch (derived.style) {
    case 'dataclass-parser':
      return 'The script reads its arguments with HfArgumentParser/TrlParser, but which ones it requires could not be read from it (dataclasses defined elsewhere?): add what it needs, e.g. --output_dir out --model_name_or_path gpt2.';
    case 'argparse':
      return 'The script uses argparse and marks no argument required; add any it should run with.';
    case 'sys.argv':
      return 'The script reads sys.argv; add the values it expects.';
    default:
      return 'The script reads no command-line arguments that ForgeEnv can see; add any it should run with.';
  }
}
