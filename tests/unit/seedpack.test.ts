// The seed pack (resources/seed-pack/) is played here with real CPython. A small loader written
// in this file stands in for SPADE's: it execs each program in a fresh namespace with SPADE's
// pre-bound names and SPADE's ToolUseBaseEnv as SPADE-FORMATS section 4 describes it, takes the
// first class whose name ends in Env, and plays the game's own solution(). Every environment
// without a declared defect must win on every seed; each declared defect must show itself.
// Stand-in: that ToolUseBaseEnv replaces the app's harness (native/harness.py) on purpose, so the
// pack is checked against the documented behaviour, not against whatever the harness does today.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { probePython } from '../../core/runtime/native';

const PACK = resolve(__dirname, '../../resources/seed-pack');
const GAMES = join(PACK, 'games');
const TOOLS = join(PACK, 'tool-use');

const GAME_SKILLS = [
  'Pattern Recognition', 'Logical Deduction', 'Strategic Planning', 'Mathematical Reasoning',
  'Spatial Reasoning', 'Causal Inference', 'Memory Recall', 'Optimization', 'Language Understanding',
];
const TOOL_SKILLS = [
  'API Orchestration', 'Data Retrieval', 'State Modification', 'Error Recovery', 'Tool Selection',
  'Multi-Step Workflows',
];
const DEFECT_KINDS = ['state_leak', 'ignores_seed', 'unwinnable', 'hint_leak'] as const;
type DefectKind = (typeof DEFECT_KINDS)[number];
const WIN_SEEDS = [0, 1, 2, 3, 4, 7, 42, 1234];
const BUDGET = 25;

