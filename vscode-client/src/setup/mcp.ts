// "Shiro: MCP servers": the servers Shiro uses as an MCP client (status, tools, trust), and the trust
// prompt that shows the exact command line a project server will run before it ever starts.
import * as vscode from 'vscode';
import { errorReason } from '../server/errors';
import type { ShiroServer } from '../server/server';
import { Method } from '../shared/protocol';
import type { McpServerInfo } from '../shared/protocol';

type Requester = Pick<ShiroServer, 'sendRequest'>;

const ICONS: Record<McpServerInfo['status'], string> = {
  running: '$(pass-filled)',
  stopped: '$(circle-outline)',
  untrusted: '$(shield)',
  error: '$(error)',
};

export interface McpPickItem {
  label: string;
  description: string;
  detail: string;
  name: string;
}

export function mcpPickItems(servers: McpServerInfo[]): McpPickItem[] {
  return servers.map(s => {
    const tools = s.tools.length
      ? `${s.tools.length} tool${s.tools.length === 1 ? '' : 's'}: ${s.tools.join(', ')}`
      : 'tools not listed yet';
    const state = s.status === 'untrusted' ? 'untrusted — select to review and trust' : s.status;
    return {
      label: `${ICONS[s.status]} ${s.name}`,
      description: `${state} · ${s.scope === 'user' ? 'user' : s.source}`,
      detail: s.error ? `${s.error} · ${s.command}` : `${tools} · ${s.command}`,
      name: s.name,
    };
  });
}

/** The modal text asking for trust: what runs, exactly, and where the entry came from. */
export function trustQuestion(server: McpServerInfo): string {
  const what =
    server.command.startsWith('http://') || server.command.startsWith('https://')
      ? `connect to ${server.command}`
      : `run this command on your machine:\n\n${server.command}`;
  return (
    `Trust the MCP server "${server.name}" from ${server.source}? Shiro will ${what}\n\n` +
    'Its tools still ask before each call. If the entry changes, Shiro asks again.'
  );
}

export const TRUST = 'Trust and allow it to run';
export const UNTRUST = 'Stop trusting it';

export async function showMcpServers(srv: Requester): Promise<void> {
  try {
    const listing = await srv.sendRequest(Method.mcpList, {});
    for (const problem of listing.problems ?? []) void vscode.window.showWarningMessage(`Shiro: ${problem}`);
    if (!listing.servers.length) {
      void vscode.window.showInformationMessage(
        'Shiro: no MCP servers are configured (.mcp.json, .vscode/mcp.json or the user mcp.json).',
      );
      return;
    }
    const pick = await vscode.window.showQuickPick(mcpPickItems(listing.servers), {
      title: 'Shiro: MCP servers',
      placeHolder: 'Select a server to trust or untrust it',
      matchOnDetail: true,
    });
    const server = pick && listing.servers.find(s => s.name === pick.name);
    if (!server || server.scope === 'user') return;
    if (server.trusted) {
      const choice = await vscode.window.showWarningMessage(
        `Stop trusting the MCP server "${server.name}"?`,
        { modal: true },
        UNTRUST,
      );
      if (choice === UNTRUST) await srv.sendRequest(Method.mcpTrust, { name: server.name, trusted: false });
      return;
    }
    const choice = await vscode.window.showWarningMessage(trustQuestion(server), { modal: true }, TRUST);
    if (choice !== TRUST) return;
    await srv.sendRequest(Method.mcpTrust, { name: server.name, trusted: true });
    void vscode.window.showInformationMessage(`Shiro: trusted "${server.name}"; it starts with the next chat.`);
  } catch (error) {
    void vscode.window.showErrorMessage(`Shiro: MCP servers: ${errorReason(error)}`);
  }
}
