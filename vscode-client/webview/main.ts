// The chat panel. It renders what the extension host sends (the host owns the state, so a re-created
// webview is redrawn from the host) and posts the user's actions back. Its parts: the transcript
// (transcript.ts, entries.ts), the composer (composer.ts) and the panels around them (panels.ts).
import type { HostMessage } from '../src/shared/webviewProtocol';
import {
  askInputs,
  attach,
  attachImage,
  focusPrompt,
  offerCommands,
  offerMentions,
  replaceHistory,
  setActiveFile,
  startComposer,
} from './composer';
import { post } from './dom';
import { busy, renderInfo, renderQueue, renderTodos, setBusy, showSetup, showSetupResult, startPanels } from './panels';
import { schedule, showEntries, startTranscript } from './transcript';

window.addEventListener('message', (event: MessageEvent<HostMessage>) => {
  const m = event.data;
  switch (m.type) {
    case 'state':
      showEntries(m.state.entries);
      setBusy(m.state.busy);
      renderQueue(m.state.queue);
      renderTodos(m.state.todos);
      replaceHistory(m.history);
      break;
    case 'entry':
      schedule(m.entry);
      break;
    case 'busy':
      setBusy(m.busy);
      break;
    case 'queue':
      renderQueue(m.queue);
      break;
    case 'todos':
      renderTodos(m.todos);
      break;
    case 'history':
      replaceHistory(m.prompts);
      break;
    case 'focus':
      focusPrompt();
      break;
    case 'attach':
      attach(m.attachment);
      break;
    case 'image':
      attachImage(m.image);
      break;
    case 'activeFile':
      setActiveFile(m.label);
      break;
    case 'mentionCandidates':
      offerMentions(m.items);
      break;
    case 'commands':
      offerCommands(m.items);
      break;
    case 'askInputs':
      askInputs(m.ask);
      break;
    case 'info':
      renderInfo(m.info);
      break;
    case 'showSetup':
      showSetup();
      break;
    case 'setupResult':
      showSetupResult(m.ok, m.text);
      break;
  }
});

startPanels();
startComposer();
document.addEventListener('keydown', e => {
  if (e.key === 'Escape' && busy) {
    e.preventDefault();
    post({ type: 'cancel' });
  }
});
// "Focus on Chat View" (or a click on the view's title) focuses the webview: the prompt takes the keys
window.addEventListener('focus', () => {
  if (document.activeElement === document.body || document.activeElement === null) focusPrompt();
});
startTranscript();
post({ type: 'ready' });
