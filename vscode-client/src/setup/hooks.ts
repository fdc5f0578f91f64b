// "Shiro: Show hooks": every hook, where it comes from and whether it runs; a repository's hook (.shiro/settings.json)
// runs only once trusted here, after its exact command was shown. Editing a trusted entry makes it untrusted again.
import * as vscode from 'vscode';
import { errorReason } from '../server/errors';
import type { ShiroServer } from '../server/server';
import { Method } from '../shared/protocol';
import type { HookInfo, HooksListResult } from '../shared/protocol.gen';

type Requester = Pick<ShiroServer, 'sendRequest'>;

export interface HookPickItem {
  label: string;
  description: string;
  detail: string;
  /** The hook's id, or `all` for the item that trusts every untrusted one. */
  id: string;
}

function state(h: HookInfo, restricted: boolean): string {
  if (restricted) return 'does not run (restricted mode)';
  if (h.scope === 'user') return 'runs (your settings)';
  return h.trusted ? 'trusted, runs' : 'NOT trusted: does not run — select to review';
}

export function hookPickItems(listing: HooksListResult): HookPickItem[] {
  const icon = (h: HookInfo): string => (h.runs ? '$(pass-filled)' : h.trusted ? '$(circle-outline)' : '$(shield)');
  const items = listing.hooks.map(h => ({
    label: `${icon(h)} ${h.event}${h.matcher ? ` [${h.matcher}]` : ''}`,
    description: `${state(h, listing.restricted)} · ${h.source}`,
    detail: h.command,
    id: h.id,
  }));
  const untrusted = listing.hooks.filter(h => !h.trusted);
  if (untrusted.length > 1)
    items.push({
      label: `$(shield) Trust all ${untrusted.length} hooks of .shiro/settings.json…`,
      description: 'each command is shown first',
      detail: untrusted.map(h => h.command).join(' · '),
      id: 'all',
    });
  return items;
}

/** The modal text asking for trust: exactly what runs, on which event, and where it came from. */
export function hookTrustQuestion(hooks: HookInfo[]): string {
  const lines = hooks.map(h => `${h.event}${h.matcher ? ` [${h.matcher}]` : ''}: ${h.command}`);
  const which = hooks.length === 1 ? 'this hook' : `these ${hooks.length} hooks`;
  return (
    `Trust ${which} from ${hooks[0].source}? Shiro will run on your machine, with your access ` +
    `(without the provider's keys):\n\n${lines.join('\n\n')}\n\n` +
    'If an entry changes, Shiro asks again.'
  );
}

export const TRUST_HOOK = 'Trust and let it run';
export const UNTRUST_HOOK = 'Stop trusting it';

export async function showHooks(srv: Requester): Promise<void> {
  try {
    const listing = await srv.sendRequest(Method.hooksList, {});
    for (const problem of listing.problems) void vscode.window.showWarningMessage(`Shiro: ${problem}`);
    if (!listing.hooks.length) {
      void vscode.window.showInformationMessage(
        'Shiro: no hooks are configured (a "hooks" key in ~/.shiro-neko/settings.json or .shiro/settings.json).',
      );
      return;
    }
    const pick = await vscode.window.showQuickPick(hookPickItems(listing), {
      title: 'Shiro: Hooks',
      placeHolder: 'Select a hook of .shiro/settings.json to trust or untrust it',
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!pick) return;
    const chosen =
      pick.id === 'all' ? listing.hooks.filter(h => !h.trusted) : listing.hooks.filter(h => h.id === pick.id);
    const hook = chosen[0];
    if (!hook) return;
    if (hook.scope === 'user') {
      void vscode.window.showInformationMessage(`Shiro: this hook is yours; edit ${hook.source} to change it.`);
      return;
    }
    if (pick.id !== 'all' && hook.trusted) {
      const choice = await vscode.window.showWarningMessage(
        `Stop trusting this ${hook.event} hook?\n\n${hook.command}`,
        { modal: true },
        UNTRUST_HOOK,
      );
      if (choice === UNTRUST_HOOK) await srv.sendRequest(Method.hooksTrust, { ids: [hook.id], trusted: false });
      return;
    }
    const choice = await vscode.window.showWarningMessage(hookTrustQuestion(chosen), { modal: true }, TRUST_HOOK);
    if (choice !== TRUST_HOOK) return;
    await srv.sendRequest(Method.hooksTrust, { ids: [hook.id, ...chosen.slice(1).map(h => h.id)], trusted: true });
    void vscode.window.showInformationMessage(
      `Shiro: trusted ${chosen.length === 1 ? 'the hook' : `${chosen.length} hooks`}; it runs from the next chat.`,
    );
  } catch (error) {
    void vscode.window.showErrorMessage(`Shiro: hooks: ${errorReason(error)}`);
  }
}
