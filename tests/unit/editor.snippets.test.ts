import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { GAME_TEMPLATE, INJECTED_NAMES, PROTOCOL_NAMES, SNIPPETS, TOOL_USE_TEMPLATE, expandSnippet } from '../../renderer/src/features/editor/snippets';

/** Python's own parser, so a template with a broken escape fails here rather than in a researcher's tab. */
function pySyntaxError(source: string): string | null {
  try {
    execFileSync('python3', ['-I', '-c', 'import sys; compile(sys.stdin.read(), "<t>", "exec")'], { input: source, stdio: ['pipe', 'pipe', 'pipe'] });
    return null;
  } catch (e) {
    return String((e as { stderr?: Buffer }).stderr ?? e);
  }
}

describe('editor snippets', () => {
  it('expands placeholders to their defaults', () => {
    expect(expandSnippet('class ${1:Foo}Env:\n\t$0')).toBe('class FooEnv:\n\t');
  });

  it('new-environment templates are valid Python with the SPADE contract', () => {
    for (const t of [GAME_TEMPLATE, TOOL_USE_TEMPLATE]) {
      const src = expandSnippet(t);
      expect(pySyntaxError(src)).toBeNull();
      expect(src).toMatch(/^class \w+Env/m);
      expect(src).toMatch(/def reset\(self, seed=None\)/);
      expect(src).not.toContain('${');
    }
    const game = expandSnippet(GAME_TEMPLATE);
    expect(game.split('\n')[0]).toBe('"""SPADE self-play generated game"""');
    expect(game).toContain('def step(self, action)');
    expect(game).toContain('def solution(self)');
    // The regex must match a real boxed answer once Python unescapes the raw string.
    expect(game).toContain('re.compile(r"\\\\boxed\\{([^}]*)\\}")');
    expect(expandSnippet(TOOL_USE_TEMPLATE)).toContain('(ToolUseBaseEnv)');
  });

  it('every snippet body parses once placed in a function', () => {
    for (const s of SNIPPETS) {
      const body = expandSnippet(s.body).replace(/\t/g, '    ');
      const wrapped = s.label.startsWith('spade-game') || s.label === 'spade-tool-use' ? body : `import re\nclass X:\n    def f(self, action):\n${body.split('\n').map((l) => `        ${l}`).join('\n')}\n        return None\n`;
      expect(pySyntaxError(wrapped), s.label).toBeNull();
    }
  });

  it('completions cover every injected name of SPADE-FORMATS section 2 and the protocol', () => {
    const names = new Set(INJECTED_NAMES.map((n) => n.name));
    for (const n of ['itertools', 'statistics', 'np', 'numpy', 'deque', 'Counter', 'lru_cache', 'heappop', 'FrozenSet', 'Mapping', 'ToolUseBaseEnv']) expect(names.has(n), n).toBe(true);
    expect(names.size).toBe(INJECTED_NAMES.length);
    const proto = PROTOCOL_NAMES.map((p) => p.name);
    for (const n of ['reset', 'step', 'solution', 'max_turns', 'get_tools', 'execute_tool', '_tools', '_expected_answer']) expect(proto).toContain(n);
  });
});
