// The composer: the prompt with its history (Up/Down), the context chips waiting to be sent, `/` completion
// and `@` mentions, and the draft kept across a re-created panel.
import type { Attachment, ImageChip, InputsRequest } from '../src/shared/webviewProtocol';
import { activeToken, applyPick, rankCandidates } from '../src/shared/mentions';
import type { ActiveToken, Candidate } from '../src/shared/mentions';
import { SLASH_COMMANDS } from '../src/shared/slashCommands';
import { $, el, host, post } from './dom';
import { PromptHistory } from './history';

const prompt = $<HTMLTextAreaElement>('prompt');
const history = new PromptHistory();

// context chips waiting in the composer (sent with the next prompt)
const chipsBox = $<HTMLElement>('chips');
let attachments: Attachment[] = [];
let images: ImageChip[] = [];
// the active editor's file, sent with the next prompt unless removed (shiro.attachActiveFile)
let currentFile: string | null = null;
let currentRemoved: string | null = null;
const currentShown = (): boolean => currentFile !== null && currentFile !== currentRemoved;
export function setActiveFile(label: string | null): void {
  if (label !== currentFile) currentRemoved = null; // another file: offered again
  currentFile = label;
  renderChips();
}
function currentChip(label: string): HTMLElement {
  const chip = el('span', 'chip-current');
  chip.title = "The active editor's file (its selection, if any) is sent with your message. \u00d7 leaves it out.";
  chip.appendChild(el('span', 'chip-label', label));
  chip.appendChild(el('span', 'chip-kind', 'current file'));
  const remove = el('button', 'chip-remove', '\u00d7');
  remove.type = 'button';
  remove.title = `Do not send ${label}`;
  remove.setAttribute('aria-label', `Do not send ${label}`);
  remove.addEventListener('click', () => {
    currentRemoved = label;
    renderChips();
    prompt.focus();
  });
  chip.appendChild(remove);
  return chip;
}
function imageChip(image: ImageChip, index: number): HTMLElement {
  const chip = el('span', 'chip chip-image');
  chip.title = `${image.name}: sent with your message as an image`;
  const thumb = el('img', 'chip-thumb');
  thumb.src = image.thumbnail;
  thumb.alt = image.name;
  chip.appendChild(thumb);
  chip.appendChild(el('span', 'chip-label', image.name));
  const remove = el('button', 'chip-remove', '×');
  remove.type = 'button';
  remove.title = `Remove ${image.name}`;
  remove.setAttribute('aria-label', `Remove ${image.name}`);
  remove.addEventListener('click', () => {
    images.splice(index, 1);
    renderChips();
    saveDraft();
    prompt.focus();
  });
  chip.appendChild(remove);
  return chip;
}
function renderChips(): void {
  chipsBox.replaceChildren();
  chipsBox.hidden = attachments.length === 0 && images.length === 0 && !currentShown();
  images.forEach((image, i) => chipsBox.appendChild(imageChip(image, i)));
  if (currentShown() && currentFile !== null) chipsBox.appendChild(currentChip(currentFile));
  attachments.forEach((a, i) => {
    const chip = el('span', 'chip');
    chip.title = a.text.length > 400 ? `${a.text.slice(0, 400)}…` : a.text;
    chip.appendChild(el('span', 'chip-label', a.label));
    const remove = el('button', 'chip-remove', '×');
    remove.type = 'button';
    remove.title = `Remove ${a.label}`;
    remove.setAttribute('aria-label', `Remove ${a.label}`);
    remove.addEventListener('click', () => {
      attachments.splice(i, 1);
      renderChips();
      saveDraft();
      prompt.focus();
    });
    chip.appendChild(remove);
    chipsBox.appendChild(chip);
  });
}
export function attachImage(image: ImageChip): void {
  if (!images.some(x => x.id === image.id)) images.push(image);
  renderChips();
  saveDraft();
}

/** Images pasted or dropped: read here, kept by the server (which checks and downscales them). */
function offerImages(files: Iterable<File>): boolean {
  let found = false;
  for (const file of files) {
    if (!file.type.startsWith('image/')) continue;
    found = true;
    const reader = new FileReader();
    reader.addEventListener('load', () => {
      if (typeof reader.result === 'string')
        post({ type: 'addImage', name: file.name || 'pasted image', dataUrl: reader.result });
    });
    reader.readAsDataURL(file);
  }
  return found;
}

export function attach(a: Attachment): void {
  if (!attachments.some(x => x.label === a.label && x.text === a.text)) attachments.push(a);
  renderChips();
  saveDraft();
}

