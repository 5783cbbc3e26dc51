#!/usr/bin/env node
// The `forgeenv` command. Uses the bundle when built (npm run build), else runs the TypeScript
// sources through tsx (a checkout with dev dependencies installed).
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

// A closed pipe (`forgeenv tasks | head`) is the reader saying it has enough: stop quietly, as
// Unix tools do, instead of crashing on the unhandled EPIPE error event.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e) => {
    if (e && e.code === 'EPIPE') process.exit(0);
    throw e;
  });
}

const bundle = join(__dirname, '..', 'dist', 'cli.js');
let cli;
if (existsSync(bundle) && !process.env.FORGEENV_FROM_SOURCE) {
  cli = require(bundle);
} else {
  require('tsx/cjs');
  cli = require(join(__dirname, '..', 'src', 'cli', 'main.ts'));
}
// Writes to a pipe are asynchronous: exiting at once would cut off output beyond the pipe's
// buffer (e.g. a RolloutResult line carrying a large diff). Exit once both streams have flushed.
function exit(code) {
  let pending = 2;
  const done = () => --pending === 0 && process.exit(code);
  process.stdout.write('', done);
  process.stderr.write('', done);
}

cli.main(process.argv.slice(2)).then(exit, (e) => {
  console.error(`forgeenv: internal error: ${e && e.stack ? e.stack : e}`);
  exit(3);
});
