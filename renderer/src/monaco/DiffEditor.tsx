import { useEffect, useRef, useState } from 'react';
import { loadMonaco } from './loader';
import { useResolvedTheme } from '../theme';

export interface DiffEditorProps {
  original: string;
  modified: string;
  language?: string;
  /** Side by side (default) or inline. */
  inline?: boolean;
  ariaLabel?: string;
}

/** Monaco's diff editor, read-only on both sides, following the workbench theme. */
export function DiffEditor({ original, modified, language = 'python', inline = false, ariaLabel }: DiffEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const theme = useResolvedTheme();
  const [ready, setReady] = useState(false);
  const [changes, setChanges] = useState<number | null>(null);

  useEffect(() => {
    let disposed = false;
    let cleanup = () => {};
    void loadMonaco().then((monaco) => {
      if (disposed || !host.current) return;
      const a = monaco.editor.createModel(original, language);
      const b = monaco.editor.createModel(modified, language);
      const diff = monaco.editor.createDiffEditor(host.current, {
        automaticLayout: true,
        readOnly: true,
        originalEditable: false,
        renderSideBySide: !inline,
        minimap: { enabled: false },
        fontSize: 13,
        scrollBeyondLastLine: false,
        theme: theme === 'dark' ? 'vs-dark' : 'vs',
        ariaLabel: ariaLabel ?? 'Diff editor',
      });
      diff.setModel({ original: a, modified: b });
      let revealed = false;
      const update = () => {
        const changes = diff.getLineChanges() ?? [];
        setChanges(changes.length);
        // Open on the first change, not on line 1 of two identical-looking files.
        const first = changes[0];
        if (!revealed && first) {
          revealed = true;
          diff.getModifiedEditor().revealLineInCenter(Math.max(1, first.modifiedStartLineNumber));
        }
      };
      const sub = diff.onDidUpdateDiff(update);
      // The diff may already be computed by the time the listener is attached.
      const late = setTimeout(() => diff.getLineChanges() && update(), 300);
      setReady(true);
      cleanup = () => {
        clearTimeout(late);
        sub.dispose();
        diff.dispose();
        a.dispose();
        b.dispose();
      };
    });
    return () => {
      disposed = true;
      cleanup();
    };
  }, [original, modified, language, inline]);

  useEffect(() => {
    if (ready) void loadMonaco().then((m) => m.editor.setTheme(theme === 'dark' ? 'vs-dark' : 'vs'));
  }, [theme, ready]);

  return <div className="code-editor" ref={host} data-testid="diff-editor" data-ready={ready ? 'true' : 'false'} data-changes={changes ?? ''} />;
}
