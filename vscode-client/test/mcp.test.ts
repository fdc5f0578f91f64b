import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mcpPickItems, trustQuestion } from '../src/setup/mcp';
import type { McpServerInfo } from '../src/shared/protocol';

const server = (over: Partial<McpServerInfo>): McpServerInfo => ({
  name: 'github',
  source: '.mcp.json',
  scope: 'project',
  status: 'untrusted',
  trusted: false,
  tools: [],
  command: 'npx -y @modelcontextprotocol/server-github',
  error: null,
  ...over,
});

test('the QuickPick shows status, tools and the exact command', () => {
  const [untrusted, running] = mcpPickItems([
    server({}),
    server({
      name: 'docs',
      status: 'running',
      trusted: true,
      scope: 'user',
      tools: ['search', 'fetch'],
      command: 'http://127.0.0.1:9/mcp',
    }),
  ]);
  assert.match(untrusted.description, /untrusted — select to review and trust · \.mcp\.json/);
  assert.match(untrusted.detail, /npx -y @modelcontextprotocol\/server-github$/);
  assert.equal(running.description, 'running · user');
  assert.equal(running.detail, '2 tools: search, fetch · http://127.0.0.1:9/mcp');
  assert.equal(mcpPickItems([server({ status: 'error', error: 'exited' })])[0].detail.startsWith('exited · npx'), true);
});

test('the trust question quotes what will run', () => {
  const q = trustQuestion(server({}));
  assert.match(q, /Trust the MCP server "github" from \.mcp\.json\?/);
  assert.ok(q.includes('run this command on your machine:\n\nnpx -y @modelcontextprotocol/server-github'));
  assert.match(trustQuestion(server({ command: 'https://mcp.example/x' })), /connect to https:\/\/mcp\.example\/x/);
});
