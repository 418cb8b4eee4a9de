#!/usr/bin/env node
// The program is compiled to dist/ by `npm run build` (and before `npm pack`/`npm publish`, by the
// `prepack` script: a published package ships dist/ built, nothing is compiled at install).

// Every file operation is a round trip on NFS or sshfs: keep more of them in flight than
// libuv's default 4 threads (this must be set before the first file system call).
process.env.UV_THREADPOOL_SIZE ??= '16';
// The build bundles the program and its dependencies into one file (main.bundle.js, next to
// main.js and written from it): Node then starts it without resolving and reading about 200
// modules, which was most of a crawl's start (docs/benchmarks.md, "Fixed costs").
let main;
try {
  ({ main } = await import('../dist/src/cli/main.bundle.js'));
} catch (err) {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/src/cli/main.bundle.js')) {
    process.stderr.write('mountcrawl: NOT_BUILT: run `npm install && npm run build` in the mountcrawl directory first\n');
    process.exit(70);
  }
  throw err;
}
process.exitCode = await main(process.argv);
// A child of --processes holds an IPC channel that would keep it alive.
if (process.connected) process.disconnect();
