import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { codeLanguage, createSanitizer, highlightCode, isWorkspaceLink, renderMarkdown } from '../webview/markdown';

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
  const html = render(
    '[click me](javascript:alert(document.cookie)) <a href="JaVaScRiPt:alert(2)">raw</a> ' +
      '[data](data:text/html,<b>x</b>)',
  );
  for (const a of Array.from(html.querySelectorAll('a'))) {
    const href = a.getAttribute('href') ?? '';
    assert.doesNotMatch(href, /^\s*(javascript|data):/i, `unsafe href kept: ${href}`);
  }
  assert.match(html.textContent ?? '', /click me/);
});

test('event-handler attributes and dangerous tags are removed', () => {
  const html = render(
    '<img src="x" onerror="alert(3)"> <div onclick="alert(4)" style="position:fixed">hi</div> <iframe src="https://x.test"></iframe> <svg><script>alert(5)</script></svg>',
  );
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

test('model HTML cannot impersonate the panel: class, id, name and data-* are dropped', () => {
  const html = render(
    '<div class="approval-card" id="prompt" data-decision="once"><div class="approval-title">Allow?</div>' +
      '<a class="primary" name="x" href="https://evil.test/allow">Allow once</a></div>\n\n<span class="entry user">me</span>',
  );
  for (const el of Array.from(html.querySelectorAll('*'))) {
    for (const attr of ['class', 'id', 'name', 'data-decision'])
      assert.equal(el.getAttribute(attr), null, `${attr} kept on <${el.tagName}>`);
  }
  assert.equal(html.querySelector('.approval-card, .approval-title, .primary, .entry, #prompt'), null);
  assert.match(html.textContent ?? '', /Allow once/);
});

test('a code block keeps only its language class, which the highlighter reads', () => {
  const html = render(
    '```python\ndef f(x):\n    return "hi"  # note\n```\n\n<code class="language-py approval-card">x</code>',
  );
  const code = html.querySelector('pre code')!;
  assert.equal(code.getAttribute('class'), 'language-python');
  assert.equal(codeLanguage(code), 'python');
  assert.equal(html.querySelectorAll('code')[1]?.getAttribute('class'), null, 'a mixed class list is dropped');
  highlightCode(html);
  assert.equal(codeLanguage(code), 'python', 'still known after highlighting');
  assert.ok(code.querySelector('span.hljs-keyword'), 'def is highlighted');
  assert.ok(code.querySelector('span.hljs-string'));
  assert.equal(
    code.textContent,
    'def f(x):\n    return "hi"  # note\n',
    'highlighting keeps the text and its indentation',
  );
});

test('highlighting escapes the code: markup inside a code block stays text', () => {
  const html = render('```html\n<img src=x onerror=alert(1)><script>alert(2)</script>\n```');
  highlightCode(html);
  assert.equal(html.querySelector('img'), null);
  assert.equal(html.querySelector('script'), null);
  assert.match(html.querySelector('pre code')?.textContent ?? '', /onerror=alert\(1\)/);
});

test('remote images and media are never loaded: their sources are dropped in the sanitizer', () => {
  const html = render(
    '![chart](https://evil.test/track.png) <img src="//evil.test/x.gif" srcset="https://evil.test/a.png 2x">' +
      '<video src="https://evil.test/v.mp4" poster="https://evil.test/p.png"></video><audio src="https://evil.test/a.mp3"></audio>' +
      '<picture><source srcset="https://evil.test/s.png"></picture> ![ok](data:image/png;base64,iVBORw0KGgo=)',
  );
  const sources = Array.from(html.querySelectorAll('*'))
    .flatMap(el => ['src', 'srcset', 'poster'].map(a => el.getAttribute(a)))
    .filter((v): v is string => v !== null);
  assert.deepEqual(sources, ['data:image/png;base64,iVBORw0KGgo='], 'only the inline data image keeps a source');
  assert.equal(html.querySelector('video, audio, source, picture'), null);
  assert.match(html.querySelector('img')?.getAttribute('alt') ?? '', /chart \(remote image not loaded\)/);
});

test('GFM task lists keep their boxes; relative links keep their href (the panel opens them in the workspace)', () => {
  const html = render('- [x] write tests\n- [ ] ship\n\nSee [src/calc.py](src/calc.py) and [abs](//evil.test/x).');
  const items = Array.from(html.querySelectorAll('li')).map(li => li.textContent?.trim());
  assert.deepEqual(items, ['☑ write tests', '☐ ship']);
  assert.equal(html.querySelector('a')?.getAttribute('href'), 'src/calc.py');
  assert.equal(
    html.querySelectorAll('a')[1]?.getAttribute('href'),
    null,
    'a protocol-relative link is not a workspace file',
  );
  assert.equal(isWorkspaceLink('src/calc.py'), true);
  assert.equal(isWorkspaceLink('https://x.test'), false);
  assert.equal(isWorkspaceLink('#top'), false);
});