const DRIVER = String.raw`
import ast, collections, copy, functools, heapq, itertools, json, math, operator, os
import random, re, statistics, string, sys, traceback, typing
import numpy

class ToolUseBaseEnv:
    """SPADE's base class as SPADE-FORMATS section 4 describes it (checked against SPADE's code), for this test only."""
    def __init__(self, max_turns=10, **kwargs):
        self.max_turns = max_turns
        self.turn_count = 0
        self._tools = {}
        self._state = {}
        self._call_history = []
        self._expected_answer = None
        self.reset()

    def reset(self, seed=None):
        raise NotImplementedError("Subclass must implement reset()")

    def solution(self):
        raise NotImplementedError("Subclass must implement solution()")

    def get_tools(self):
        return [{"type": "function", "function": {"name": n, "description": t.get("description", ""),
                 "parameters": t.get("parameters", {"type": "object", "properties": {}})}} for n, t in self._tools.items()]

    def _check_answer(self, answer):
        a, e = str(answer).strip(), str(self._expected_answer).strip()
        if a.lower() == e.lower():
            return True
        try:
            return abs(float(a.replace("$", "").replace(",", "").strip()) - float(e.replace("$", "").replace(",", "").strip())) < 0.01
        except (ValueError, TypeError):
            return False

    def step(self, action):
        self.turn_count += 1
        out_of_turns = self.turn_count >= self.max_turns
        answer = re.search(r"<answer>(.*?)</answer>", action, re.S)
        if answer:
            if self._check_answer(answer.group(1).strip()):
                return "Correct!", 1.0, True, False, {}
            if out_of_turns:
                return "Wrong answer. Solution:\n" + str(self.solution()), 0.0, False, True, {}
            return "Incorrect. Keep using tools.", 0.0, False, False, {}
        call = re.search(r"<tool_call>(.*?)</tool_call>", action, re.S)
        if not call:
            if out_of_turns:
                return "Time up. Solution:\n" + str(self.solution()), 0.0, False, True, {}
            return "Format error: use tools to call a function, or <answer>result</answer> to submit.", -0.1, False, False, {}
        try:
            payload = json.loads(call.group(1))
            name, args = payload.get("name", ""), payload.get("arguments", {})
            if not isinstance(args, dict):
                args = {}
        except (json.JSONDecodeError, AttributeError):
            if out_of_turns:
                return "Time up. Solution:\n" + str(self.solution()), 0.0, False, True, {}
            return "Format error: invalid tool call arguments.", -0.1, False, False, {}
        method = getattr(self, "tool_" + str(name), None)
        if method is None:
            if out_of_turns:
                return "Time up. Solution:\n" + str(self.solution()), 0.0, False, True, {}
            return "Unknown tool '" + str(name) + "'. Available: " + ", ".join(self._tools), 0.0, False, False, {}
        try:
            result = method(**args)
            self._call_history.append({"name": name, "arguments": args, "result": str(result)})
        except Exception as err:  # SPADE says "Error calling <name>: <e>"; marked here so the test can find it
            result = "TOOL_FAILURE calling " + str(name) + ": " + str(err)
        obs = "Tool result:\n" + str(result)
        if out_of_turns:
            return obs + "\n\nTime up. Solution:\n" + str(self.solution()), 0.0, False, True, {}
        return obs, 0.0, False, False, {}

PREBOUND = {}
for mod in (itertools, math, random, re, json, collections, functools, string, copy, heapq, operator, statistics):
    PREBOUND[mod.__name__] = mod
PREBOUND.update(np=numpy, numpy=numpy, deque=collections.deque, defaultdict=collections.defaultdict,
                Counter=collections.Counter, OrderedDict=collections.OrderedDict, namedtuple=collections.namedtuple,
                combinations=itertools.combinations, permutations=itertools.permutations, product=itertools.product,
                chain=itertools.chain, accumulate=itertools.accumulate, reduce=functools.reduce,
                lru_cache=functools.lru_cache, deepcopy=copy.deepcopy, heappush=heapq.heappush, heappop=heapq.heappop,
                ToolUseBaseEnv=ToolUseBaseEnv)
for name in ("Tuple Dict List Optional Union Any Set FrozenSet Callable Iterable Sequence Mapping").split():
    PREBOUND[name] = getattr(typing, name)

def load_class(path):
    ns = {"__name__": "spade_env"}
    ns.update(PREBOUND)
    with open(path, encoding="utf-8") as fh:
        exec(compile(fh.read(), path, "exec"), ns)
    for name, value in ns.items():
        if name.endswith("Env") and name not in ("Env", "ToolUseBaseEnv") and callable(value):
            return name, value
    raise RuntimeError("no class ending in Env")

def make(cls):
    try:
        env = cls()
    except TypeError:
        env = cls(max_turns=${BUDGET})
    designed = getattr(env, "max_turns", None)
    if isinstance(designed, int) and designed > 0:
        env.max_turns = min(designed, ${BUDGET})
    return env

def type_problem(ret, tool):
    if not isinstance(ret, tuple) or len(ret) != 5:
        return "step did not return a 5-tuple: " + repr(ret)[:80]
    obs, reward, term, trunc, info = ret
    if type(obs) is not str: return "observation is " + type(obs).__name__
    if type(reward) is not float: return "reward is " + type(reward).__name__
    low = -0.1 if tool else 0.0
    if not low <= reward <= 1.0: return "reward out of range: " + repr(reward)
    if type(term) is not bool or type(trunc) is not bool: return "flags are not bool"
    if type(info) is not dict: return "info is " + type(info).__name__
    return None

def do_reset(env, seed):
    out = env.reset(seed=seed)
    return out if isinstance(out, tuple) else (out, {})

def actions_of(sol):
    return list(sol) if isinstance(sol, list) else ["\\boxed{" + str(sol) + "}"]

def answer_text(sol):
    last = actions_of(sol)[-1]
    m = re.search(r"\\boxed\{([^}]*)\}", last) or re.search(r"<answer>(.*?)</answer>", last, re.S)
    return m.group(1).strip() if m else last

def play(env, seed, problems, tool):
    obs, info = do_reset(env, seed)
    sol = env.solution()
    won, outputs = False, []
    for action in actions_of(sol):
        ret = env.step(action)
        p = type_problem(ret, tool)
        if p: problems.append(p)
        outputs.append(ret[0])
        if ret[2] or ret[3]:
            won = ret[1] == 1.0 and ret[2]
            break
    return obs, won, outputs, sol

def spade_checks(cls):
    env = make(cls)
    obs, info = do_reset(env, 42)
    if not isinstance(obs, str) or not obs.strip() or not isinstance(info, dict):
        return "reset(seed=42) failed"
    for i, action in enumerate(("\\boxed{1}", "\\boxed{test}", "\\boxed{42}")):
        ret = env.step(action)
        if not isinstance(ret, tuple) or len(ret) != 5 or not -10 <= ret[1] <= 10:
            return "step failed on action " + str(i)
        if ret[2] or ret[3]:
            break
    obs, info = do_reset(env, 123)
    return None if isinstance(obs, str) and obs.strip() else "reset(seed=123) failed"

def report(path, kind):
    out = {"file": os.path.basename(path), "kind": kind}
    try:
        name, cls = load_class(path)
        out["className"] = name
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        mods = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import): mods.update(a.name.split(".")[0] for a in node.names)
            if isinstance(node, ast.ImportFrom) and node.module: mods.add(node.module.split(".")[0])
        out["nonStdlibImports"] = sorted(m for m in mods if m not in sys.stdlib_module_names)
        out["spadeCheck"] = spade_checks(cls)
        tool = kind == "tool"
        problems = []
        wins, answers, tool_outputs, reused_answers = {}, {}, [], []
        for seed in ${JSON.stringify(WIN_SEEDS)}:
            _, won, outputs, sol = play(make(cls), seed, problems, tool)
            wins[str(seed)] = won
            answers[str(seed)] = answer_text(sol)
            out.setdefault("solutionShape", "list" if isinstance(sol, list) else type(sol).__name__)
            if tool: tool_outputs.extend(outputs[:-1])
        out["wins"], out["answers"], out["toolOutputs"] = wins, answers, tool_outputs
        out["freshObs"] = [do_reset(make(cls), s)[0] for s in range(5)]
        reused = make(cls)
        for s in range(5):
            play(reused, s, problems, tool)
        second = []
        for s in range(5):
            obs, won, _, sol = play(reused, s, problems, tool)
            second.append(obs)
            reused_answers.append(answer_text(sol))
            out.setdefault("reusedWins", []).append(won)
        out["reusedObs"] = second
        out["reusedAnswers"] = reused_answers
        out["noSeedReset"] = isinstance(do_reset(make(cls), None)[0], str)
        if tool:
            env = make(cls)
            do_reset(env, 0)
            out["tools"] = [t["function"]["name"] for t in env.get_tools()]
            out["multiTurn"] = len(getattr(env, "_user_messages", [])) > 0
            crit = []
            for c in getattr(env, "_message_criteria", []):
                try: crit.append(bool(c(env._state)))
                except Exception: crit.append("raised")
            out["criteriaAtReset"] = crit
        else:
            rng = random.Random(999)
            easy = 0
            for i in range(20):
                env = make(cls)
                do_reset(env, i)
                for _ in range(5):
                    ret = env.step("\\boxed{" + str(rng.randint(1, 100)) + "}")
                    p = type_problem(ret, False)
                    if p: problems.append(p)
                    if ret[2] or ret[3]:
                        easy += ret[1] == 1.0
                        break
            out["tooEasyRate"] = easy / 20
            brute = 0
            for seed in range(3):
                for k in range(1, 61):
                    env = make(cls)
                    do_reset(env, seed)
                    ret = env.step("\\boxed{" + str(k) + "}")
                    brute += ret[1] == 1.0 and ret[2]
            out["bruteWins"] = brute
        out["typeProblems"] = sorted(set(problems))
    except Exception:
        out["error"] = traceback.format_exc()
    return out

pack = sys.argv[1]
results = []
for name in sorted(os.listdir(os.path.join(pack, "games"))):
    if name.endswith(".py"):
        results.append(report(os.path.join(pack, "games", name), "game"))
for name in sorted(os.listdir(os.path.join(pack, "tool-use"))):
    if name.endswith(".py"):
        results.append(report(os.path.join(pack, "tool-use", name), "tool"))
print(json.dumps(results))
`;

