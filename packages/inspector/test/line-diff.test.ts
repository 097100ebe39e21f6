import { describe, expect, it } from 'vitest';
import { lineDiff } from '../src/checkpoint-history.ts';

describe('lineDiff', () => {
  it('marks every line of the new text added against nothing', () => {
    expect(lineDiff('', 'a\nb\n')).toEqual([
      { kind: 'added', text: 'a' },
      { kind: 'added', text: 'b' },
    ]);
  });

  it('keeps the lines both sides share and marks a replaced line removed then added', () => {
    expect(lineDiff('# T\n> old ask\n- x\n', '# T\n> new ask\n- x\n- y\n')).toEqual([
      { kind: 'same', text: '# T' },
      { kind: 'removed', text: '> old ask' },
      { kind: 'added', text: '> new ask' },
      { kind: 'same', text: '- x' },
      { kind: 'added', text: '- y' },
    ]);
  });

  it('gives nothing for two empty texts and only same lines for equal ones', () => {
    expect(lineDiff('', '')).toEqual([]);
    expect(lineDiff('a\nb', 'a\nb').every((l) => l.kind === 'same')).toBe(true);
  });
});
