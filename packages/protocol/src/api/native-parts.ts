/** Reading the loosely typed objects of provider APIs: a field of an object, a string or nothing. */
export function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Part types that carry text a person wrote or read (chat, Responses and Anthropic spellings). */
const TEXT_PARTS = new Set(['text', 'input_text', 'output_text', 'refusal', 'summary_text']);

/**
 * The text of a content value in any of the three APIs: a string as is; for an array, the text of every text part
 * joined with newlines (images, files, tool calls and tool results are not text); anything else gives ''.
 */
export function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content) {
    const type = str(field(part, 'type'));
    const text = str(field(part, 'text')) ?? (type === 'refusal' ? str(field(part, 'refusal')) : undefined);
    if (text !== undefined && (type === undefined || TEXT_PARTS.has(type))) texts.push(text);
  }
  return texts.join('\n');
}

/** Tool-call arguments as text: a JSON string as it came, anything else serialised. */
export function argumentsText(args: unknown): string {
  if (typeof args === 'string') return args;
  return args === undefined ? '' : JSON.stringify(args);
}
