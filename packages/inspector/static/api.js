// Reads the inspector's JSON API; an error reply becomes an Error carrying the server's message.
export async function getJson(path) {
  const res = await fetch(path, { cache: 'no-store' });
  const body = await res.json().catch(() => ({ error: `${res.status} ${res.statusText}` }));
  if (!res.ok) throw new Error(body.error ?? `${res.status} ${res.statusText}`);
  return body;
}

// Calls `onChange` whenever `read()` answers something new, asking once a second until `stop()`.
export function poll(read, onChange, everyMs = 1000) {
  let last;
  let stopped = false;
  let timer;
  const tick = async () => {
    try {
      const value = await read();
      if (!stopped && value !== last) {
        const first = last === undefined;
        last = value;
        if (!first) await onChange(value);
      }
    } catch {
      // a failed poll (the server restarting, say) is tried again on the next tick
    }
    if (!stopped) timer = setTimeout(tick, everyMs);
  };
  timer = setTimeout(tick, 0);
  return { stop() { stopped = true; clearTimeout(timer); } };
}
