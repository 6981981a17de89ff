import type { ErrorCode } from './api/errors';

/**
 * What the engine throws when the user can act on the failure (a missing id, a bad argument, a
 * conflict). It carries its contract code itself, so the dispatcher maps it to an ApiError once and
 * nothing ever has to guess a code from the wording of a message. Anything else that reaches the
 * dispatcher is a bug: it is logged with its stack and shown as `internal`.
 */
export class DomainError extends Error {
  readonly code: Exclude<ErrorCode, 'unknown_call' | 'internal'>;
  readonly details: unknown;
  constructor(code: Exclude<ErrorCode, 'unknown_call' | 'internal'>, message: string, details?: unknown) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.details = details;
  }
}

export const notFound = (message: string, details?: unknown): DomainError => new DomainError('not_found', message, details);
export const invalidInput = (message: string, details?: unknown): DomainError => new DomainError('invalid_input', message, details);

/**
 * Failures of the network below a remote backend (SSH, Ray, a socket): Node's system error codes
 * and ssh2's error levels say it structurally, so no message is parsed.
 */
const unreachableCodes = new Set(['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET']);
const unreachableLevels = new Set(['client-timeout', 'client-socket', 'client-authentication', 'client-dns']);
export function isUnreachable(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const { code, level, cause } = e as Error & { code?: unknown; level?: unknown };
  if (typeof code === 'string' && unreachableCodes.has(code)) return true;
  if (typeof level === 'string' && unreachableLevels.has(level)) return true;
  return cause !== undefined && cause !== e && isUnreachable(cause);
}
