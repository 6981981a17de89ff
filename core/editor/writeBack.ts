/**
 * "Write back": a fixed environment goes back to the file it was imported from, so the run that
 * produced it (or SPADE reading its pool) sees the fix. Always in two steps: a preview (the file as
 * it is now, the diff, whether the file still holds a version we know) and then the write, which
 * must name the file content it was shown: a file changed since the preview is refused, not
 * overwritten. The original is kept beside it (`game.py.orig`, then `.orig.2`...), never replaced.
 * File-system calls are asynchronous: this runs on the server's main thread.
 */
import { access, readFile, rename, writeFile } from 'node:fs/promises';
import { basename, isAbsolute, join, relative } from 'node:path';
import { packageRoot } from '../base/appInfo';
import { DomainError } from '../errors';
import type { Db } from '../memory/db';
import { sha256 } from '../memory/parse';
import { getEnvironment, getVersion } from '../memory/repository';
import { unifiedDiff } from './patch';
import { errorMessage } from '../api';

export interface WriteBackPreview {
  path: string;
  /** missing: no file there now; same: it already holds this version; differs: writing changes it. */
  state: 'missing' | 'same' | 'differs';
  fileSource: string | null;
  fileHash: string | null;
  /** The file holds one of this environment's versions (false: edited outside the workbench). */
  fileIsKnownVersion: boolean;
  hash: string;
  proposed: string;
  patch: string;
}

export interface WriteBackResult extends WriteBackPreview {
  written: boolean;
  backupPath: string | null;
}

async function exists(p: string): Promise<boolean> {
  return access(p).then(
    () => true,
    () => false,
  );
}

export async function previewWriteBack(db: Db, envId: number, hash?: string): Promise<WriteBackPreview> {
  const env = getEnvironment(db, envId);
  if (!env) throw new DomainError('not_found', `No environment ${envId}`);
  // Pasted, snippet or forked environments carry a pseudo path (editor:paste ...): no file to write.
  if (!env.sourcePath || !isAbsolute(env.sourcePath)) throw new DomainError('invalid_input', `${env.name} was not imported from a file: export it instead`);
  // The bundled seed pack is part of the app, not a run: fixing it there would change every install.
  const rel = relative(join(packageRoot(), 'resources'), env.sourcePath);
  if (!rel.startsWith('..') && !isAbsolute(rel)) throw new DomainError('invalid_input', `${env.name} comes from the app's own seed pack: export it instead of writing into the app`);
  const h = hash ?? env.hash;
  const v = getVersion(db, h);
  if (!v || !env.versions.some((x) => x.hash === h)) throw new DomainError('not_found', `${env.name} has no version ${h.slice(0, 12)}`);
  let fileSource: string | null = null;
  try {
    fileSource = await readFile(env.sourcePath, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new DomainError('invalid_input', `Cannot read ${env.sourcePath}: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}`);
  }
  const fileHash = fileSource === null ? null : sha256(fileSource);
  return {
    path: env.sourcePath,
    state: fileSource === null ? 'missing' : fileHash === h ? 'same' : 'differs',
    fileSource,
    fileHash,
    fileIsKnownVersion: fileHash !== null && env.versions.some((x) => x.hash === fileHash),
    hash: h,
    proposed: v.source,
    patch: unifiedDiff(fileSource ?? '', v.source, basename(env.sourcePath)),
  };
}

export async function writeBack(db: Db, envId: number, opts: { hash?: string; expectedFileHash: string | null }): Promise<WriteBackResult> {
  const p = await previewWriteBack(db, envId, opts.hash);
  if (p.fileHash !== opts.expectedFileHash) {
    throw new DomainError('conflict', `${p.path} changed since the diff was shown; look at the diff again before writing`);
  }
  if (p.state === 'same') return { ...p, written: false, backupPath: null };
  let backupPath: string | null = null;
  if (p.fileSource !== null) {
    backupPath = `${p.path}.orig`;
    for (let n = 2; await exists(backupPath); n++) backupPath = `${p.path}.orig.${n}`;
    await writeFile(backupPath, p.fileSource, { flag: 'wx' });
  }
  const tmp = `${p.path}.partial-${process.pid}`;
  try {
    await writeFile(tmp, p.proposed);
    await rename(tmp, p.path);
  } catch (e) {
    throw new DomainError('invalid_input', `Cannot write ${p.path}: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}`);
  }
  return { ...p, written: true, backupPath };
}
