/**
 * An error that names what went wrong with a stable UPPER_SNAKE code and a message, and where
 * the input was at fault, which part of it (`field`, dotted). It says nothing about transport:
 * the server's HTTP edge maps codes to statuses in one table, the agent sends them over its
 * socket. The server's domain errors and the signing engine's errors are its two kinds.
 */
export interface CodedErrorOptions {
  /** The input at fault, as a dotted path (`signers.2.username`). */
  field?: string;
  /** A finer code for the field's problem (zod's issue code, `TOO_BIG`, ...). */
  detailCode?: string;
  /** When the caller may try again, for a refusal about pace or load. */
  retryAfterSeconds?: number;
}

export class CodedError extends Error {
  readonly code: string;
  readonly field: string | undefined;
  readonly detailCode: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: string, message: string, options: CodedErrorOptions = {}) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.field = options.field;
    this.detailCode = options.detailCode;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}
