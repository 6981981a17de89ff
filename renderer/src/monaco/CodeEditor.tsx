import { useEffect, useRef, useState } from 'react';
import { loadMonaco } from './loader';
import type { Monaco } from './setup';
import { useResolvedTheme } from '../theme';

type Editor = ReturnType<Monaco['editor']['create']>;

export interface CodeEditorProps {
  value: string;
  language?: string;
  readOnly?: boolean;
  onChange?: (value: string) => void;
  onReady?: (editor: Editor, monaco: Monaco) => void;
  ariaLabel?: string;
}

/** A Monaco editor that follows the workbench theme and owns its model's lifetime. */
export function CodeEditor({ value, language = 'python', readOnly = false, onChange, onReady, ariaLabel }: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const editorRef = useRef<Editor | null>(null);
  const monacoRef = useRef<Monaco | null>(null);
  // Texts this editor reported through onChange and not yet seen back as the `value` prop. A prop
  // that is one of them is our own keystroke coming back, possibly a render behind newer keys:
  // calling setValue for it would drop those keys and move the cursor to the start.
  const echoes = useRef<string[]>([]);
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;
  const theme = useResolvedTheme();
  const [ready, setReady] = useState(false);

  useEffect(() => {
    let disposed = false;
    let editor: Editor | null = null;
    void loadMonaco().then((monaco) => {
      if (disposed || !host.current) return;
      monacoRef.current = monaco;
      editor = monaco.editor.create(host.current, {
        value,
        language,
        readOnly,
        automaticLayout: true,
        minimap: { enabled: false },
        fontSize: 13,
        scrollBeyondLastLine: false,
        theme: theme === 'dark' ? 'vs-dark' : 'vs',
        ariaLabel: ariaLabel ?? 'Code editor',
      });
      editor.onDidChangeModelContent(() => {
        const text = editor?.getValue() ?? '';
        if (onChangeRef.current) {
          echoes.current.push(text);
          onChangeRef.current(text);
        }
      });
      editorRef.current = editor;
      setReady(true);
      onReady?.(editor, monaco);
    });
    return () => {
      disposed = true;
      editor?.getModel()?.dispose();
      editor?.dispose();
    };
    // The editor is created once; later prop changes are applied by the effects below.
  }, []);

  useEffect(() => {
    monacoRef.current?.editor.setTheme(theme === 'dark' ? 'vs-dark' : 'vs');
  }, [theme, ready]);

  useEffect(() => {
    const ed = editorRef.current;
    if (!ed) return;
    const seen = echoes.current.indexOf(value);
    if (seen >= 0) {
      echoes.current.splice(0, seen + 1);
      return;
    }
    echoes.current = [];
    if (ed.getValue() !== value) ed.setValue(value);
  }, [value]);

  useEffect(() => {
    editorRef.current?.updateOptions({ readOnly });
  }, [readOnly]);

  return <div className="code-editor" ref={host} data-testid="code-editor" data-ready={ready ? 'true' : 'false'} />;
}
