// The VS Code user settings of the `npm start` demo (scripts/start.sh). Merged into the demo's
// settings.json on every start, so demo folders made by an older start.sh get new keys too; keys
// the user set keep their values.
//
// usage: node scripts/demo-settings.mjs <settings.json>
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export const DEMO_SETTINGS = Object.freeze({
  // First screen: the demo's README (the extension opens its walkthrough beside it once).
  'workbench.startupEditor': 'readme',
  // The secondary side bar only holds the (disabled) chat here; hidden, it leaves the width to the script.
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'chat.disableAIFeatures': true,
  'git.enabled': false,
});

/** Values older start.sh versions wrote that the current defaults replace (they were never the user's). */
const SUPERSEDED = Object.freeze({ 'workbench.startupEditor': 'none' });

/**
 * Merges DEMO_SETTINGS into a settings.json text (undefined: no file yet). Returns the new text, or
 * undefined when nothing changes. Throws on text that is not a plain JSON object (e.g. one with
 * comments): the caller leaves such a file alone rather than lose what the user wrote.
 */
export function mergeDemoSettings(text) {
  const current = text === undefined || text.trim() === '' ? {} : JSON.parse(text);
  if (typeof current !== 'object' || current === null || Array.isArray(current)) throw new Error('settings.json is not a JSON object');
  const merged = { ...current };
  let changed = text === undefined;
  for (const [key, value] of Object.entries(DEMO_SETTINGS)) {
    if (!(key in merged) || (key in SUPERSEDED && merged[key] === SUPERSEDED[key])) {
      changed ||= merged[key] !== value;
      merged[key] = value;
    }
  }
  return changed ? `${JSON.stringify(merged, null, 2)}\n` : undefined;
}

function main(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
  let next;
  try {
    next = mergeDemoSettings(text);
  } catch (e) {
    console.error(`start: left ${file} as it is (${e.message}); the demo's defaults are in scripts/demo-settings.mjs.`);
    return;
  }
  if (next === undefined) return;
  writeFileSync(`${file}.tmp`, next); // atomic: a crash leaves the old file, never half a new one
  renameSync(`${file}.tmp`, file);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv.length !== 3) {
    console.error('usage: node scripts/demo-settings.mjs <settings.json>');
    process.exit(2);
  }
  main(process.argv[2]);
}
