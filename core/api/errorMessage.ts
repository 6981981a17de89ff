/**
 * The one way to turn something caught into text for a person. A thrown non-Error (a string, an
 * object from a library) still says what it was instead of "[object Object]".
 *
 * It imports nothing, so code that must stay small (the runtime child, which has no zod) can use it
 * too; everyone else gets it from core/api.
 */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === 'string') return e;
  try {
    const json = JSON.stringify(e);
    if (json !== undefined) return json;
  } catch {
    // a cyclic object: fall through to String()
  }
  return String(e);
}
