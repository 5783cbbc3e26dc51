// Size limits on what the environment reads from outside: repair submissions and task scripts.
// Shared by the editor (settings defaults), the CLI and the OpenEnv server, so all three agree.

/**
 * Default for `forgeenv.maxDiffBytes`, the largest repair submission (diff or whole script) in
 * UTF-8 bytes. A real repair is a few KiB and a whole training script tens of KiB; 2 MiB leaves
 * two orders of magnitude of room while keeping the worst-case application well under a second.
 */
export const DEFAULT_MAX_DIFF_BYTES = 2 * 1024 * 1024;
/** Bounds of the setting: below 1 KiB even a one-line fix of a long line fails; 64 MiB is plainly abuse. */
export const MIN_MAX_DIFF_BYTES = 1024;
export const MAX_MAX_DIFF_BYTES = 64 * 1024 * 1024;

/**
 * The largest task script a task folder may hold (and the largest `tasks.json`). The longest of the
 * 32 real Hugging Face training scripts in the development corpus is 36 KiB; 1 MiB is far above
 * any training script while keeping loading, parsing and drift generation fast (a 20 MB script took
 * 18 s and 957 MB to load).
 */
export const MAX_TASK_FILE_BYTES = 1024 * 1024;
/** `tasks.json` may carry run files (`files`: path → text) for many tasks, hence more room than a script. */
export const MAX_TASK_METADATA_BYTES = 4 * 1024 * 1024;
