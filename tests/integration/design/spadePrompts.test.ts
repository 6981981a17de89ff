// SPADE's designer side read from a checkout at run time (issue 44): the system prompt, the prompt
// builders, the corpus, the hints, and tool-use rounds. A scripted designer (the stand-in server, so
// the exact messages can be asserted), the real audit (native CPython in bubblewrap), real SQLite.
// SPADE's texts are never in this tree: the tests that need them read the checkout named by
// SPADE_SRC, and compare with what Python reads from it on its own (ast, or SPADE's own module file).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { main } from '../../../core/cli/main';
import type { CliIO } from '../../../core/cli/command';
import { readSpadeTexts, sampleCorpus } from '../../../core/design/spadeCheckout';
import { spadeSource, type PromptSource } from '../../../core/design/promptSource';
import { designGame, type Chat } from '../../../core/design/attempt';
import { runRound } from '../../../core/design/round';
import { openDatabase } from '../../../core/memory/db';
import { getVersion } from '../../../core/memory/repository';
import { AuditPool } from '../../../core/audit/pool';
import { ChatClient } from '../../../core/models/client';
import { tempDir } from '../../helpers/tmp';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';
import { luckySevenGame, priceLedgerToolGame } from '../../helpers/designGames';

const tmp = tempDir('spade-prompts-');
let pool: AuditPool | null = null;
afterAll(async () => {
  await pool?.close();
  tmp.cleanup();
});
let server: StandIn | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const spadeSrc = process.env.SPADE_SRC ?? '';
const haveSpade = !!spadeSrc && existsSync(join(spadeSrc, 'spade/core/prompts/template.py'));
if (!haveSpade) console.warn('[SPADE checkout tests skipped] set SPADE_SRC to a SPADE checkout (spade/core/prompts/template.py) to run a round on its prompts');

