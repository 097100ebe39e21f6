// Small formatting helpers shared by the pages.
export const groupDigits = (n) => (n === null || n === undefined ? '–' : Math.round(n).toLocaleString('en-US'));

export function timeOf(at) {
  return at === null || at === undefined ? '–' : new Date(at).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export function percent(rate) {
  return rate === null || rate === undefined ? '–' : `${(rate * 100).toFixed(rate >= 0.995 || rate === 0 ? 0 : 1)} %`;
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

// The part of a writer id after its session's id (`w1`), or the whole id.
export function shortWriter(writerId, sessionId) {
  return writerId !== null && writerId !== undefined && writerId.startsWith(`${sessionId}-`) ? writerId.slice(sessionId.length + 1) : writerId ?? '–';
}