interface EnvReport {
  file: string;
  kind: 'game' | 'tool';
  className?: string;
  error?: string;
  nonStdlibImports: string[];
  spadeCheck: string | null;
  solutionShape: string;
  wins: Record<string, boolean>;
  answers: Record<string, string>;
  toolOutputs: string[];
  freshObs: string[];
  reusedObs: string[];
  reusedAnswers: string[];
  reusedWins: boolean[];
  noSeedReset: boolean;
  tools?: string[];
  multiTurn?: boolean;
  criteriaAtReset?: (boolean | 'raised')[];
  tooEasyRate?: number;
  bruteWins?: number;
  typeProblems: string[];
}

interface GameSpec {
  name: string;
  skill: string;
  kind: string;
  description: string;
  defect: string | null;
  needs?: string[];
  seed: boolean;
  tags: string[];
}

interface ManifestEntry {
  file: string;
  name: string;
  skill: string;
  source_run: string;
  model_scale: null;
  recipe: string;
  step: number;
  mean_reward: null;
  solve_rate: null;
  hint: string;
  seed: boolean;
  tags: string[];
}

const gameFiles = readdirSync(GAMES).filter((f) => f.endsWith('.py')).sort();
const toolFiles = readdirSync(TOOLS).filter((f) => f.endsWith('.py')).sort();
const stem = (file: string) => file.replace(/\.py$/, '');
const specOf = (file: string): GameSpec =>
  JSON.parse(readFileSync(join(GAMES, `${stem(file)}.json`), 'utf8')) as GameSpec;
