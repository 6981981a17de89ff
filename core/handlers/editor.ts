import type { CallName } from '../api';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';

type EditorCalls = Extract<CallName, `editor.${string}`>;

export function editorHandlers(s: Services): Pick<Handlers, EditorCalls> {
  const ed = () => s.editor;
  return {
    'editor.open': ({ envId }) => ed().open(envId),
    'editor.drafts': () => ed().drafts(),
    'editor.draftSave': (d) => ed().saveDraft(d),
    'editor.draftDiscard': ({ envId }) => ({ discarded: ed().discardDraft(envId) }),
    'editor.save': (i) => ed().save(i),
    'editor.revert': ({ envId, hash }) => ed().revert(envId, hash),
    'editor.versions': ({ envId }) => ed().versions(envId),
    'editor.diff': ({ left, right }) => ({ left: ed().diffSide(left), right: ed().diffSide(right) }),
    'editor.writeBackPreview': ({ envId, hash }) => ed().writeBackPreview(envId, hash),
    'editor.writeBack': ({ envId, hash, expectedFileHash }) => ed().writeBack(envId, { hash, expectedFileHash }),
    'editor.create': (i) => ed().create(i),
    'editor.fork': (i) => ed().fork(i),
    'editor.checkSyntax': ({ source }) => ed().checkSyntax(source),
    'editor.checkLoad': ({ source, requestId }) => ed().loadCheck(source, requestId),
    'editor.checkLoadCancel': ({ requestId }) => ({ cancelled: ed().loadCheckCancel(requestId) }),
  };
}
