import type { Monaco } from '../../monaco/setup';
import { INJECTED_NAMES, PROTOCOL_NAMES, SNIPPETS } from './snippets';

let installed = false;

/**
 * Completions for SPADE's environment contract: the names its loader pre-binds (usable without an
 * import), the protocol methods and attributes, and skeleton snippets. Installed once per page.
 */
export function installPythonHelp(monaco: Monaco): void {
  if (installed) return;
  installed = true;
  const K = monaco.languages.CompletionItemKind;
  const asSnippet = monaco.languages.CompletionItemInsertTextRule.InsertAsSnippet;
  monaco.languages.registerCompletionItemProvider('python', {
    provideCompletionItems(model, position) {
      const word = model.getWordUntilPosition(position);
      const range = { startLineNumber: position.lineNumber, endLineNumber: position.lineNumber, startColumn: word.startColumn, endColumn: word.endColumn };
      const lineStart = model.getValueInRange({ startLineNumber: position.lineNumber, startColumn: 1, endLineNumber: position.lineNumber, endColumn: word.startColumn });
      const afterDot = /\.\s*$/.test(lineStart);
      const suggestions = [
        ...(afterDot
          ? []
          : INJECTED_NAMES.map((n) => ({ label: n.name, kind: /^[a-z]/.test(n.name) && !n.name.includes('_') && n.detail.startsWith('module') ? K.Module : K.Class, insertText: n.name, detail: n.detail, range }))),
        ...PROTOCOL_NAMES.map((p) => ({
          label: p.name,
          kind: p.insert.startsWith('def ') ? K.Method : K.Property,
          insertText: afterDot && p.insert.startsWith('def ') ? p.name : p.insert,
          insertTextRules: asSnippet,
          detail: p.detail,
          documentation: 'SPADE environment protocol',
          range,
        })),
        ...(afterDot
          ? []
          : SNIPPETS.map((s) => ({ label: s.label, kind: K.Snippet, insertText: s.body, insertTextRules: asSnippet, detail: s.detail, documentation: s.detail, range }))),
      ];
      return { suggestions };
    },
  });
}
