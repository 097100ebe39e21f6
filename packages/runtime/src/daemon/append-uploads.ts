import { AppendRequestSchema, MAX_UPLOAD_BYTES, ProtocolError, type AppendReply, type Message, type PartRequest, type PartReply } from '@baton/protocol';

type Body<T> = Omit<T, 'ok'>;

/** Uploads held at once (the oldest is dropped past this: its client sends it again). */
const MAX_UPLOADS = 32;
/** Bytes of all uploads held at once. */
const MAX_HELD_BYTES = 2 * MAX_UPLOAD_BYTES;

interface Upload {
  readonly count: number;
  readonly parts: (Buffer | undefined)[];
  received: number;
  bytes: number;
}

/**
 * Append requests too large for one message, as their parts arrive (`session.<sid>.part`): held in memory per session
 * and upload id, bounded in number and bytes, and appended once the last part is in — as one append request, so its
 * messages are logged, deduplicated and folded exactly as those of an append that came whole. Nothing of an upload
 * is logged before it is complete: a daemon that stops meanwhile loses only parts its client sends again.
 */
export class AppendUploads {
  readonly #uploads = new Map<string, Upload>();
  #bytes = 0;

  /** Takes one part; with the last one, appends the whole request through `append`. */
  async part(sessionId: string, req: PartRequest, append: (messages: readonly Message[]) => Promise<Body<AppendReply>>): Promise<Body<PartReply>> {
    const id = `${sessionId}/${req.upload}`;
    let upload = this.#uploads.get(id);
    if (upload !== undefined && upload.count !== req.count) throw new ProtocolError('bad_request', `upload ${req.upload} has ${upload.count} parts, not ${req.count}`);
    if (upload === undefined) {
      upload = { count: req.count, parts: new Array<Buffer | undefined>(req.count), received: 0, bytes: 0 };
      this.#uploads.set(id, upload);
    }
    const data = Buffer.from(req.data, 'base64');
    const had = upload.parts[req.index];
    if (had === undefined) upload.received++;
    const bytes = upload.bytes - (had?.length ?? 0) + data.length;
    if (bytes > MAX_UPLOAD_BYTES) {
      this.#drop(id);
      throw new ProtocolError('too_large', `upload ${req.upload} is over ${MAX_UPLOAD_BYTES} bytes`);
    }
    this.#bytes += bytes - upload.bytes;
    upload.bytes = bytes;
    upload.parts[req.index] = data;
    this.#makeRoom(id);
    if (upload.received < upload.count) return { received: upload.received };
    this.#drop(id);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(upload.parts as Buffer[]).toString('utf8'));
    } catch {
      throw new ProtocolError('bad_request', `upload ${req.upload} is not the JSON text of an append request`);
    }
    const parsed = AppendRequestSchema.safeParse(body);
    if (!parsed.success) throw new ProtocolError('bad_request', `upload ${req.upload} is not an append request`, parsed.error.issues.slice(0, 5).map((i) => ({ path: i.path.join('.'), message: i.message })));
    return { received: upload.count, append: await append(parsed.data.messages) };
  }

  #drop(id: string): void {
    const upload = this.#uploads.get(id);
    if (upload === undefined) return;
    this.#bytes -= upload.bytes;
    this.#uploads.delete(id);
  }

  /** Drops the oldest uploads (not `keep`) while too many or too large are held. */
  #makeRoom(keep: string): void {
    for (const id of this.#uploads.keys()) {
      if (this.#uploads.size <= MAX_UPLOADS && this.#bytes <= MAX_HELD_BYTES) return;
      if (id !== keep) this.#drop(id);
    }
  }
}