const hintOf = (file: string) => readFileSync(join(GAMES, `${stem(file)}_hint.txt`), 'utf8').trim();
const manifest = JSON.parse(readFileSync(join(TOOLS, 'manifest.json'), 'utf8')) as ManifestEntry[];
const defectKind = (spec: GameSpec): DefectKind | null => {
  if (spec.defect === null) return null;
  const kind = spec.defect.split(':')[0] as DefectKind;
  if (!DEFECT_KINDS.includes(kind)) throw new Error(`unknown defect kind in ${spec.name}: ${spec.defect}`);
  return kind;
};
const mentions = (hint: string, answer: string) =>
  answer.length >= 2 && new RegExp(`(^|\\W)${answer.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|\\W)`, 'i').test(hint);

let reports = new Map<string, EnvReport>();

beforeAll(() => {
  // The interpreter native runs use (it has numpy), not whichever python3 is first on PATH.
  const run = spawnSync(probePython()?.path ?? 'python3', ['-c', DRIVER, PACK], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`python driver failed: ${run.stderr}`);
  const parsed = JSON.parse(run.stdout) as EnvReport[];
  reports = new Map(parsed.map((r) => [r.file, r]));
}, 120_000);

function answerOf(r: EnvReport, seed: number): string {
  const a = r.answers[String(seed)];
  if (a === undefined) throw new Error(`${r.file}: no answer recorded for seed ${seed}`);
  return a;
}

function reportOf(file: string): EnvReport {
  const r = reports.get(file);
  if (!r) throw new Error(`no report for ${file}`);
  if (r.error) throw new Error(`${file} failed to load or play:\n${r.error}`);
  return r;
}

