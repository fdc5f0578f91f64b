import * as vscode from 'vscode';
import type { ChatController } from '../chat/controller';
import { errorReason } from '../server/errors';
import type { ShiroServer } from '../server/server';
import { Method, asResumeResult } from '../shared/protocol';
import type { SessionInfo } from '../shared/protocol';
import {
  listParams,
  savedPreviousMessage,
  SessionSearch,
  sessionPickItems,
  titleProblem,
  unmatchableLabel,
} from './sessions';
import { ROOT_PICK_TITLE, chooseRoot } from './workspaceRoot';
import { foldersPending, knownFolders } from '../server/workspaceFolders';

/** Resume, rename, delete, start and compact sessions: the pickers and prompts around the shiro/session/* requests. */
export class SessionCommands {
  constructor(
    private readonly srv: ShiroServer,
    private readonly ctl: ChatController,
    private readonly revealChat: () => Promise<void>,
  ) {}

  private async listSessions(typed: string): Promise<SessionInfo[]> {
    return (await this.srv.sendRequest(Method.sessionList, listParams(typed))).sessions;
  }

  /** Ask for a new title; undefined when cancelled. Errors are the server's words. */
  private async askTitle(id: string, current: string): Promise<SessionInfo | undefined> {
    const title = await vscode.window.showInputBox({
      title: 'Shiro: Rename session',
      prompt: 'A title of your own; it is kept when the session is resumed later.',
      value: current === 'untitled' || current === '(untitled)' ? '' : current,
      validateInput: titleProblem,
    });
    if (title === undefined) return undefined;
    return this.srv.sendRequest(Method.sessionRename, { id, title });
  }

  async renameCurrent(): Promise<void> {
    try {
      const live = await this.srv.sendRequest(Method.sessionCurrent, {});
      const renamed = await this.askTitle(live.id, live.title);
      if (renamed) void vscode.window.showInformationMessage(`Shiro: this session is now "${renamed.title}".`);
    } catch (error) {
      void vscode.window.showErrorMessage(`Shiro: could not rename the session: ${errorReason(error)}`);
    }
  }

  async resume(): Promise<void> {
    try {
      const first = await this.listSessions('');
      if (!first.length) {
        void vscode.window.showInformationMessage('Shiro: no saved sessions in this workspace yet.');
        return;
      }
      const chosen = await this.pickSession(first);
      if (!chosen) return;
      await this.resumeById(chosen);
    } catch (error) {
      void vscode.window.showErrorMessage(`Shiro: could not resume: ${errorReason(error)}`);
    }
  }

  /** The Resume picker: newest first, searched on the server as the user types; rename and delete buttons. */
  private async pickSession(first: SessionInfo[]): Promise<string | undefined> {
    const trash = { iconPath: new vscode.ThemeIcon('trash'), tooltip: 'Delete this session…' };
    const pencil = { iconPath: new vscode.ThemeIcon('edit'), tooltip: 'Rename this session…' };
    type Item = vscode.QuickPickItem & { sessionId: string; title: string };
    const pick = vscode.window.createQuickPick<Item>();
    const fill = (query: string, sessions: SessionInfo[]): void => {
      // Search results come from the server, ranked: alwaysShow keeps the picker from filtering them
      // again, and an unmatchable label keeps it from re-sorting them by its own label match.
      pick.items = sessionPickItems(sessions, new Date(), this.ctl.session?.id, query.trim() !== '').map(i => ({
        ...i,
        title: i.label,
        label: unmatchableLabel(i.label),
        alwaysShow: true,
        buttons: i.current ? [pencil] : [pencil, trash],
      }));
    };
    const search = new SessionSearch(
      typed => this.listSessions(typed),
      fill,
      error => {
        pick.items = [];
        pick.placeholder = `Search failed: ${errorReason(error)}`;
      },
      busy => {
        pick.busy = busy;
      },
    );
    pick.title = 'Shiro: Resume session';
    pick.placeholder = 'Newest first; type to search the messages of every session';
    pick.matchOnDescription = true;
    pick.matchOnDetail = true;
    fill('', first);
    pick.onDidChangeValue(value => search.type(value));
    let asking = false; // an input box or dialog hides the picker for a moment: do not close it then
    pick.onDidTriggerItemButton(async e => {
      if (e.button === pencil) {
        asking = true;
        try {
          const renamed = await this.askTitle(e.item.sessionId, e.item.title);
          if (renamed) void vscode.window.showInformationMessage(`Shiro: renamed to "${renamed.title}".`);
        } catch (error) {
          void vscode.window.showErrorMessage(`Shiro: could not rename the session: ${errorReason(error)}`);
        } finally {
          asking = false;
        }
        pick.show();
        await search.run();
        return;
      }
      const confirm = await vscode.window.showWarningMessage(
        `Delete the session "${e.item.title}"? Its transcript is removed from disk.`,
        { modal: true },
        'Delete',
      );
      if (confirm !== 'Delete') return;
      try {
        await this.srv.sendRequest(Method.sessionDelete, { id: e.item.sessionId });
        await search.run();
        void vscode.window.showInformationMessage(`Shiro: deleted "${e.item.title}".`);
      } catch (error) {
        void vscode.window.showErrorMessage(`Shiro: could not delete the session: ${errorReason(error)}`);
      }
    });
    const chosen = await new Promise<Item | undefined>(resolve => {
      pick.onDidAccept(() => {
        resolve(pick.selectedItems[0]);
        pick.hide();
      });
      pick.onDidHide(() => {
        if (asking) return;
        search.dispose();
        resolve(undefined);
        pick.dispose();
      });
      pick.show();
    });
    return chosen?.sessionId;
  }

