/**
 * Ends a switch over a union: the call only compiles when every member was handled, and throws if a value that
 * the types rule out arrives anyway (data from another version, a cast).
 */
export function assertNever(value: never, what = 'case'): never {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`);
}