describe('seed pack layout', () => {
  it('has enough environments of each sort', () => {
    const specs = gameFiles.map(specOf);
    expect(gameFiles.length + toolFiles.length).toBeGreaterThanOrEqual(16);
    expect(gameFiles.length).toBeGreaterThanOrEqual(10);
    expect(new Set(specs.map((s) => s.skill)).size).toBeGreaterThanOrEqual(7);
    expect(toolFiles.length).toBeGreaterThanOrEqual(4);
    const kinds = specs.map(defectKind).filter((k) => k !== null);
    for (const k of ['state_leak', 'ignores_seed', 'unwinnable'] as const) expect(kinds).toContain(k);
  });

  it('names games as SPADE does, numbered 1..N in rollout 0, each with a hint and a spec', () => {
    const indices: number[] = [];
    for (const file of gameFiles) {
      const m = /^game_(\d{5})_(\d{3})_([a-z_]+)\.py$/.exec(file);
      expect(m, file).not.toBeNull();
      expect(m![1]).toBe('00000');
      indices.push(Number(m![2]));
      const spec = specOf(file);
      expect(Object.keys(spec).sort(), file).toEqual(
        ['defect', 'description', 'kind', 'name', 'skill', 'tags', ...(spec.needs ? ['needs'] : [])].sort(),
      );
      expect(spec.kind).toBe('game');
      // Imported tagged `seed`, so `tag:seed` selects the pack; the seed flag stays the researcher's curation.
      expect(spec).toMatchObject({ tags: ['seed'] });
      expect(spec).not.toHaveProperty('seed');
      expect(GAME_SKILLS).toContain(spec.skill);
      expect(m![3]).toBe(spec.skill.toLowerCase().replace(/ /g, '_'));
      expect(spec.description.length).toBeGreaterThan(10);
      const source = readFileSync(join(GAMES, file), 'utf8');
      expect(source.split('\n')[0]).toBe('"""SPADE self-play generated game"""');
      expect(source).toMatch(/def solution\(self\)/);
      expect(source).not.toMatch(/self\.solution\s*=/);
      if (spec.defect !== null) expect(source.split('\n').slice(0, 6).join('\n')).toMatch(/DELIBERATE DEFECT/);
    }
    expect(indices).toEqual(indices.map((_, i) => i + 1));
    const extra = readdirSync(GAMES).filter(
      (f) => !gameFiles.some((g) => [`${stem(g)}.py`, `${stem(g)}.json`, `${stem(g)}_hint.txt`].includes(f)),
    );
    expect(extra).toEqual([]);
  });

  it('writes cognitive hints of one to three sentences', () => {
    for (const file of gameFiles) {
      const hint = hintOf(file);
      const sentences = hint.split(/(?<=[.!?])\s+/).filter((s) => s.trim());
      expect(sentences.length, file).toBeGreaterThanOrEqual(1);
      expect(sentences.length, file).toBeLessThanOrEqual(3);
    }
  });

  it('keeps the tool-use release layout: a manifest entry per file, value-free step plans', () => {
    expect(manifest.map((e) => e.file).sort()).toEqual(toolFiles);
    expect(readdirSync(TOOLS).filter((f) => !f.endsWith('.py')).sort()).toEqual(['manifest.json']);
    for (const e of manifest) {
      expect(Object.keys(e).sort()).toEqual(
        ['file', 'hint', 'mean_reward', 'model_scale', 'name', 'recipe', 'skill', 'solve_rate', 'source_run', 'step', 'tags'].sort(),
      );
      expect(e).not.toHaveProperty('seed');
      expect(e).toMatchObject({ tags: ['seed'], source_run: 'seed-pack', model_scale: null, recipe: 'hand-written', step: 0, mean_reward: null, solve_rate: null });
      expect(TOOL_SKILLS).toContain(e.skill);
      expect(e.hint).toMatch(/^1\. .+ 2\. /);
      const source = readFileSync(join(TOOLS, e.file), 'utf8');
      expect(source).toMatch(new RegExp(`class ${e.name}\\(ToolUseBaseEnv\\)`));
      expect(source).not.toMatch(/import\s+ToolUseBaseEnv|import.*\bToolUseBaseEnv\b/);
    }
  });

  it('has a README row for every environment', () => {
    const readme = readFileSync(join(PACK, 'README.md'), 'utf8');
    for (const file of gameFiles) {
      expect(readme).toContain(file);
      expect(readme).toContain(specOf(file).name);
    }
    for (const e of manifest) {
      expect(readme).toContain(e.file);
      expect(readme).toContain(e.name);
    }
  });

  it('uses only the standard library, except exactly one game that declares numpy', () => {
    const numpyGames = gameFiles.filter((f) => specOf(f).needs?.includes('numpy'));
    expect(numpyGames).toHaveLength(1);
    for (const file of [...gameFiles, ...toolFiles]) {
      const r = reportOf(file);
      expect(r.nonStdlibImports, file).toEqual(numpyGames.includes(file) ? ['numpy'] : []);
    }
  });
});

