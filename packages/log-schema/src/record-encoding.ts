/**
 * How a stored record is encoded on disk: MessagePack as plain maps (self-describing, no shared structures, so any
 * reader decodes any record on its own) with embedded byte strings copied out of the read buffer. Every event-log
 * adapter encodes with these options (msgpackr `Packr`), so what one writes every other reads the same.
 */
export const RECORD_PACKR_OPTIONS = { useRecords: false, copyBuffers: true } as const;
