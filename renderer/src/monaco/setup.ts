// Monaco, bundled: only the editor core, its standard contributions and Python. The one worker
// it needs is emitted by Vite as a same-origin file, so nothing is fetched from a CDN and the
// CSP can say `worker-src 'self'`.
import 'monaco-editor/features/register.all';
import 'monaco-editor/languages/definitions/python/register';
import * as monaco from 'monaco-editor/editor/editor.api';
import EditorWorker from 'monaco-editor/editor/editor.worker?worker';

(self as unknown as { MonacoEnvironment: monaco.Environment }).MonacoEnvironment = {
  getWorker: () => new EditorWorker(),
};

export { monaco };
export type Monaco = typeof monaco;
