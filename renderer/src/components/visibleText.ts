/**
 * Untrusted text (hints, observations, names, sources a game or a designer wrote) is shown with its
 * control characters visible. A right-to-left override (U+202E) in a hint otherwise reverses what
 * follows it on screen, so a person reads another text than the agent gets; zero-width and other
 * invisible characters make two different strings look the same. Each is shown as a marked token
 * naming it (⟦RLO⟧), the way editors show them; tabs and newlines stay as they are.
 */
const NAMES: Record<number, string> = {
  0x00: 'NUL',
  0x07: 'BEL',
  0x08: 'BS',
  0x0b: 'VT',
  0x0c: 'FF',
  0x0d: 'CR',
  0x1b: 'ESC',
  0x7f: 'DEL',
  0xad: 'SHY',
  0x061c: 'ALM',
  0x180e: 'MVS',
  0x200b: 'ZWSP',
  0x200c: 'ZWNJ',
  0x200d: 'ZWJ',
  0x200e: 'LRM',
  0x200f: 'RLM',
  0x2028: 'LSEP',
  0x2029: 'PSEP',
  0x202a: 'LRE',
  0x202b: 'RLE',
  0x202c: 'PDF',
  0x202d: 'LRO',
  0x202e: 'RLO',
  0x2060: 'WJ',
  0x2061: 'FA',
  0x2062: 'IT',
  0x2063: 'IS',
  0x2064: 'IP',
  0x2066: 'LRI',
  0x2067: 'RLI',
  0x2068: 'FSI',
  0x2069: 'PDI',
  0xfeff: 'BOM',
  0xfff9: 'IAA',
  0xfffa: 'IAS',
  0xfffb: 'IAT',
};

/** Every character shown as a token: C0 and C1 controls (less tab and newline), bidi controls, invisible format characters, tag characters. */
export const CONTROL_RE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]|\udb40[\udc00-\udc7f]/g;

/** The token a control character is shown as: its short name, else its code point. */
export function controlName(ch: string): string {
  const cp = ch.codePointAt(0)!;
  return NAMES[cp] ?? `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Splits text into plain runs and control characters (odd indexes are the controls). */
export function splitControls(text: string): string[] {
  const out: string[] = [];
  let last = 0;
  for (const m of text.matchAll(CONTROL_RE)) {
    out.push(text.slice(last, m.index), m[0]);
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out;
}

/** The text with each control character written as ⟦NAME⟧ (for attributes, option labels, titles). */
export function visibleText(text: string): string {
  return text.replace(CONTROL_RE, (ch) => `⟦${controlName(ch)}⟧`);
}

export function hasControls(text: string): boolean {
  CONTROL_RE.lastIndex = 0;
  const r = CONTROL_RE.test(text);
  CONTROL_RE.lastIndex = 0;
  return r;
}
