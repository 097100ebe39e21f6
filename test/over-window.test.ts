import { DaemonMetrics } from '@baton/runtime';
import { parsePrometheusText, sampleSum } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './support/daemon-harness.ts';

/**
 * A request the provider counts above the model's window should never happen once Baton fits what it sends; when it
 * does anyway (a provider that counts far more than the session learnt, an agent that sends past its rebuilt context),
 * it is visible: in the session's state (`runtime.sessions`, `baton sessions`) and counted in `/metrics`.
 */
describe('a request over the model window is visible and counted', () => {
  let h: Harness;
  const metrics = new DaemonMetrics();
  beforeAll(async () => {
    h = await startHarness({ daemon: { observer: metrics } });
    metrics.watch(h.daemon);
  });
  afterAll(async () => {
    await h.stop();
  });

  it('from a reported usage above the window and from a provider refusal passed on with a rebuild', async () => {
    const open = await h.client.open({ project_id: 'p', model: { id: 'm', context_window: 20_000 }, checkpoint: { enabled: false } });
    const sid = open.session_id;
    await h.client.append(sid, [
      { id: 'u1', role: 'user', content: 'Fix the build.' },
      { id: 'a1', role: 'assistant', content: 'On it.', finish_reason: 'stop', usage: { prompt_tokens: 9_000, completion_tokens: 10 } },
    ]);
    let state = (await h.client.status(sid)).state;
    expect(state.last_prompt_tokens).toBe(9_000);
    expect(state.over_window ?? 0).toBe(0);

    // The provider counted the next request above the 20 000-token window (and answered it all the same).
    await h.client.append(sid, [
      { id: 'u2', role: 'user', content: 'Go on.' },
      { id: 'a2', role: 'assistant', content: 'Done.', finish_reason: 'stop', usage: { prompt_tokens: 21_000, completion_tokens: 10 } },
    ]);
    state = (await h.client.status(sid)).state;
    expect(state).toMatchObject({ last_prompt_tokens: 21_000, over_window: 1 });

    // A provider that refused a request as too long, passed on with the rebuild the agent then asks for.
    await h.client.rebuild(sid, { reason: 'overflow', provider_refused: { tokens: 23_000 } });
    const listed = (await h.client.runtimeSessions({})).sessions.find((s) => s.session_id === sid);
    expect(listed?.state?.over_window).toBe(2);

    const { samples } = parsePrometheusText(await metrics.registry.metrics());
    expect(sampleSum(samples, 'baton_requests_over_window_total')).toBe(2);
  });
});
