import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { contentTypes } from './csp';

export interface StaticFile {
  body: Buffer;
  contentType: string;
  immutable: boolean;
}

/**
 * Resolves a URL path inside the built renderer. Anything that would escape the root after
 * decoding and normalising is refused; unknown paths without an extension fall back to the
 * app page so deep links work.
 */
export async function readStatic(root: string, urlPath: string): Promise<StaticFile | null> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath.split('?')[0] ?? '/');
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const rel = normalize(decoded).replace(/^([/\\])+/, '');
  const full = join(root, rel);
  if (full !== root && !full.startsWith(root.endsWith(sep) ? root : root + sep)) return null;
  let target = full;
  try {
    const st = await stat(full);
    if (st.isDirectory()) target = join(full, 'index.html');
  } catch {
    if (extname(rel)) return null;
    target = join(root, 'index.html');
  }
  try {
    const body = await readFile(target);
    return {
      body,
      contentType: contentTypes[extname(target)] ?? 'application/octet-stream',
      immutable: target.includes(`${sep}assets${sep}`),
    };
  } catch {
    return null;
  }
}
