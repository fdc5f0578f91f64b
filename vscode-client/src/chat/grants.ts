// "Shiro: Show grants": the tools the user allowed for this session ("Allow … for this session" on an
// approval card), with a pick to take any of them back. The server forgets grants on new, resume and clear.
import * as vscode from 'vscode';
import { grantLabel } from './approval';
import { errorReason } from '../server/errors';
import type { ShiroServer } from '../server/server';
import { Method } from '../shared/protocol';
import type { GrantItem } from '../shared/protocol';

type Requester = Pick<ShiroServer, 'sendRequest'>;

export interface GrantPickItem extends vscode.QuickPickItem {
  grant: GrantItem;
}

export function grantPickItems(grants: GrantItem[]): GrantPickItem[] {
  return grants.map(grant => ({ label: grantLabel(grant), grant }));
}

export const NO_GRANTS =
  'Shiro: nothing is allowed for this session yet. "Allow … for this session" on an approval card adds a grant here.';

export async function showGrants(srv: Requester): Promise<void> {
  try {
    const { grants } = await srv.sendRequest(Method.grants, {});
    if (!grants.length) {
      void vscode.window.showInformationMessage(NO_GRANTS);
      return;
    }
    const picked = await vscode.window.showQuickPick(grantPickItems(grants), {
      title: 'Shiro: grants for this session',
      canPickMany: true,
      placeHolder: 'Select the grants to revoke: those calls will ask again',
    });
    if (!picked?.length) return;
    for (const item of picked) await srv.sendRequest(Method.grantsRevoke, { grant: item.grant });
    const what = picked.length === 1 ? picked[0].label.replace(/^Allow /, '') : `${picked.length} grants`;
    void vscode.window.showInformationMessage(`Shiro: revoked ${what}; those calls will ask again.`);
  } catch (error) {
    void vscode.window.showErrorMessage(`Shiro: could not list the grants: ${errorReason(error)}`);
  }
}