/** The test's own oracle: Python run on the checkout's files (never our reader). */
function py(code: string, ...args: string[]): string {
  const r = spawnSync('python3', ['-I', '-c', code, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout;
}
const constant = (file: string, name: string): string =>
  JSON.parse(py(`import ast,json,sys\nt=ast.parse(open(sys.argv[1]).read())\nprint(json.dumps([ast.literal_eval(n.value) for n in t.body if isinstance(n, ast.Assign) and getattr(n.targets[0],'id','')==sys.argv[2]][0]))`, join(spadeSrc, file), name)) as string;
/** SPADE's own module file, loaded by itself (its file imports only the standard library). */
const spadeModule = (file: string, body: string, ...args: string[]): string =>
  py(`import importlib.util,json,random,sys\ns=importlib.util.spec_from_file_location('m', sys.argv[1]); m=importlib.util.module_from_spec(s); s.loader.exec_module(m)\n${body}`, join(spadeSrc, file), ...args);

type Msg = { role: string; content: string };
const msgs = (b: Record<string, unknown>) => b.messages as Msg[];

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIO = { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`) };
  return { code: await main(['design', ...args], io), out, err };
}

function corpusFile(): string {
  const long = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
  const lines = [JSON.stringify({ orig_doc: `Dijkstra's algorithm relaxes edges ${long}`, source: 'a' }), 'not json at all', JSON.stringify({ text: 'A ledger balances debits and credits.' }), JSON.stringify({ text: '' }), JSON.stringify({ text: 'Binary search halves the range.' })];
  const p = join(tmp.dir, 'corpus.jsonl');
  writeFileSync(p, `${lines.join('\n')}\n`);
  return p;
}

describe('a SPADE checkout that is not one, or lacks what the workbench reads', () => {
  it('says which folder, file or constant is missing', async () => {
    await expect(readSpadeTexts(join(tmp.dir, 'nowhere'))).rejects.toThrow(/is not a folder/);
    const odd = join(tmp.dir, 'odd');
    mkdirSync(join(odd, 'spade/core/prompts'), { recursive: true });
    await expect(readSpadeTexts(tmp.dir)).rejects.toThrow(/does not look like a SPADE checkout: it has no spade\/core\/prompts\/template\.py/);
    writeFileSync(join(odd, 'spade/core/prompts/template.py'), 'OTHER = "x"\n');
    await expect(readSpadeTexts(odd)).rejects.toThrow(/has no spade\/core\/prompts\/tool_use_template\.py \(moved or renamed/);
    writeFileSync(join(odd, 'spade/core/prompts/tool_use_template.py'), 'TOOL_USE_SKILLS = {}\n');
    await expect(readSpadeTexts(odd)).rejects.toThrow(/spade\/core\/prompts\/template\.py in the SPADE checkout .* defines no MULTITURN_GAME_GENERATION_SYSTEM_PROMPT/);
    // A prompt file that would pull a heavy module is refused, not imported.
    writeFileSync(join(odd, 'spade/core/prompts/tool_use_template.py'), 'import numpy\nTOOL_USE_SKILLS = {}\n');
    await expect(readSpadeTexts(odd)).rejects.toThrow(/imports numpy, which the workbench does not load/);
    // Nor does a file reach a process or the network through __import__ at run time.
    writeFileSync(join(odd, 'spade/core/prompts/tool_use_template.py'), 'TOOL_USE_SKILLS = {}\n__import__("subprocess").run(["touch", "/tmp/spade-checkout-pwned"])\n');
    await expect(readSpadeTexts(odd)).rejects.toThrow(/imports subprocess, which the workbench does not load/);
    expect(existsSync('/tmp/spade-checkout-pwned')).toBe(false);
  });
});

describe("SPADE's hints (hint_generator.py)", () => {
  // The checkout's texts stand in here as our own words: what is tested is what is done with them.
  const source: PromptSource = {
    kind: 'spade',
    src: null,
    texts: null,
    hints: { cognitive: 'HINT PROMPT (cognitive)', toolUse: 'HINT PROMPT (tool use)' },
    next: async () => ({ system: 'DESIGNER SYSTEM', body: 'Write a game.', document: null, builder: 'spade:test', withSeeds: true }),
  };
  const scripted = (answers: (string | Error)[], seen: unknown[][]): Chat => ({
    complete: async (messages) => {
      seen.push(messages);
      const a = answers.shift()!;
      if (a instanceof Error) throw a;
      return { text: a, reasoning: null, toolCalls: [], finishReason: 'stop', usage: null } as unknown as Awaited<ReturnType<Chat['complete']>>;
    },
  });
  const spec = { skill: 'Logical Deduction', difficulty: 'medium' as const, maxTurns: 4, template: '', prompts: source, memory: [], attempts: 1, feedback: 'spade' as const, seed: 1, acceptance: { gate: 'workbench' as const, resetGate: false, envValidator: false, maxTurns: 4 } };

  it('tries three times, waiting 1, 2 and 4 s after each failure, then keeps no hint; an empty answer is a failure', async () => {
    pool ??= new AuditPool({ workers: 1, envTimeoutSec: 60 });
    const designed: unknown[][] = [];
    const hinted: unknown[][] = [];
    const waits: number[] = [];
    const g = await designGame(spec, {
      designer: scripted([`\`\`\`python\n${luckySevenGame('LuckyEnv')}\`\`\``], designed),
      hinter: scripted([new Error('503 from the hint model'), '', new Error('timeout')], hinted),
      check: (code) => pool!.audit(code, { maxTurns: 4 }),
      sleep: async (ms) => void waits.push(ms),
    });
    expect(g.accepted).toBe(true);
    expect(designed[0]).toEqual([{ role: 'system', content: 'DESIGNER SYSTEM' }, { role: 'user', content: 'Write a game.' }]);
    expect(hinted).toHaveLength(3);
    expect((hinted[0] as { role: string; content: string }[])[0]).toEqual({ role: 'system', content: 'HINT PROMPT (cognitive)' });
    expect(waits).toEqual([1000, 2000, 4000]);
    expect(g.hint).toBeNull();
    expect(g.hintError).toMatch(/timeout/);
  });

  it('stops at the first answer, after waiting 1 and 2 s for the failures before it', async () => {
    pool ??= new AuditPool({ workers: 1, envTimeoutSec: 60 });
    const waits: number[] = [];
    const g = await designGame(spec, {
      designer: scripted([`\`\`\`python\n${luckySevenGame('LuckyEnv')}\`\`\``], []),
      hinter: scripted(['', new Error('reset'), 'Seven.'], []),
      check: (code) => pool!.audit(code, { maxTurns: 4 }),
      sleep: async (ms) => void waits.push(ms),
    });
    expect(waits).toEqual([1000, 2000]);
    expect(g.hint).toBe('Seven.');
    expect(g.hintError).toBeNull();
  });
});

describe.skipIf(!haveSpade)('with a SPADE checkout (SPADE_SRC)', () => {
  it('the CLI round sends SPADE system prompt and corpus prompt, keeps each attempt document, and hints SPADE way', async () => {
    const system = constant('spade/core/prompts/template.py', 'MULTITURN_GAME_GENERATION_SYSTEM_PROMPT');
    const hintSystem = constant('spade/core/hint_generator.py', 'HINT_SYSTEM_PROMPT');
    let designs = 0;
    let hintTries = 0;
    server = await startStandIn((b) => {
      const m = msgs(b);
      if (m[0]!.content === hintSystem) return ++hintTries === 1 ? { content: '' } : { content: '```json\n{"hint": "Seven is lucky."}\n```' };
      designs++;
      return { content: designs === 1 ? 'no code, sorry' : `\`\`\`python\n${luckySevenGame('LuckyEnv')}\`\`\`` };
    });
    const corpus = corpusFile();
    const r = await cli(['--skills', 'Logical Deduction', '--count', '1', '--attempts', '3', '--feedback', 'spade', '--designer', server.url, '--designer-model', 'designer', '--play-seeds', '0', '--spade-src', spadeSrc, '--corpus', corpus, '--corpus-max-words', '8', '--seed', '3', '--data-dir', join(tmp.dir, 'd1'), '--json']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as { prompts: { from: string; src: string }; games: { accepted: boolean; hint: string | null; grounding: { docId: number; text: string; truncated: boolean } | null; attempts: { system: string | null; prompt: string; builder: string; document: { docId: number; text: string; truncated: boolean } | null }[] }[] };
    expect(j.prompts).toMatchObject({ from: 'spade' });
    const g = j.games[0]!;
    expect(g.accepted).toBe(true);
    expect(g.attempts).toHaveLength(2);
    // SPADE samples a fresh document per attempt with CorpusLoader(seed=42) (corpus_orchestrator.py:92):
    // the documents recorded are SPADE's own loader's first two draws, truncated by words as it truncates.
    const draws = JSON.parse(spadeModule('spade/core/corpus.py', 'L=m.CorpusLoader(sys.argv[2], max_doc_tokens=8, seed=42); L.load(); print(json.dumps([(d.doc_id, d.text) for d in (L.sample(1)[0] for _ in range(2))]))', corpus)) as [number, string][];
    expect(g.attempts.map((a) => [a.document!.docId, a.document!.text])).toEqual(draws);
    for (const a of g.attempts) {
      expect(a.system).toBe(system);
      expect(a.builder).toBe('spade:spade/core/prompts/corpus_template.py:generate_corpus_grounded_prompt');
      expect(a.prompt).toContain(`\n${a.document!.text}\n`);
    }
    expect(g.grounding).toEqual(g.attempts[1]!.document);
    // The messages sent: SPADE's system prompt, then the corpus prompt SPADE's own function builds for that document.
    const designerCalls = server.requests.filter((b) => msgs(b)[0]!.content === system);
    expect(designerCalls).toHaveLength(2);
    const body = spadeModule('spade/core/prompts/corpus_template.py', "sys.stdout.write(m.generate_corpus_grounded_prompt('Logical Deduction', {'description': sys.argv[2]}, 'medium', sys.argv[3]))", JSON.parse(py(`import ast,json,sys\nt=ast.parse(open(sys.argv[1]).read())\nc=[n for n in t.body if isinstance(n, ast.ClassDef) and n.name=='SyntheticGameGenerator'][0]\nv=[ast.literal_eval(n.value) for n in c.body if isinstance(n, ast.Assign) and getattr(n.targets[0],'id','')=='COGNITIVE_SKILLS'][0]\nprint(json.dumps(v['Logical Deduction']['description']))`, join(spadeSrc, 'spade/core/game_generator.py'))) as string, g.attempts[0]!.document!.text);
    expect(msgs(designerCalls[0]!)).toEqual([{ role: 'system', content: system }, { role: 'user', content: body }]);
    // Hints: SPADE's prompt, temperature 0.3 and 2048 tokens (types.py:154-155); an empty answer is retried.
    const hintCalls = server.requests.filter((b) => msgs(b)[0]!.content === hintSystem);
    expect(hintCalls).toHaveLength(2);
    expect(hintCalls.map((b) => [b.temperature, b.max_tokens])).toEqual([[0.3, 2048], [0.3, 2048]]);
    expect(msgs(hintCalls[0]!)[1]!.content).toBe(`Environment code:\n\`\`\`python\n${luckySevenGame('LuckyEnv').replace(/\n$/, '')}\n\`\`\``);
    expect(g.hint).toBe('Seven is lucky.');
  }, 120_000);

  it('refuses a corpus file with no document, and one that is missing, before anything runs', async () => {
    const bad = join(tmp.dir, 'bad.jsonl');
    writeFileSync(bad, '{"title": "no text field"}\nnot json\n');
    const base = ['--skills', 'Logical Deduction', '--designer', 'http://127.0.0.1:9/v1', '--designer-model', 'd', '--play-seeds', '0', '--spade-src', spadeSrc, '--data-dir', join(tmp.dir, 'd2')];
    const r = await cli([...base, '--corpus', bad]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/The corpus file .*bad\.jsonl has no document: SPADE's format is JSONL, one object a line with a non-empty "orig_doc" or "text"/);
    const r2 = await cli([...base, '--corpus', join(tmp.dir, 'absent.jsonl')]);
    expect(r2.code).toBe(2);
    expect(r2.err).toMatch(/absent\.jsonl does not exist/);
    const r3 = await cli([...base.filter((x) => x !== spadeSrc && x !== '--spade-src'), '--corpus', bad]);
    expect(r3.err).toMatch(/--corpus FILE is sampled by SPADE's CorpusLoader: give --spade-src DIR/);
    await expect(sampleCorpus(spadeSrc, { path: bad, maxDocTokens: 10, seed: 42, draws: 1 })).rejects.toThrow(/has no document/);
    // Bytes that are not UTF-8 (SPADE reads the corpus as UTF-8): said so, with where.
    const binary = join(tmp.dir, 'binary.jsonl');
    writeFileSync(binary, Buffer.from([0x7b, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a]));
    await expect(sampleCorpus(spadeSrc, { path: binary, maxDocTokens: 10, seed: 42, draws: 1 })).rejects.toThrow(/binary\.jsonl is not UTF-8 text \(invalid start byte at byte 6\)/);
  });

  it("appends SPADE's own memory appendix (its orchestrator's words, its EnvironmentMemory formats) to the seeds drawn", async () => {
    pool ??= new AuditPool({ workers: 1, envTimeoutSec: 60 });
    const rec = (envId: number, winRate: number, regret: number) => ({ envId, name: `game_${envId}`, skill: 'Logical Deduction', winRate, regret, snippet: `class Seed${envId}Env:\n    pass`, source: 'memory' });
    const seen: { role: string; content: string }[][] = [];
    const g = await designGame(
      { skill: 'Logical Deduction', difficulty: 'hard', maxTurns: 25, template: '', prompts: await spadeSource(spadeSrc, { draws: 1 }), memory: [rec(1, 0.5, 0.4), rec(2, 0.3, 0.3), rec(3, 0.95, 0.1)], attempts: 1, feedback: 'spade', seed: 4, acceptance: { gate: 'workbench', resetGate: false, envValidator: false, maxTurns: 25 }, instruction: 'keep it short' },
      { designer: { complete: async (m: unknown) => (seen.push(m as { role: string; content: string }[]), { text: 'no code', reasoning: null, toolCalls: [], finishReason: 'stop' }) } as unknown as Chat, check: (code) => pool!.audit(code, { maxTurns: 4 }) },
    );
    const a = g.attempts[0]!;
    const shown = a.seeds as { positives: number[]; negatives: number[] };
    // The oracle: SPADE's multi-turn builder from its module file, then _augment_prompt_with_memory taken
    // out of orchestrator.py on its own, over a real EnvironmentMemory holding real EnvironmentRecords.
    const byId = new Map([1, 2, 3].map((i) => [i, rec(i, [0.5, 0.3, 0.95][i - 1]!, [0.4, 0.3, 0.1][i - 1]!)]));
    const records = (ids: number[]) => ids.map((i) => byId.get(i)!).map((r) => ({ game_file: `/x/${r.name}.py`, skill: r.skill, code_snippet: r.snippet, actor_win_rate: r.winRate, regret: r.regret }));
    const expected = py(
      `import ast,importlib.util,json,random,sys
def load(p):
    s=importlib.util.spec_from_file_location('m'+str(abs(hash(p))), p); m=importlib.util.module_from_spec(s); s.loader.exec_module(m); return m
root=sys.argv[1]; t=load(root+'/spade/core/prompts/template.py'); em=load(root+'/spade/core/env_memory.py'); g=ast.parse(open(root+'/spade/core/game_generator.py').read())
skills=[ast.literal_eval(n.value) for c in g.body if isinstance(c, ast.ClassDef) for n in c.body if isinstance(n, ast.Assign) and getattr(n.targets[0],'id','')=='COGNITIVE_SKILLS'][0]
random.seed(4); body=t.generate_multiturn_game_generation_prompt('Logical Deduction', skills['Logical Deduction'], 'hard', max_turns=25)
o=ast.parse(open(root+'/spade/core/orchestrator.py').read())
fn=[n for c in o.body if isinstance(c, ast.ClassDef) for n in c.body if isinstance(n, ast.FunctionDef) and n.name=='_augment_prompt_with_memory'][0]
ns={}; exec(compile(ast.Module(body=[fn], type_ignores=[]), 'o', 'exec'), ns)
pos=[em.EnvironmentRecord(**r) for r in json.loads(sys.argv[2])]; neg=[em.EnvironmentRecord(**r) for r in json.loads(sys.argv[3])]
mem=em.EnvironmentMemory(); mem.records=pos+neg
mem.high_regret_seeds=lambda n=2, skill=None: pos; mem.low_quality_examples=lambda n=1, skill=None: neg
class O: env_memory=mem
sys.stdout.write(ns['_augment_prompt_with_memory'](O(), body, 'Logical Deduction'))`,
      spadeSrc,
      JSON.stringify(records(shown.positives)),
      JSON.stringify(records(shown.negatives)),
    );
    expect(shown.positives.length).toBeGreaterThan(0);
    expect(shown.negatives).toEqual([3]);
    // The researcher's words stay a workbench extra, last.
    expect(a.prompt).toBe(`${expected.trimEnd()}\n\nInstruction from the researcher: keep it short`);
    expect(seen[0]).toEqual(a.messages);
    expect(a.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(a.messages[1]!.content).toBe(a.prompt);
  });

  it('the CLI plays an accepted tool-use game with tool calls, as the workbench plays tool-use games', async () => {
    server = await startStandIn((b) => {
      const m = msgs(b);
      if (String(b.model) === 'designer') {
        if (m[0]!.role === 'system') return { content: 'Look both prices up.' };
        return { content: `\`\`\`python\n${m.at(-1)!.content.includes('ToolUseBaseEnv') ? priceLedgerToolGame('PriceLedgerEnv') : luckySevenGame('LuckyEnv')}\`\`\`` };
      }
      // The agent: calls both lookups as structured tool calls, then answers with the sum of what they returned.
      const results = m.filter((x) => x.role === 'tool').map((x) => Number(x.content));
      if (results.length < 2)
        return { content: '', tool_calls: ['apple', 'pear'].map((item, i) => ({ id: `c${i}`, type: 'function' as const, function: { name: 'lookup_price', arguments: JSON.stringify({ item }) } })) };
      return { content: `<answer>${results[0]! + results[1]!}</answer>` };
    });
    const r = await cli(['--skills', 'Data Retrieval', '--count', '1', '--attempts', '1', '--designer', server.url, '--designer-model', 'designer', '--agent', server.url, '--agent-model', 'agent', '--play-seeds', '1', '--max-turns', '6', '--spade-src', spadeSrc, '--data-dir', join(tmp.dir, 'd3'), '--json']);
    expect(r.err).toBe('');
    const j = JSON.parse(r.out) as { games: { accepted: boolean; win_rate: number | null; regret: number | null; play_error: string | null }[] };
    expect(j.games[0]).toMatchObject({ accepted: true, play_error: null, win_rate: 1, regret: 0 });
    const agentCalls = server.requests.filter((b) => String(b.model) === 'agent');
    expect(agentCalls.every((b) => (b.tools as { function: { name: string } }[]).map((t) => t.function.name).sort().join() === 'list_items,lookup_price')).toBe(true);
    expect(agentCalls.some((b) => msgs(b).some((x) => x.role === 'tool'))).toBe(true);
  }, 120_000);

  it('a tool-use round with the stand-in designer makes ToolUseBaseEnv games that pass SPADE tool-use checks', async () => {
    // The stand-in follows the prompt: asked for a ToolUseBaseEnv subclass it writes one, else a \boxed game.
    server = await startStandIn((b) => {
      const m = msgs(b);
      if (m[0]!.role === 'system') return { content: 'Call the lookup tools, then answer.' };
      const asked = m.at(-1)!.content;
      return { content: `\`\`\`python\n${asked.includes('ToolUseBaseEnv') ? priceLedgerToolGame('PriceLedgerEnv') : luckySevenGame('LuckyEnv')}\`\`\`` };
    });
    pool = new AuditPool({ workers: 1, envTimeoutSec: 60 });
    const db = openDatabase(join(tmp.dir, 'tool.sqlite'));
    const designer = new ChatClient({ baseUrl: server.url, model: 'designer', apiKey: null, temperature: 0.6, topP: 0.95, topK: 20, maxTokens: 4096, thinking: null, turnTimeoutMs: 30_000, retries: 0, concurrency: 1, stream: false });
    const prompts = await spadeSource(spadeSrc, { draws: 2 });
    const round = await runRound(
      { skills: ['Data Retrieval', 'API Orchestration'], count: 2, difficulty: 'medium', maxTurns: 12, template: '', prompts, attempts: 1, feedback: 'spade', acceptance: { gate: 'workbench', resetGate: false, envValidator: false, maxTurns: 12 }, seed: 9, designerModel: 'designer' },
      { db, designer, check: (code) => pool!.audit(code, { maxTurns: 12 }), sleep: async () => {} },
    );
    expect(round.status).toBe('done');
    expect(round.config.prompts).toMatchObject({ kind: 'spade' });
    for (const g of round.games) {
      expect(g.accepted).toBe(true);
      const code = getVersion(db, g.env_hash!)!.source;
      expect(code).toMatch(/^class PriceLedgerEnv\(ToolUseBaseEnv\):/m);
      const audit = await pool.audit(code, { maxTurns: 12 });
      expect(audit.toolUse).toBe(true);
      const status = Object.fromEntries(audit.checks.map((c) => [c.id, c.status]));
      expect(Object.entries(status).filter(([id, s]) => id.startsWith('spade.') && s !== 'pass')).toEqual([]);
      expect([status['tool.schema'], status['tool.methods'], status['tool.params'], status['tool.done_reachable']]).toEqual(['pass', 'pass', 'pass', 'pass']);
      // SPADE sends a tool-use prompt as the user message alone (orchestrator.py:246-282), built by
      // generate_tool_use_prompt_multiturn (SPADE_MULTITURN_ENV_GEN=1) with its random seeded as the attempt's.
      const a = g.attempts[0]!;
      expect(a.system).toBeNull();
      expect(a.builder).toBe('spade:spade/core/prompts/tool_use_template.py:generate_tool_use_prompt_multiturn');
      const seed = 9 + g.idx * 1000;
      const expected = spadeModule('spade/core/prompts/tool_use_template.py', "random.seed(int(sys.argv[3])); sys.stdout.write(m.generate_tool_use_prompt_multiturn(sys.argv[2], m.TOOL_USE_SKILLS[sys.argv[2]], 'medium', ''))", g.skill, String(seed));
      expect(a.prompt).toBe(expected);
      // The hint is SPADE's tool-use hint prompt.
      expect(g.hint).toBe('Call the lookup tools, then answer.');
    }
    const hintSystems = server.requests.filter((b) => msgs(b)[0]!.role === 'system').map((b) => msgs(b)[0]!.content);
    expect(new Set(hintSystems)).toEqual(new Set([constant('spade/core/hint_generator.py', 'TOOL_USE_HINT_SYSTEM_PROMPT')]));
    db.close();
  }, 120_000);
});
