import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { createSanitizer, renderMarkdown } from '../webview/markdown';

const dom = new JSDOM('<!DOCTYPE html><body></body>');
const purify = createSanitizer(dom.window as unknown as Parameters<typeof createSanitizer>[0]);
const render = (md: string): Element => {
  const host = dom.window.document.createElement('div');
  host.innerHTML = renderMarkdown(md, purify);
  return host;
};

test('normal markdown renders: emphasis, lists, code blocks, http links', () => {
  const html = render('**bold** and `code`\n\n- one\n- two\n\n```py\nprint(1)\n```\n\n[docs](https://example.com/x)');
  assert.equal(html.querySelector('strong')?.textContent, 'bold');
  assert.equal(html.querySelectorAll('li').length, 2);
  assert.equal(html.querySelector('pre code')?.textContent, 'print(1)\n');
  assert.equal(html.querySelector('a')?.getAttribute('href'), 'https://example.com/x');
});

test('<script> from the model is dropped', () => {
  const html = render('hello <script>alert(1)</script> world\n\n<script src="https://evil.test/x.js"></script>');
  assert.equal(html.querySelector('script'), null);
  assert.doesNotMatch(html.innerHTML, /alert\(1\)/);
});

test('javascript: links lose their href (markdown and raw HTML)', () => {
  const html = render('[click me](javascript:alert(document.cookie)) <a href="JaVaScRiPt:alert(2)">raw</a> [data](data:text/html,<b>x</b>)');
  for (const a of Array.from(html.querySelectorAll('a'))) {
    const href = a.getAttribute('href') ?? '';
    assert.doesNotMatch(href, /^\s*(javascript|data):/i, `unsafe href kept: ${href}`);
  }
  assert.match(html.textContent ?? '', /click me/);
});

test('event-handler attributes and dangerous tags are removed', () => {
  const html = render('<img src="x" onerror="alert(3)"> <div onclick="alert(4)" style="position:fixed">hi</div> <iframe src="https://x.test"></iframe> <svg><script>alert(5)</script></svg>');
  const all = Array.from(html.querySelectorAll('*'));
  for (const el of all) {
    for (const attr of Array.from(el.attributes)) {
      assert.doesNotMatch(attr.name, /^on/i, `handler kept on <${el.tagName}>`);
      assert.notEqual(attr.name, 'style');
    }
  }
  assert.equal(html.querySelector('iframe'), null);
  assert.equal(html.querySelector('script'), null);
  assert.equal(html.querySelector('img')?.getAttribute('src') ?? null, null, 'relative/odd image sources are dropped');
});
