import { describe, expect, it } from 'vitest';
import { agentKeyOf } from '../src/agent-key.ts';

describe('agentKeyOf', () => {
  it("takes Anthropic's x-api-key first, else the bearer token", () => {
    expect(agentKeyOf({ 'x-api-key': 'sk-ant-1', authorization: 'Bearer sk-other' })).toBe('sk-ant-1');
    expect(agentKeyOf({ authorization: 'Bearer sk-openai-2' })).toBe('sk-openai-2');
    expect(agentKeyOf({ authorization: 'bearer   sk-openai-3  ' })).toBe('sk-openai-3');
  });

  it('finds none in a call without a usable key', () => {
    expect(agentKeyOf({})).toBeNull();
    expect(agentKeyOf({ 'x-api-key': '  ' })).toBeNull();
    expect(agentKeyOf({ authorization: 'Basic dXNlcjpwYXNz' })).toBeNull();
    expect(agentKeyOf({ authorization: 'Bearer two tokens' })).toBeNull();
    expect(agentKeyOf({ 'x-api-key': ['a', 'b'] })).toBeNull();
  });
});
