/** One sample of a Prometheus text exposition: a series name, its labels and its value. */
export interface PrometheusSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * Reads a Prometheus text exposition (format 0.0.4) into its samples; `# HELP` / `# TYPE` lines are kept apart as the
 * type of each metric family. Throws on a line that is neither.
 */
export function parsePrometheusText(text: string): { samples: PrometheusSample[]; types: Map<string, string> } {
  const samples: PrometheusSample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type?.[1] !== undefined && type[2] !== undefined) types.set(type[1], type[2]);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (m?.[1] === undefined || m[3] === undefined) throw new Error(`not a Prometheus sample: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) if (l[1] !== undefined) labels[l[1]] = (l[2] ?? '').replace(/\\n/g, '\n').replace(/\\(.)/g, '$1');
    const raw = m[3];
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    samples.push({ name: m[1], labels, value });
  }
  return { samples, types };
}

/** The sum of the samples named `name` whose labels include every one of `labels`. */
export function sampleSum(samples: readonly PrometheusSample[], name: string, labels: Readonly<Record<string, string>> = {}): number {
  let sum = 0;
  for (const s of samples) if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  return sum;
}