// `/` completion and `@` mentions: a list above the prompt; Up/Down move in it, Enter/Tab pick, Esc closes
const suggestBox = $<HTMLElement>('suggest');
const SLASH: Candidate[] = Object.entries(SLASH_COMMANDS).map(([name, help]) => ({
  kind: 'command',
  value: name,
  label: `/${name}`,
  detail: help.replace(/`/g, ''),
}));
let custom: Candidate[] = [];
let suggestToken: ActiveToken | undefined;
let suggestItems: Candidate[] = [];
let suggestActive = 0;
let mentionPool: Candidate[] | undefined;
let commandsAsked = false;

function closeSuggest(): void {
  suggestToken = undefined;
  suggestItems = [];
  suggestBox.hidden = true;
  mentionPool = undefined; // the next @ asks the host again (files change)
  commandsAsked = false; // and the next / for the custom commands (a file may have been added)
}

/** The host's custom commands (`shiro/commands/list`), offered after the built-ins. */
export function offerCommands(items: Candidate[]): void {
  custom = items;
  if (suggestToken?.trigger === '/') updateSuggest();
}

function updateSuggest(): void {
  const token =
    prompt.selectionStart === prompt.selectionEnd ? activeToken(prompt.value, prompt.selectionStart) : undefined;
  if (!token) {
    closeSuggest();
    return;
  }
  if (token.trigger === '@' && !mentionPool) {
    mentionPool = [];
    post({ type: 'mentions' });
  }
  if (token.trigger === '/' && !commandsAsked) {
    commandsAsked = true;
    post({ type: 'commands' });
  }
  suggestToken = token;
  const builtIn = new Set(SLASH.map(c => c.value));
  const commands = [...SLASH, ...custom.filter(c => !builtIn.has(c.value))];
  suggestItems = rankCandidates(token.query, token.trigger === '/' ? commands : (mentionPool ?? []));
  suggestActive = Math.min(suggestActive, Math.max(0, suggestItems.length - 1));
  renderSuggest();
}

function renderSuggest(): void {
  suggestBox.replaceChildren();
  suggestBox.hidden = suggestItems.length === 0;
  suggestItems.forEach((c, i) => {
    const row = el('div', `suggest-item kind-${c.kind}${i === suggestActive ? ' active' : ''}`);
    row.setAttribute('role', 'option');
    row.setAttribute('aria-selected', String(i === suggestActive));
    row.appendChild(el('span', 'suggest-label', c.label));
    if (c.detail) row.appendChild(el('span', 'suggest-detail', c.detail));
    row.addEventListener('mousedown', e => {
      e.preventDefault();
      pickSuggestion(c);
    });
    suggestBox.appendChild(row);
  });
}

function pickSuggestion(c: Candidate): void {
  if (!suggestToken) return;
  const next = applyPick(prompt.value, suggestToken, c);
  prompt.value = next.text;
  prompt.setSelectionRange(next.caret, next.caret);
  if (c.kind !== 'command') post({ type: 'mention', kind: c.kind, value: c.value });
  closeSuggest();
  saveDraft();
  prompt.focus();
}

function send(): void {
  const text = prompt.value;
  if (!text.trim()) return;
  history.push(text);
  post({
    type: 'send',
    text,
    ...(attachments.length ? { attachments } : {}),
    ...(currentShown() ? { currentFile: true } : {}),
    ...(images.length ? { images } : {}),
  });
  prompt.value = '';
  attachments = [];
  images = [];
  renderChips();
  saveDraft();
}

function saveDraft(): void {
  host.setState({ draft: prompt.value, attachments, images });
}

const caretOnFirstLine = (): boolean => !prompt.value.slice(0, prompt.selectionStart).includes('\n');
const caretOnLastLine = (): boolean => !prompt.value.slice(prompt.selectionEnd).includes('\n');

/** Whatever the host says the prompt's history is (this session's prompts, newest last). */
export function replaceHistory(prompts: string[]): void {
  history.replace(prompts);
}

export function focusPrompt(): void {
  prompt.focus();
}

/** The host's answer to `mentions`: the pool `@` picks from, unless the picker closed meanwhile. */
export function offerMentions(items: Candidate[]): void {
  if (mentionPool) {
    mentionPool = items;
    updateSuggest();
  }
}

export function startComposer(): void {
  prompt.addEventListener(
    'keydown',
    e => {
      if (suggestBox.hidden || !suggestItems.length) return;
      let handled = true;
      if (e.key === 'ArrowDown') suggestActive = (suggestActive + 1) % suggestItems.length;
      else if (e.key === 'ArrowUp') suggestActive = (suggestActive - 1 + suggestItems.length) % suggestItems.length;
      else if ((e.key === 'Enter' || e.key === 'Tab') && !e.shiftKey && !e.isComposing) {
        const item = suggestItems[suggestActive];
        // a command typed out in full: Enter sends it (Tab still completes)
        if (e.key === 'Enter' && suggestToken?.trigger === '/' && item.value === suggestToken.query) {
          closeSuggest();
          return;
        }
        pickSuggestion(item);
      } else if (e.key === 'Escape') closeSuggest();
      else handled = false;
      if (!handled) return;
      e.preventDefault();
      e.stopImmediatePropagation();
      if (!suggestBox.hidden) renderSuggest();
    },
    { capture: true },
  );
  prompt.addEventListener('input', () => {
    suggestActive = 0;
    updateSuggest();
  });
  prompt.addEventListener('blur', () =>
    setTimeout(() => {
      if (document.activeElement !== prompt) closeSuggest();
    }, 150),
  );
  prompt.addEventListener('keydown', e => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
      return;
    }
    if (e.key === 'ArrowUp' && !e.shiftKey && caretOnFirstLine()) {
      const older = history.up(prompt.value);
      if (older !== undefined) {
        e.preventDefault();
        prompt.value = older;
        prompt.setSelectionRange(older.length, older.length);
      }
    } else if (e.key === 'ArrowDown' && !e.shiftKey && caretOnLastLine()) {
      const newer = history.down();
      if (newer !== undefined) {
        e.preventDefault();
        prompt.value = newer;
        prompt.setSelectionRange(newer.length, newer.length);
      }
    }
  });
  prompt.addEventListener('input', saveDraft);
  const composer = $<HTMLFormElement>('composer');
  composer.addEventListener('submit', e => {
    e.preventDefault();
    send();
  });
  prompt.addEventListener('paste', e => {
    if (e.clipboardData && offerImages(Array.from(e.clipboardData.files))) e.preventDefault();
  });
  composer.addEventListener('dragover', e => {
    if (e.dataTransfer && Array.from(e.dataTransfer.items).some(i => i.type.startsWith('image/'))) {
      e.preventDefault();
      e.dataTransfer.dropEffect = 'copy';
    }
  });
  composer.addEventListener('drop', e => {
    if (e.dataTransfer && offerImages(Array.from(e.dataTransfer.files))) e.preventDefault();
  });
  const saved = host.getState() as { draft?: string; attachments?: Attachment[]; images?: ImageChip[] } | undefined;
  if (saved?.draft) prompt.value = saved.draft;
  if (saved?.attachments?.length || saved?.images?.length) {
    attachments = saved.attachments ?? [];
    images = saved.images ?? [];
    renderChips();
  }
}

// A custom command's ${input:name} values: a small form above the prompt; Enter moves on (runs on the last),
// Escape cancels. The host sends the command once it has them.
const inputsBox = $<HTMLElement>('command-inputs');
let asking: InputsRequest | undefined;

function answerInputs(values: Record<string, string> | undefined): void {
  if (!asking) return;
  post({ type: 'inputs', id: asking.id, ...(values ? { values } : {}) });
  asking = undefined;
  inputsBox.hidden = true;
  inputsBox.replaceChildren();
  prompt.focus();
}

export function askInputs(ask: InputsRequest): void {
  if (asking) answerInputs(undefined); // one form at a time: an earlier one is cancelled
  asking = ask;
  inputsBox.replaceChildren();
  inputsBox.appendChild(el('div', 'command-inputs-title', `/${ask.command} needs`));
  inputsBox.appendChild(el('div', 'command-inputs-source', ask.source));
  const fields = ask.inputs.map((input, i) => {
    const id = `command-input-${i}`;
    const label = el('label', 'command-input-label', input.name);
    label.htmlFor = id;
    const field = el('input', 'command-input');
    field.id = id;
    field.type = 'text';
    field.spellcheck = false;
    field.placeholder = input.placeholder || input.name;
    field.dataset.name = input.name;
    inputsBox.append(label, field);
    return field;
  });
  const values = (): Record<string, string> => Object.fromEntries(fields.map(f => [f.dataset.name ?? '', f.value]));
  const actions = el('div', 'command-inputs-actions');
  const cancel = el('button', 'secondary', 'Cancel');
  cancel.type = 'button';
  cancel.addEventListener('click', () => answerInputs(undefined));
  const run = el('button', 'command-inputs-run', `Run /${ask.command}`);
  run.type = 'button';
  run.addEventListener('click', () => answerInputs(values()));
  actions.append(cancel, run);
  inputsBox.appendChild(actions);
  fields.forEach((field, i) =>
    field.addEventListener('keydown', e => {
      if (e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        answerInputs(undefined);
      } else if (e.key === 'Enter' && !e.isComposing) {
        e.preventDefault();
        if (i + 1 < fields.length) fields[i + 1].focus();
        else answerInputs(values());
      }
    }),
  );
  inputsBox.hidden = false;
  fields[0]?.focus();
}
