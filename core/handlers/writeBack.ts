import { previewWriteBack, writeBack } from '../editor/writeBack';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';

/** Write-back of a version to the file it came from (core/editor/writeBack.ts does the work). */
export function writeBackHandlers(s: Services): Pick<Handlers, 'editor.writeBackPreview' | 'editor.writeBack'> {
  return {
    'editor.writeBackPreview': ({ envId, hash }) => previewWriteBack(s.db, envId, hash),
    'editor.writeBack': ({ envId, hash, expectedFileHash }) => writeBack(s.db, envId, { ...(hash ? { hash } : {}), expectedFileHash }),
  };
}