describe('seed pack games under CPython', () => {
  it.each(gameFiles)('%s loads as its declared class and passes SPADE checks', (file) => {
    const r = reportOf(file);
    expect(r.className).toBe(specOf(file).name);
    expect(r.spadeCheck).toBeNull();
    expect(r.typeProblems).toEqual([]);
    expect(r.noSeedReset).toBe(true);
    expect(['list', 'str']).toContain(r.solutionShape);
  });

  it.each(gameFiles)('%s behaves as its spec says', (file) => {
    const r = reportOf(file);
    const spec = specOf(file);
    const kind = defectKind(spec);
    const allWins = Object.values(r.wins);
    if (kind === 'unwinnable') {
      expect(allWins.some(Boolean)).toBe(false);
      expect(r.reusedWins.some(Boolean)).toBe(false);
      expect(r.bruteWins).toBe(0);
      return;
    }
    expect(r.wins).toEqual(Object.fromEntries(WIN_SEEDS.map((s) => [String(s), true])));
    expect(r.reusedWins.every(Boolean)).toBe(true);
    expect(r.tooEasyRate!).toBeLessThanOrEqual(0.15);
    // A seed deals an episode: its first observation and the answer behind it.
    const dealt = (obs: string[], answers: string[]) => obs.map((o, i) => `${o}\u0000${answers[i]}`);
    const fresh = dealt(r.freshObs, [0, 1, 2, 3, 4].map((s) => answerOf(r, s)));
    const reused = dealt(r.reusedObs, r.reusedAnswers);
    if (kind === 'ignores_seed') {
      expect(new Set(r.freshObs).size).toBe(1);
      expect(new Set(fresh).size).toBe(1);
    } else {
      expect(new Set(fresh).size).toBeGreaterThanOrEqual(2);
    }
    if (kind === 'state_leak') {
      expect(reused).not.toEqual(fresh);
    } else {
      expect(reused).toEqual(fresh);
    }
    // Only a one-shot answer can be looked for in the hint; a move such as "up" is not a secret.
    if (r.solutionShape === 'str') {
      const hint = hintOf(file);
      const leaked = WIN_SEEDS.filter((s) => mentions(hint, answerOf(r, s)));
      if (kind === 'hint_leak') expect(leaked).toEqual(WIN_SEEDS);
      else expect(leaked).toEqual([]);
    } else {
      expect(kind).not.toBe('hint_leak');
    }
  });
});

describe('seed pack tool-use environments under CPython', () => {
  it.each(toolFiles)('%s solves on every seed through tool calls that all succeed', (file) => {
    const r = reportOf(file);
    const entry = manifest.find((e) => e.file === file)!;
    expect(r.className).toBe(entry.name);
    expect(r.spadeCheck).toBeNull();
    expect(r.typeProblems).toEqual([]);
    expect(r.solutionShape).toBe('list');
    expect(r.wins).toEqual(Object.fromEntries(WIN_SEEDS.map((s) => [String(s), true])));
    expect(r.reusedWins.every(Boolean)).toBe(true);
    expect(r.reusedObs).toEqual(r.freshObs);
    expect(r.reusedAnswers).toEqual([0, 1, 2, 3, 4].map((s) => answerOf(r, s)));
    expect(new Set(r.freshObs).size).toBeGreaterThanOrEqual(2);
    expect(r.toolOutputs.length).toBeGreaterThan(0);
    for (const out of r.toolOutputs) expect(out).not.toMatch(/TOOL_FAILURE|Unknown tool/);
    expect(r.criteriaAtReset!.every((c) => c === false)).toBe(true);
    // "done" is the multi-turn protocol word, not a secret.
    const leaked = WIN_SEEDS.filter((s) => answerOf(r, s) !== 'done' && mentions(entry.hint, answerOf(r, s)));
    expect(leaked).toEqual([]);
  });

  it('includes a multi-turn environment whose requests all start unmet', () => {
    const multi = toolFiles.map(reportOf).filter((r) => r.multiTurn);
    expect(multi.length).toBeGreaterThanOrEqual(1);
    for (const r of multi) {
      expect(r.criteriaAtReset!.length).toBeGreaterThanOrEqual(3);
      expect(Object.values(r.answers).every((a) => a === 'done')).toBe(true);
    }
  });
});

describe('seed pack files exist where the importer looks', () => {
  it('has hint and spec beside each game', () => {
    for (const file of gameFiles) {
      expect(existsSync(join(GAMES, `${stem(file)}_hint.txt`)), file).toBe(true);
      expect(existsSync(join(GAMES, `${stem(file)}.json`)), file).toBe(true);
    }
  });
});
