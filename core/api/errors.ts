import { z } from 'zod';

/** Error codes are part of the contract: scripts and the UI branch on them, so keep them stable. */
export const errorCodes = [
  'invalid_input',
  'unknown_call',
  'not_found',
  'conflict',
  'unauthorized',
  'cancelled',
  'timeout',
  'unavailable',
  'internal',
] as const;
export type ErrorCode = (typeof errorCodes)[number];

export const apiErrorSchema = z.object({
  code: z.enum(errorCodes),
  message: z.string(),
  details: z.unknown().optional(),
});
export type ApiErrorData = z.infer<typeof apiErrorSchema>;

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly details: unknown;
  constructor(code: ErrorCode, message: string, details?: unknown) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.details = details;
  }
  toJSON(): ApiErrorData {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
  static from(data: unknown): ApiError {
    const parsed = apiErrorSchema.safeParse(data);
    if (parsed.success) return new ApiError(parsed.data.code, parsed.data.message, parsed.data.details);
    return new ApiError('internal', 'Malformed error from backend');
  }
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}

export { errorMessage } from './errorMessage';
