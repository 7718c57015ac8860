/**
 * acpHostToolName: which ACP tool call is a call of the session's host tools, from the names the
 * pinned agents were seen to use (reference host-tools.md §3), and what is not one of ours.
 */
import { describe, expect, it } from 'vitest';
import { acpHostToolName } from '../../src/engines/acp/host-tool-names.js';

const toolbox = { has: (name: string) => name === 'add' || name === 'my__tool' };

describe('acpHostToolName', () => {
  it('recognises each agent\'s naming', () => {
    expect(acpHostToolName({ toolCallId: 'mcp_host_add__mcp_host_add_1795726657698_0', title: 'add (host MCP Server)' }, toolbox)).toBe('add');
    expect(acpHostToolName({ toolCallId: 'mcp_host_add__mcp_host_add_1795726657698_0' }, toolbox)).toBe('add');
    expect(acpHostToolName({ toolCallId: 'call_1', title: 'Tool: host/add', rawInput: { server: 'host', tool: 'add', arguments: {} } }, toolbox)).toBe('add');
    expect(acpHostToolName({ toolCallId: 'call_1', title: 'Approve MCP tool call', rawInput: { server: 'host', tool: 'add' } }, toolbox)).toBe('add');
    expect(acpHostToolName({ toolCallId: 'toolu_1', title: 'mcp__host__add' }, toolbox)).toBe('add');
    expect(acpHostToolName({ toolCallId: 'toolu_1', name: 'mcp__host__my__tool' }, toolbox)).toBe('my__tool');
  });

  it('is not fooled by other servers, unknown tools or the agent\'s own tools', () => {
    expect(acpHostToolName({ toolCallId: 'x', title: 'add (other MCP Server)' }, toolbox)).toBeUndefined();
    expect(acpHostToolName({ toolCallId: 'x', title: 'Tool: other/add', rawInput: { server: 'other', tool: 'add' } }, toolbox)).toBeUndefined();
    expect(acpHostToolName({ toolCallId: 'x', title: 'mcp__host__rm' }, toolbox)).toBeUndefined();
    expect(acpHostToolName({ toolCallId: 'x', title: 'add' }, toolbox)).toBeUndefined();
    expect(acpHostToolName({ toolCallId: 'run_shell_command__run_shell_command_1_0', title: 'ls' }, toolbox)).toBeUndefined();
    expect(acpHostToolName({ toolCallId: 'toolu_1', title: 'mcp__host__add' }, undefined)).toBeUndefined();
  });
});
