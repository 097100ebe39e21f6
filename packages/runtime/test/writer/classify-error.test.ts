import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackModel, type LoopbackModel } from '@baton/testing';
import { classifyModelError } from '../../src/writer/classify-error.ts';

/** Scenario 18: failure classification from the real `openai` SDK's errors (loopback server, no mocks). */
describe('classifyModelError', () => {
  let model: LoopbackModel;
  let client: OpenAI;
  beforeAll(async () => {
    model = await startLoopbackModel({ mode: 'scripted' });
    client = new OpenAI({ baseURL: model.baseURL, apiKey: 'test', maxRetries: 0, timeout: 2_000 });
  });
  afterAll(async () => {
    await model.close();
  });

  async function errorFor(step: Parameters<LoopbackModel['script']>[0], signal?: AbortSignal): Promise<unknown> {
    model.script(step);
    return await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, signal ? { signal } : {}).then(
      () => new Error('no error'),
      (err: unknown) => err,
    );
  }

  it.each([
    [429, 'transient', true],
    [500, 'transient', true],
    [503, 'transient', true],
    [401, 'auth', false],
    [403, 'auth', false],
    [404, 'other', false],
  ] as const)('HTTP %i → %s (retryable %s)', async (status, kind, retryable) => {
    const { failure, status: got } = classifyModelError(await errorFor({ error: { status, message: 'x' } }));
    expect(failure).toMatchObject({ kind, retryable });
    expect(got).toBe(status);
  });

  it('a context overflow is overflow, not retryable', async () => {
    const err = await errorFor({ error: { status: 400, code: 'context_length_exceeded', message: "This model's maximum context length is 128000 tokens" } });
    expect(classifyModelError(err).failure).toMatchObject({ kind: 'overflow', retryable: false });
  });

  it('a network failure is transient, an abort is cancelled', async () => {
    expect(classifyModelError(await errorFor({ drop: true })).failure).toMatchObject({ kind: 'transient', retryable: true });
    const ac = new AbortController();
    const pending = errorFor({ stall: true }, ac.signal);
    setTimeout(() => ac.abort(), 20);
    expect(classifyModelError(await pending).failure).toMatchObject({ kind: 'cancelled', retryable: false });
  });
});

/** The same classification from `@anthropic-ai/sdk`'s errors (its client loaded whole, the classifier's classes alone). */
describe('classifyModelError on the Anthropic SDK', () => {
  let model: LoopbackModel;
  let client: Anthropic;
  beforeAll(async () => {
    model = await startLoopbackModel({ mode: 'scripted' });
    client = new Anthropic({ baseURL: model.url, apiKey: 'test', maxRetries: 0, timeout: 2_000 });
  });
  afterAll(async () => {
    await model.close();
  });

  async function errorFor(step: Parameters<LoopbackModel['script']>[0]): Promise<unknown> {
    model.script(step);
    return await client.messages.create({ model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).then(
      () => new Error('no error'),
      (err: unknown) => err,
    );
  }

  it.each([
    [429, 'transient', true],
    [529, 'transient', true],
    [401, 'auth', false],
    [404, 'other', false],
  ] as const)('HTTP %i → %s (retryable %s)', async (status, kind, retryable) => {
    const { failure, status: got } = classifyModelError(await errorFor({ error: { status, message: 'x' } }));
    expect(failure).toMatchObject({ kind, retryable });
    expect(got).toBe(status);
  });

  it('a prompt over the window is overflow; a dropped connection is transient', async () => {
    expect(classifyModelError(await errorFor({ error: { status: 400, message: 'prompt is too long: 210000 tokens > 200000 maximum' } })).failure).toMatchObject({ kind: 'overflow' });
    expect(classifyModelError(await errorFor({ drop: true })).failure).toMatchObject({ kind: 'transient', retryable: true });
  });
});
