/** Message headers as the protocol uses them: `content-type` selects the JSON encoding (see `codec.ts`). */
export type Headers = Readonly<Record<string, string>>;
