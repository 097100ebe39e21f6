/** A request the inspector cannot answer: a malformed one (400) or one naming nothing that exists (404). */
export class InspectorError extends Error {
  readonly status: 400 | 404;

  constructor(status: 400 | 404, message: string) {
    super(message);
    this.name = 'InspectorError';
    this.status = status;
  }
}
