// dist/ is committed (so that `npm install ./clients/typescript` needs no
// build): this test compiles src/ with the pinned tsc into a temporary folder
// and fails when dist/ differs from what src/ compiles to — run `npm run build`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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
