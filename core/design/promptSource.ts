/**
 * Where an attempt's designer prompt comes from: SPADE's own texts read from a checkout at run time
 * (core/design/spadeCheckout.ts), or the workbench's own template (resources/design/designer.txt),
 * which is the fallback and says that it is ours. Either gives, per attempt, the system message
 * (or none), the prompt's body before the memory appendix, and the corpus document it was
 * grounded on; core/design/attempt.ts appends the seeds and stores the exact messages sent.
 */
import { TOOL_USE_SKILLS } from '../api/skills';
import { fillTemplate, minSteps, SKILL_DESCRIPTIONS, type Difficulty } from './prompt';
import { SNIPPET_CHARS, type SeedDraw } from './seeds';
import { readSpadeTexts, sampleCorpus, spadePromptBody, type CheckoutOptions, type CorpusDraw, type PromptKind, type SpadeTexts } from './spadeCheckout';

/** The document an attempt was grounded on, kept with the attempt (SPADE keeps its id and first 200 characters, corpus_orchestrator.py:199-200). */
export interface GroundingDoc {
  /** The document's line number among the corpus's kept documents (SPADE's doc_id). */
  docId: number;
  /** The text the prompt carried (after SPADE's truncation). */
  text: string;
  truncated: boolean;
  corpus: string;
  maxWords: number;
}

export interface AttemptPrompt {
  system: string | null;
  body: string;
  document: GroundingDoc | null;
  /** What built the body: `spade:<file>:<function>` or `workbench:resources/design/designer.txt`. */
  builder: string;
  /** The body already carries the memory appendix (SPADE's own, from the checkout); else the caller appends ours. */
  withSeeds: boolean;
}

export interface PromptSource {
  /** `spade` (texts from the checkout at `src`) or `workbench` (our own template). */
  readonly kind: 'spade' | 'workbench';
  readonly src: string | null;
  /** SPADE's hint system prompts (hint_generator.py), when the texts are SPADE's. */
  readonly hints: { cognitive: string; toolUse: string } | null;
  readonly texts: SpadeTexts | null;
  next(a: { skill: string; difficulty: Difficulty; maxTurns: number; seed: number; seeds: SeedDraw }): Promise<AttemptPrompt>;
}

export const WORKBENCH_BUILDER = "workbench:resources/design/designer.txt (the workbench's own template, not SPADE's)";

const isToolUse = (skill: string) => (TOOL_USE_SKILLS as readonly string[]).includes(skill);

/** The workbench's own template, filled as before (no system message: it is not SPADE's prompt). */
export function workbenchSource(template: string, custom = false): PromptSource {
  return {
    kind: 'workbench',
    src: null,
    hints: null,
    texts: null,
    async next(a) {
      const body = fillTemplate(template, { skill: a.skill, skill_description: SKILL_DESCRIPTIONS[a.skill] ?? '', difficulty: a.difficulty, min_steps: String(minSteps(a.difficulty)), max_turns: String(a.maxTurns), document: '' });
      return { system: null, body, document: null, builder: custom ? 'workbench:a template file the user gave' : WORKBENCH_BUILDER, withSeeds: false };
    },
  };
}

export interface CorpusSpec {
  path: string;
  /** SPADE's --spade-corpus-max-doc-tokens (a word count): 6000 in cmd/games/train_spade_*.sh, 4000 in cmd/tool_use/. */
  maxWords: number;
  /** SPADE's --spade-corpus-seed: 42 in every recipe. */
  seed: number;
}

/** SPADE's corpus word limit as its recipe scripts set it: 4000 for tool-use rounds (cmd/tool_use/train_spade_4b.sh:100), 6000 otherwise (cmd/games/train_spade_8b.sh:153). */
export const corpusMaxWords = (skills: readonly string[]): number => (skills.length && skills.every(isToolUse) ? 4000 : 6000);
export const CORPUS_SEED = 42;

/**
 * SPADE's texts from the checkout at `src`, and with a corpus, its documents drawn in SPADE's order:
 * one `sample(1)` per attempt from one seeded generator (corpus_orchestrator.py:92), `draws` of them
 * (every attempt the round may make), handed out in the order attempts are made.
 */
export async function spadeSource(src: string, opts: { corpus?: CorpusSpec | null; draws: number; toolUseVariant?: 'multiturn' | 'single' } & CheckoutOptions): Promise<PromptSource> {
  const texts = await readSpadeTexts(src, opts);
  const queue: CorpusDraw[] = opts.corpus ? (await sampleCorpus(src, { path: opts.corpus.path, maxDocTokens: opts.corpus.maxWords, seed: opts.corpus.seed, draws: opts.draws }, opts)).docs : [];
  const corpus = opts.corpus ?? null;
  return {
    kind: 'spade',
    src: texts.src,
    hints: texts.hint,
    texts,
    async next(a) {
      let document: GroundingDoc | null = null;
      if (corpus) {
        const d = queue.shift();
        if (!d) throw new Error('not-user-facing: the round drew fewer corpus documents than it made attempts');
        document = { docId: d.docId, text: d.text, truncated: d.truncated, corpus: corpus.path, maxWords: corpus.maxWords };
      }
      const toolUse = isToolUse(a.skill);
      // Tool-use recipes set SPADE_MULTITURN_ENV_GEN=1 (cmd/tool_use/train_spade_4b.sh:182): the multi-turn builder.
      const kind: PromptKind = toolUse ? (opts.toolUseVariant === 'single' ? 'tool_use' : 'tool_use_multiturn') : document ? 'corpus' : 'multiturn';
      // SPADE's memory appendix over the seeds drawn (orchestrator.py:1204-1228, env_memory.py:125-151), read from the checkout too.
      const line = (r: SeedDraw['positives'][number]) => ({ name: r.name, skill: r.skill, winRate: r.winRate, regret: r.regret, snippet: r.snippet.slice(0, SNIPPET_CHARS) });
      const seeds = { positives: a.seeds.positives.map(line), negatives: a.seeds.negatives.map(line) };
      const { body, builder } = await spadePromptBody(src, { kind, skill: a.skill, difficulty: a.difficulty, maxTurns: a.maxTurns, document: document?.text ?? '', seed: a.seed, seeds }, opts);
      // SPADE's _apply_game_template (orchestrator.py:246-282) sends MULTITURN_GAME_GENERATION_SYSTEM_PROMPT
      // for qwen3_multiturn_game_generation (cmd/games/train_spade_8b.sh:109) and has no branch for
      // qwen3_tool_use_game_generation (corpus_orchestrator.py:99): a tool-use prompt goes as the user message alone.
      return { system: toolUse ? null : texts.systemPrompt, body, document, builder: `spade:${builder}`, withSeeds: true };
    },
  };
}
