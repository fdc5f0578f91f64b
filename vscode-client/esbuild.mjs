// Bundles the extension host code (node, cjs), the webview script (browser, iife) and, with --tests,
// every test/*.test.ts into out-test/ with `vscode` and `vscode-languageclient/node` aliased to stubs.
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const args = new Set(process.argv.slice(2));
const production = args.has('--production');
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning' };

async function buildApp() {
  await esbuild.build({
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  });
  await esbuild.build({
    ...common,
    entryPoints: ['webview/main.ts'],
    outfile: 'dist/webview.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  });
  fs.copyFileSync('media/chat.css', 'dist/chat.css');
}

async function buildTests() {
  const entries = fs
    .readdirSync('test')
    .filter(f => f.endsWith('.test.ts'))
    .map(f => path.join('test', f));
  fs.rmSync('out-test', { recursive: true, force: true });
  await esbuild.build({
    ...common,
    sourcemap: true,
    entryPoints: entries,
    outdir: 'out-test',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['jsdom'],
    alias: { vscode: './test/vscode-stub.ts', 'vscode-languageclient/node': './test/languageclient-stub.ts' },
  });
}

if (args.has('--tests')) await buildTests();
else await buildApp();
