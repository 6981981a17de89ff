/**
 * The designer's prompt, built the way SPADE builds one (docs/spade-formats.md sections 2 and 8):
 * a template with the skill and its description, the difficulty, the environment contract and the
 * output instruction, then the memory appendix (seeds) after the template's own text. The template
 * is ours (resources/design/designer.txt) unless the user names a file; either is filled the same
 * way: `{{name}}` placeholders, and a placeholder we do not know is an error, not a silent gap.
 */
import { formatSeeds, type SeedDraw } from './seeds';

export const DIFFICULTIES = ['easy', 'medium', 'hard'] as const;
export type Difficulty = (typeof DIFFICULTIES)[number];

/** One line per skill, in our words; the designer sees it beside the skill's name. */
export const SKILL_DESCRIPTIONS: Record<string, string> = {
  'Pattern Recognition': 'finding the rule behind sequences, grids or symbols and using it',
  'Logical Deduction': 'drawing certain conclusions from clues and constraints',
  'Strategic Planning': 'choosing a sequence of moves toward a goal while the state changes',
  'Mathematical Reasoning': 'computing, estimating and proving with numbers and structures',
  'Spatial Reasoning': 'tracking positions, shapes, directions and movement',
  'Causal Inference': 'working out what causes what from interventions and observations',
  'Memory Recall': 'keeping track of information revealed earlier in the episode',
  Optimization: 'finding the best choice under limits and trade-offs',
  'Language Understanding': 'reading, interpreting and transforming text precisely',
  'API Orchestration': 'calling several tools in the right order, passing results along',
  'Data Retrieval': 'finding the right records through search and lookup tools',
  'State Modification': 'changing a system through tools so that it reaches a required state',
  'Error Recovery': 'noticing failed tool calls and recovering from them',
  'Tool Selection': 'choosing the right tool among similar ones',
  'Multi-Step Workflows': 'following a multi-step instruction through to the end with tools',
};

/** SPADE's corpus prompt asks for "N+ interaction steps": 2 for easy, 3 otherwise; ours adds 5 for hard. */
export function minSteps(d: Difficulty): number {
  return d === 'easy' ? 2 : d === 'medium' ? 3 : 5;
}

export interface PromptInput {
  template: string;
  skill: string;
  difficulty: Difficulty;
  maxTurns: number;
  seeds: SeedDraw;
  /** A grounding document excerpt (SPADE's corpus path); empty when none. */
  document?: string;
  /**
   * The researcher's own words for this round ("make it harder"), a workbench extra SPADE has no
   * slot for: it goes last, after the seeds, so the SPADE-shaped part of the prompt is unchanged.
   */
  instruction?: string;
}

export const PLACEHOLDERS = ['skill', 'skill_description', 'difficulty', 'min_steps', 'max_turns', 'document'] as const;

/** Fills `{{name}}` placeholders; throws naming any it does not know. */
export function fillTemplate(template: string, values: Record<(typeof PLACEHOLDERS)[number], string>): string {
  const unknown = new Set<string>();
  const out = template.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (m, name: string) => {
    if (Object.hasOwn(values, name)) return values[name as keyof typeof values];
    unknown.add(name);
    return m;
  });
  if (unknown.size) throw new Error(`The template uses ${[...unknown].map((n) => `{{${n}}}`).join(', ')}, which the workbench does not fill (it fills ${PLACEHOLDERS.map((p) => `{{${p}}}`).join(', ')})`);
  return out;
}

/** The exact user message the designer gets: the filled template, then the memory appendix as SPADE appends it. */
export function designerPrompt(p: PromptInput): string {
  const body = fillTemplate(p.template, {
    skill: p.skill,
    skill_description: SKILL_DESCRIPTIONS[p.skill] ?? '',
    difficulty: p.difficulty,
    min_steps: String(minSteps(p.difficulty)),
    max_turns: String(p.maxTurns),
    document: p.document ?? '',
  }).trimEnd();
  return withAppendix(body, p.seeds, p.instruction);
}

/** A prompt body with the memory appendix as SPADE appends it, then the researcher's words (a workbench extra, last). */
export function withAppendix(body: string, draw: SeedDraw, instruction?: string): string {
  const seeds = formatSeeds(draw);
  const withSeeds = seeds ? `${body}\n\n${seeds}` : body;
  const words = instruction?.trim();
  return words ? `${withSeeds.trimEnd()}\n\nInstruction from the researcher: ${words}` : withSeeds;
}

/**
 * The program in a designer's answer, exactly as SPADE takes it: the body of the first ```python
 * fenced block, else the whole answer unchanged (no <think> removal, no other fence: an answer
 * SPADE would fail to load fails here too, and the attempt says why).
 */
export function extractProgram(answer: string): { code: string; from: 'python-fence' | 'whole-answer' } {
  const py = /```python\n([\s\S]*?)\n```/.exec(answer);
  return py ? { code: py[1]!, from: 'python-fence' } : { code: answer, from: 'whole-answer' };
}

export type GameClass = 'too-easy' | 'frontier' | 'unsolvable';

/**
 * Where a played game lands for the agent, by its unhinted win rate p (share of episodes with return
 * above 0, as SPADE's memory counts it): above 0.85 too easy, 0.15 to 0.85 the frontier (SPADE's
 * memory band), below 0.15 unsolvable for this agent. `difficultyScore` is 1 - |p - 0.5| / 0.5, as
 * SPADE's fixed-model evaluation computes it (1 at p = 0.5, 0 at p = 0 or 1).
 */
export function classifyGame(winRate: number): { cls: GameClass; difficultyScore: number } {
  const cls: GameClass = winRate > 0.85 ? 'too-easy' : winRate >= 0.15 ? 'frontier' : 'unsolvable';
  return { cls, difficultyScore: 1 - Math.abs(winRate - 0.5) / 0.5 };
}
