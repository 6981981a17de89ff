/** Messages between the runtime pool and a Pyodide child process (Node IPC, JSON). */
export interface ChildInit {
  t: 'init';
  pyodideDir: string;
  /** native/*.py by file name: harness.py, sandbox.py and extension modules (audit_checks.py...). */
  files: Record<string, string>;
}
export interface ChildCall {
  t: 'call';
  id: number;
  /** One harness request, already JSON: the child hands it to Python untouched. */
  line: string;
  timeoutMs: number;
}
export type ParentToChild = ChildInit | ChildCall | { t: 'exit' };

export type ChildToParent =
  | { t: 'ready'; coldMs: number; python: string }
  | { t: 'reply'; id: number; line: string }
  | { t: 'fatal'; id: number; message: string };
