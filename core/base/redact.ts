/** `text` with every secret (of 4 characters or more: shorter ones would blank ordinary words) replaced by [redacted]. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return out;
}
