// Model markdown → safe HTML: `marked` renders, DOMPurify sanitizes (no scripts, no event handlers,
// no javascript:/data: links). Links open only through VS Code's own link handling.
import DOMPurify from 'dompurify';
import type { DOMPurify as Purify, WindowLike } from 'dompurify';
import { Marked } from 'marked';

const marked = new Marked({ gfm: true, breaks: false, async: false });

const SAFE_URL = /^(?:https?:|mailto:|#|vscode:|file:)/i;

export type Sanitizer = Purify;

export function createSanitizer(win: WindowLike): Sanitizer {
  const purify = DOMPurify(win);
  purify.addHook('afterSanitizeAttributes', node => {
    const el = node as Element;
    if (el.tagName === 'A') {
      const href = el.getAttribute('href') ?? '';
      if (!SAFE_URL.test(href.trim())) el.removeAttribute('href');
      el.setAttribute('rel', 'noopener noreferrer');
    }
    if (el.tagName === 'IMG') {
      const src = el.getAttribute('src') ?? '';
      if (!/^(?:https?:|data:image\/(?:png|gif|jpeg|webp);)/i.test(src)) el.removeAttribute('src');
    }
  });
  return purify;
}

export function renderMarkdown(text: string, purify: Sanitizer): string {
  const html = marked.parse(text) as string;
  return purify.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed'],
    FORBID_ATTR: ['style'],
  });
}
