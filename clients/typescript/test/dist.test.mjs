// dist/ is committed (so that `npm install ./clients/typescript` needs no
// build): this test compiles src/ with the pinned tsc into a temporary folder
// and fails when dist/ differs from what src/ compiles to — run `npm run build`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** files lists the files under dir, relative to it, sorted. */
function files(dir, prefix = '') {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(dir, join(prefix, e.name)) : [join(prefix, e.name)]))
    .sort();
}

test('dist/ is what src/ compiles to', () => {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  assert.ok(existsSync(tsc), `${tsc} is missing: run \`npm ci\` in clients/typescript (the Go test does when node_modules is missing)`);
  const out = mkdtempSync(join(tmpdir(), 'dtq-ts-dist-'));
  try {
    execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json'), '--outDir', out], { cwd: root, stdio: 'inherit' });
    const want = files(out);
    assert.deepEqual(files(join(root, 'dist')), want, 'dist/ has other files than src/ compiles to: run `npm run build`');
    for (const f of want) {
      assert.equal(readFileSync(join(root, 'dist', f), 'utf8'), readFileSync(join(out, f), 'utf8'),
        `dist/${f} is stale: run \`npm run build\` in clients/typescript and commit dist/`);
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test("dist's types compile in a strict project without @types/node", () => {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  assert.ok(existsSync(tsc), `${tsc} is missing: run \`npm ci\` in clients/typescript`);
  const dir = mkdtempSync(join(tmpdir(), 'dtq-ts-user-'));
  try {
    const dist = JSON.stringify(join(root, 'dist', 'index.js'));
    writeFileSync(join(dir, 'app.ts'), `
import { Client, Worker, Permanent, RetryAfter, MessageQueue, NotFoundError, task, chain, type Task, type TaskContext } from ${dist};
export async function main(): Promise<void> {
  const c = new Client({ url: 'http://127.0.0.1:9' });
  const t: Task = await c.submit('resize', { image: 'a' }, { queue: 'media', priority: 7, runAt: new Date(), unique: { key: 'k' } });
  const when: Date = t.createdAt;
  const w = new Worker({ queues: ['media'], concurrency: 2 });
  w.task('resize', async (payload: { image: string }, ctx: TaskContext) => {
    if (!payload.image) throw new Permanent('no image');
    if (ctx.attempt < 2) throw new RetryAfter(1, 'later');
    const one = await ctx.step('one', () => ({ n: 1 }));
    const got = await ctx.waitFor('go', { timeoutSeconds: 5 });
    return got.timedOut ? one.n : got.payload;
  });
  await c.workflows.submit(chain(task('a'), task('b', 1)));
  for (const m of await new MessageQueue('orders').receive({ topics: ['x'] })) await m.ack();
  try { await c.get('x'); } catch (e) { if (e instanceof NotFoundError) console.log(e.code, when); }
}
`);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2022', 'DOM'], noEmit: true, types: [] },
      files: ['app.ts'],
    }));
    execFileSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: dir, stdio: 'inherit' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
