// Every `shiro.*` command, each handed to the feature that does it: the one list to read for "what does command X do".
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ChatController } from './chat/controller';
import type { ChatViewProvider } from './chat/chatView';
import { showGrants } from './chat/grants';
import type { MentionSources } from './chat/mentionSources';
import type { MeterItem } from './chat/meterItem';
import { editMemory, rememberSelection, showMemory } from './memory/memory';
import type { MemoryFileSystem } from './memory/memory';
import { showDiagnostics } from './server/diagnose';
import type { ShiroServer } from './server/server';
import type { SessionCommands } from './sessions/commands';
import type { SetupCommands } from './setup/commands';
import { showHooks } from './setup/hooks';
import { showMcpServers } from './setup/mcp';
import { CLIENT_REMEMBER_COMMAND } from './shared/protocol';
import type { RememberSelectionArgs } from './shared/protocol';

/** "Attach image to chat…" from the palette: image files of the workspace, picked in the file dialog. */
async function pickImages(): Promise<readonly vscode.Uri[] | undefined> {
  return vscode.window.showOpenDialog({
    canSelectMany: true,
    defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
    filters: { Images: ['png', 'jpg', 'jpeg', 'gif', 'webp', 'bmp'] },
    openLabel: 'Attach to chat',
  });
}

/** The extension's parts the commands reach. */
export interface Parts {
  context: vscode.ExtensionContext;
  srv: ShiroServer;
  ctl: ChatController;
  chatView: ChatViewProvider;
  meter: MeterItem;
  memoryFiles: MemoryFileSystem;
  mentions: MentionSources;
  sessions: SessionCommands;
  setup: SetupCommands;
}

export function registerCommands(p: Parts): vscode.Disposable[] {
  const { context, srv, ctl, chatView, memoryFiles, mentions, sessions, setup } = p;
  const command = vscode.commands.registerCommand;
  return [
    command('shiro.resumeSession', () => sessions.resume()),
    command('shiro.renameSession', () => sessions.renameCurrent()),
    command('shiro.newSession', () => sessions.newSession()),
    command('shiro.compact', () => sessions.compact()),
    command('shiro.meterClicked', () => sessions.meterClicked()),
    command('shiro.showMemory', () => showMemory(memoryFiles)),
    command('shiro.editMemory', () => editMemory(srv)),
    command(CLIENT_REMEMBER_COMMAND, (arg?: RememberSelectionArgs) => rememberSelection(srv, arg)),
    command('shiro.showLog', () => srv.log.show(true)),
    command('shiro.mcpServers', () => showMcpServers(srv)),
    command('shiro.showHooks', () => showHooks(srv)),
    command('shiro.showGrants', () => showGrants(srv)),
    command('shiro.diagnose', () => showDiagnostics(srv, context, () => recentChatErrors(ctl))),
    command('shiro.restartServer', () => srv.start()),
    command('shiro.forgetEndpointAnswers', () => setup.forgetEndpointAnswers()),
    command('shiro.focusChat', async () => {
      await chatView.reveal(true);
      ctl.focusInput();
    }),
    command('shiro.stop', () => ctl.cancel()),
    command('shiro.addSelection', async () => {
      const attachment = mentions.editorAttachment();
      if (!attachment) return;
      await chatView.reveal(true);
      ctl.addAttachment(attachment);
    }),
    command('shiro.attachImage', async (target?: vscode.Uri) => {
      const picked = target instanceof vscode.Uri ? [target] : await pickImages();
      if (!picked?.length) return;
      await chatView.reveal(true);
      for (const uri of picked) await ctl.addImage({ name: path.basename(uri.fsPath), path: uri.fsPath });
    }),
    command('shiro.addTerminalSelection', async () => {
      const attachment = await mentions.terminalSelectionAttachment();
      await chatView.reveal(true);
      if (attachment) ctl.addAttachment(attachment);
    }),
    command('shiro.pickModel', () => setup.pickModel()),
    command('shiro.detectLocalModels', () => setup.detectLocal()),
    command('shiro.pickAgent', () => setup.pickAgent()),
    command('shiro.setup', async () => {
      await chatView.reveal();
      ctl.showSetup();
    }),
    command('shiro.openSettings', () =>
      vscode.commands.executeCommand('workbench.action.openSettings', '@ext:shiro.shiro'),
    ),
    command('shiro.setApiKey', () => setup.setApiKey()),
  ];
}

/** The chat's last ten error notices, for the Diagnose report. */
function recentChatErrors(ctl: ChatController): string[] {
  return ctl.model.state.entries
    .filter(e => e.kind === 'notice' && e.level === 'error')
    .slice(-10)
    .map(e => (e.kind === 'notice' ? `chat: ${e.text}` : ''));
}
