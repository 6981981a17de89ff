import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Diagnostic } from '../api/calls/editor';
import { onLines } from './childProtocol';
import { DomainError } from '../errors';

/**
 * Python's own parser, kept warm in one long-lived CPython process, so a check while typing costs
 * a pipe round trip rather than an interpreter start. Only `compile()` runs there: compiling never
 * executes the environment's code, so this is safe for untrusted sources (running them is the
 * sandboxed runtime's job).
 */
const PARSER = String.raw`
import sys, json, warnings
warnings.simplefilter('ignore')
out = sys.stdout
for line in sys.stdin:
    req = json.loads(line)
    res = {'id': req['id'], 'errors': []}
    try:
        compile(req['source'], '<environment>', 'exec', dont_inherit=True)
    except SyntaxError as e:
        res['errors'].append({'kind': type(e).__name__, 'msg': e.msg or 'invalid syntax', 'line': e.lineno or 1,
            'col': e.offset or 1, 'endLine': getattr(e, 'end_lineno', None), 'endCol': getattr(e, 'end_offset', None)})
    except (ValueError, RecursionError, MemoryError, OverflowError) as e:
        res['errors'].append({'kind': type(e).__name__, 'msg': str(e) or type(e).__name__, 'line': 1, 'col': 1, 'endLine': None, 'endCol': None})
    out.write(json.dumps(res) + '\n')
    out.flush()
`;

interface RawError {
  kind: string;
  msg: string;
  line: number;
  col: number;
  endLine: number | null;
  endCol: number | null;
}

const TIMEOUT_MS = 5000;

export class PythonSyntaxChecker {
  private child: ChildProcessWithoutNullStreams | null = null;
  private nextId = 1;
  private version = '';
  private readonly pending = new Map<number, { resolve(e: RawError[]): void; reject(e: Error): void; timer: NodeJS.Timeout }>();

  constructor(private readonly python = process.env.SPADE_PYTHON || 'python3') {}

  get parserName(): string {
    return this.version ? `CPython ${this.version}` : 'CPython';
  }

  private start(): ChildProcessWithoutNullStreams {
    // -I: no user site, no PYTHON* variables, no script dir on the path; -S: no site import at all.
    const child = spawn(this.python, ['-I', '-S', '-u', '-c', `import sys; sys.stdout.write(sys.version.split()[0] + '\\n'); sys.stdout.flush()\n${PARSER}`], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    onLines(child.stdout, (line) => this.onLine(line));
    child.stderr.resume();
    const fail = (why: string) => {
      if (this.child === child) this.child = null;
      for (const [, p] of this.pending) {
        clearTimeout(p.timer);
        p.reject(new DomainError('unavailable', why));
      }
      this.pending.clear();
    };
    child.on('error', (e) => fail(`Could not start ${this.python} for syntax checks: ${e.message}`));
    child.on('exit', (code, signal) => fail(`The Python parser process ended (${signal ?? code})`));
    this.child = child;
    this.version = '';
    return child;
  }

  private onLine(line: string): void {
    if (!this.version && !line.startsWith('{')) {
      this.version = line.trim();
      return;
    }
    let msg: { id: number; errors: RawError[] };
    try {
      msg = JSON.parse(line) as { id: number; errors: RawError[] };
    } catch {
      return;
    }
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    clearTimeout(p.timer);
    p.resolve(msg.errors);
  }

  async check(source: string): Promise<Diagnostic[]> {
    const child = this.child ?? this.start();
    const id = this.nextId++;
    const raw = await new Promise<RawError[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        // A parser stuck on a pathological source is replaced rather than waited on.
        child.kill('SIGKILL');
        reject(new DomainError('unavailable', 'The Python parser took too long on this source'));
      }, TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      child.stdin.write(`${JSON.stringify({ id, source })}\n`);
    });
    return raw.map((e) => toDiagnostic(e, source));
  }

  close(): void {
    this.child?.kill();
    this.child = null;
  }
}

/** Python counts columns in characters from 1 and may point one past the line; Monaco wants a non-empty range. */
export function toDiagnostic(e: RawError, source: string): Diagnostic {
  const lines = source.split('\n');
  const line = Math.min(Math.max(1, e.line), Math.max(1, lines.length));
  const text = lines[line - 1] ?? '';
  const column = Math.min(Math.max(1, e.col), text.length + 1);
  let endLine = e.endLine && e.endLine >= line ? Math.min(e.endLine, lines.length) : line;
  let endColumn = e.endCol && e.endCol > 0 ? e.endCol : column + 1;
  if (endLine === line && endColumn <= column) endColumn = column + 1;
  if (endLine < line) endLine = line;
  const kind = e.kind === 'SyntaxError' ? 'SyntaxError' : e.kind;
  return { severity: 'error', message: `${kind}: ${e.msg}`, line, column, endLine, endColumn, source: 'python-syntax' };
}
