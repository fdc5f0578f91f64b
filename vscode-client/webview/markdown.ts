// Model markdown → safe HTML: `marked` renders, DOMPurify sanitizes (no scripts, no event handlers,
// no javascript:/data: links). Links open only through the panel's click handler / VS Code's own link handling.
//
// Model output must never pass for Shiro's UI: every `class`, `id`, `name` and `data-*` attribute is
// dropped (the panel's CSS and scripts key on those), except a code block's `language-*` class, which
// only the highlighter reads. Remote images and media are never fetched: their sources are dropped here
// (the CSP blocks them too).
import DOMPurify from 'dompurify';
import type { DOMPurify as Purify, WindowLike } from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import csharp from 'highlight.js/lib/languages/csharp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Marked } from 'marked';

const languages = {
  bash,
  c,
  cpp,
  csharp,
  css,
  diff,
  go,
  ini,
  java,
  javascript,
  json,
  markdown,
  python,
  rust,
  shell,
  sql,
  typescript,
  xml,
  yaml,
};
for (const [name, language] of Object.entries(languages)) hljs.registerLanguage(name, language);

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  // GFM task lists: the sanitizer drops <input>, so a box is drawn as a character (and read as one)
  renderer: { checkbox: ({ checked }) => (checked ? '☑ ' : '☐ ') },
});

const SAFE_SCHEME = /^(?:https?:|mailto:|#|vscode:|file:)/i;
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const CODE_LANGUAGE = /^language-[\w+#.-]{1,40}$/;
const SAFE_IMAGE = /^data:image\/(?:png|gif|jpeg|webp);/i;

export type Sanitizer = Purify;

/** A link to a workspace file: a relative path (`src/calc.py`, `./a.md#L3`), no scheme, no `//host`. */
export function isWorkspaceLink(href: string): boolean {
  const h = href.trim();
  return h.length > 0 && !HAS_SCHEME.test(h) && !h.startsWith('//') && !h.startsWith('#');
}

export function createSanitizer(win: WindowLike): Sanitizer {
  const purify = DOMPurify(win);
  purify.addHook('afterSanitizeAttributes', node => {
    const el = node as Element;
    if (!el.removeAttribute) return;
    el.removeAttribute('id');
    el.removeAttribute('name');
    const cls = el.getAttribute('class');
    if (cls !== null && !(el.tagName === 'CODE' && CODE_LANGUAGE.test(cls))) el.removeAttribute('class');
    if (el.tagName === 'A') {
      const href = (el.getAttribute('href') ?? '').trim();
      if (!SAFE_SCHEME.test(href) && !isWorkspaceLink(href)) el.removeAttribute('href');
      el.setAttribute('rel', 'noopener noreferrer');
    }
    if (el.tagName === 'IMG') {
      const src = el.getAttribute('src') ?? '';
      if (!SAFE_IMAGE.test(src)) {
        el.removeAttribute('src');
        if (/^https?:|^\/\//i.test(src.trim()))
          el.setAttribute('alt', `${el.getAttribute('alt') || 'image'} (remote image not loaded)`);
      }
    }
  });
  return purify;
}

export function renderMarkdown(text: string, purify: Sanitizer): string {
  const html = marked.parse(text) as string;
  return purify.sanitize(html, {
    USE_PROFILES: { html: true },
    ALLOW_DATA_ATTR: false,
    FORBID_TAGS: [
      'style',
      'form',
      'input',
      'button',
      'textarea',
      'select',
      'iframe',
      'object',
      'embed',
      'video',
      'audio',
      'source',
      'track',
      'picture',
      'link',
      'meta',
      'base',
      'dialog',
    ],
    FORBID_ATTR: ['style', 'srcset', 'poster', 'background', 'formaction', 'ping'],
  });
}

/** The language of a sanitized code block (`language-py` → `py`), or '' when the model gave none. */
export function codeLanguage(code: Element): string {
  const cls = (code.getAttribute('class') ?? '').split(/\s+/).find(c => CODE_LANGUAGE.test(c));
  return cls ? cls.slice('language-'.length) : '';
}

/**
 * Highlight sanitized code blocks in place. highlight.js escapes the code text itself and adds only
 * `<span class="hljs-…">`, so the result stays inert; an unknown language is left as plain text.
 */
export function highlightCode(root: Element): void {
  for (const code of Array.from(root.querySelectorAll('pre > code'))) {
    const language = codeLanguage(code);
    if (!language || !hljs.getLanguage(language)) continue;
    const source = code.textContent ?? '';
    if (source.length > 100_000) continue; // a huge block stays plain (and fast)
    code.innerHTML = hljs.highlight(source, { language, ignoreIllegals: true }).value;
    code.classList.add('hljs');
  }
}