  async resumeById(id: string): Promise<void> {
    const result = await this.srv.sendRequest(Method.sessionResume, { id });
    this.ctl.loadResumed(asResumeResult(result));
    this.ctl.model.addNotice(
      `Resumed ${result.session.id.slice(0, 8)} (${result.session.messageCount} messages): ${result.session.title}`,
    );
    await this.revealChat();
  }

  /** Multi-root: the active editor's folder, or the user's pick when no editor is in a folder. */
  root(bound: boolean): string | undefined | Promise<string | undefined> {
    if (foldersPending()) return knownFolders().then(folders => this.rootAmong(folders, bound));
    return this.rootAmong(vscode.workspace.workspaceFolders ?? [], bound);
  }

  private rootAmong(
    known: readonly vscode.WorkspaceFolder[],
    bound: boolean,
  ): string | undefined | Promise<string | undefined> {
    const folders = known.map(f => ({ name: f.name, fsPath: f.uri.fsPath }));
    const editor = vscode.window.activeTextEditor;
    const active = editor ? vscode.workspace.getWorkspaceFolder(editor.document.uri)?.uri.fsPath : undefined;
    const choice = chooseRoot(folders, active, bound);
    if (choice.kind === 'none') return undefined;
    if (choice.kind === 'folder') return choice.root;
    return Promise.resolve(
      vscode.window.showQuickPick(choice.items, { title: ROOT_PICK_TITLE, ignoreFocusOut: true }),
    ).then(pick => pick?.root);
  }

  async newSession(): Promise<void> {
    try {
      const root = await this.root(false);
      const r = await this.srv.sendRequest(Method.sessionNew, root ? { root } : {});
      this.ctl.startedFresh(r);
      const message = savedPreviousMessage(r.previous);
      this.ctl.model.addNotice(message);
      void vscode.window.showInformationMessage(`Shiro: ${message}`);
    } catch (error) {
      void vscode.window.showErrorMessage(`Shiro: could not start a new session: ${errorReason(error)}`);
    }
  }

  async compact(): Promise<void> {
    try {
      const r = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Shiro: compacting the context…' },
        () => this.srv.sendRequest(Method.sessionCompact, {}),
      );
      this.ctl.compacted(r);
      void vscode.window.showInformationMessage(
        `Shiro: compacted ${r.before} → ${r.after} messages (all kept in the transcript).`,
      );
    } catch (error) {
      void vscode.window.showErrorMessage(`Shiro: could not compact: ${errorReason(error)}`);
    }
  }

  /** A click on the context meter: the log when the server is down, else an offer to compact. */
  /** The status bar item: the chat (it works before the first message too); the log when the server is down. */
  async meterClicked(): Promise<void> {
    if (!this.srv.isRunning) {
      this.srv.log.show(true);
      return;
    }
    await vscode.commands.executeCommand('shiro.focusChat');
  }
}
