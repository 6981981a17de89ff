/**
 * Reading what SPADE writes: class names, kinds, skills and rollout steps from sources and file
 * names (see docs/spade-formats.md sections 2, 4 and 6). Pure functions, no I/O.
 */
import { createHash } from 'node:crypto';

import { COGNITIVE_SKILLS, TOOL_USE_SKILLS } from '../api/skills';
import { ENV_CLASS_EXCLUDED, ENV_CLASS_SUFFIX } from '../api/spadeRules';

export { COGNITIVE_SKILLS, TOOL_USE_SKILLS };

/** SPADE's own slug, `skill.lower().replace(" ", "_")`: it keeps `-` (`multi-step_workflows`). */
export function skillSlug(skill: string): string {
  return skill.toLowerCase().replace(/ /g, '_');
}

/** Loose key for matching a slug or a display name written any way (`Multi-Step_Workflows`, `multi_step_workflows`). */
function looseKey(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

const ALL_KNOWN = [...COGNITIVE_SKILLS, ...TOOL_USE_SKILLS] as readonly string[];
const looseToSkill = new Map<string, string>(ALL_KNOWN.map((s) => [looseKey(s), s]));
/**
 * Every spelling of a known skill as it can appear in a file name: SPADE's slug, the loose slug and
 * the case-kept `Skill_Name` of `rej_` files. Longest first, so a longer slug wins over a shorter one
 * that prefixes it.
 */
const knownSpellings: [string, string][] = ALL_KNOWN.flatMap((s): [string, string][] => [
  [skillSlug(s), s],
  [looseKey(s), s],
  [s.replace(/ /g, '_'), s],
]).sort((a, b) => b[0].length - a[0].length);

/** Rejection stages SPADE writes into `reject_` names (section 6); matched as a suffix first. */
export const KNOWN_REJECT_STAGES = ['criteria_throw_at_reset', 'env_validator'] as const;

/** A known skill's display name for a slug; an unknown slug is title-cased rather than dropped. */
export function skillFromSlug(slug: string): string {
  const known = looseToSkill.get(looseKey(slug));
  if (known) return known;
  return slug
    .split(/[_\s-]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join(' ');
}

/** The known skill a file-name part starts with (matched against the skill list, never split on `_`), and what follows it. */
function leadingSkill(rest: string): { skill: string; after: string | null } | null {
  for (const [spelling, skill] of knownSpellings) {
    if (rest === spelling) return { skill, after: null };
    if (rest.startsWith(`${spelling}_`)) return { skill, after: rest.slice(spelling.length + 1) };
  }
  return null;
}

export function normaliseSkill(raw: unknown): string | null {
  if (typeof raw !== 'string' || !raw.trim()) return null;
  return skillFromSlug(skillSlug(raw));
}

export function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * SPADE's loader takes the first name ending in `Env` (not `Env` or `ToolUseBaseEnv`); for a
 * source file, top-level `class` statements in order are what ends up first in the namespace.
 */
export function findClassName(source: string): string | null {
  const re = /^class\s+([A-Za-z_][A-Za-z0-9_]*)\s*[(:]/gm;
  for (const m of source.matchAll(re)) {
    const name = m[1]!;
    if (name.endsWith(ENV_CLASS_SUFFIX) && !(ENV_CLASS_EXCLUDED as readonly string[]).includes(name)) return name;
  }
  return null;
}

export function detectKind(source: string): 'game' | 'tool-use' {
  return /^class\s+\w+\s*\(\s*ToolUseBaseEnv\s*\)/m.test(source) ? 'tool-use' : 'game';
}

/** `MazeNavigatorEnv` -> `MazeNavigatorEnv Maze Navigator Env`, so a search for "navigator" finds it. */
export function searchableName(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/_/g, ' ');
  return words === name ? name : `${name} ${words}`;
}

export interface GameFileName {
  rollout: number;
  index: number;
  skill: string | null;
}

/** `game_{rollout:05d}_{index:03d}_{skill_slug}` (the stem, without `.py`). */
export function parseGameStem(stem: string): GameFileName | null {
  const m = /^game_(\d+)_(\d+)(?:_(.+))?$/.exec(stem);
  if (!m) return null;
  return { rollout: Number(m[1]), index: Number(m[2]), skill: m[3] ? skillFromSlug(m[3]) : null };
}

export interface RejectedFileName {
  rollout: number | null;
  /** The game's index in its rollout (`{idx:03d}` / `g{i}`). */
  index: number | null;
  skill: string | null;
  stage: string | null;
  /** Generation attempt, from `rej_..._a{a}_` names (SPADE's persist-rejected). */
  attempt: number | null;
}

/**
 * `reject_{rollout:05d}_{idx:03d}_{slug}_{stage}` or `rej_r{r}_g{i}_a{a}_{Skill_Name}`. The slug
 * (`multi-step_workflows`) and the stage (`env_validator`) both may hold underscores, so neither is
 * split on `_`: the known skills are matched as a prefix, then the known stages as a suffix.
 */
export function parseRejectedStem(stem: string): RejectedFileName | null {
  let m = /^reject_(\d+)_(\d+)_(.+)$/.exec(stem);
  if (m) {
    const base = { rollout: Number(m[1]), index: Number(m[2]), attempt: null };
    const rest = m[3]!;
    const lead = leadingSkill(rest);
    if (lead) return { ...base, skill: lead.skill, stage: lead.after };
    for (const stage of KNOWN_REJECT_STAGES) {
      if (rest.endsWith(`_${stage}`)) return { ...base, skill: skillFromSlug(rest.slice(0, -stage.length - 1)), stage };
    }
    const cut = rest.lastIndexOf('_');
    return cut < 0 ? { ...base, skill: null, stage: rest } : { ...base, skill: skillFromSlug(rest.slice(0, cut)), stage: rest.slice(cut + 1) };
  }
  m = /^rej_r(\d+)_g(\d+)_a(\d+)_(.+)$/.exec(stem);
  if (m) return { rollout: Number(m[1]), index: Number(m[2]), attempt: Number(m[3]), skill: skillFromSlug(m[4]!), stage: null };
  return null;
}

export interface RejectedHeader {
  attempt: number | null;
  /** SPADE's validation error (persist-rejected), verbatim, possibly several lines. */
  error: string | null;
  /** The stage from the docstring `save_rejected_game` writes. */
  stage: string | null;
}

/**
 * What SPADE writes at the top of a rejected game: `# REJECTED (attempt N): <error>`, a blank line,
 * then the code (the error may span lines, so it runs to the first blank line); or the docstring
 * `"""SPADE self-play REJECTED game (stage=<stage>)"""`.
 */
export function parseRejectedHeader(source: string): RejectedHeader | null {
  const text = (source.charCodeAt(0) === 0xfeff ? source.slice(1) : source).replace(/\r\n/g, '\n');
  const m = /^# REJECTED \(attempt (\d+)\): ?/.exec(text);
  if (m) {
    const body = text.slice(m[0].length);
    const end = body.indexOf('\n\n');
    return { attempt: Number(m[1]), error: end < 0 ? body.replace(/\n$/, '') : body.slice(0, end), stage: null };
  }
  const d = /^"""SPADE self-play REJECTED game \(stage=([^)\n]*)\)"""/.exec(text);
  if (d) return { attempt: null, error: null, stage: d[1]! };
  return null;
}

/** `.../spade_games_cache/step_00042/...` -> 42 (the deepest `step_N` folder wins). */
export function rolloutFromPath(path: string): number | null {
  const parts = path.split(/[\\/]/);
  for (let i = parts.length - 1; i >= 0; i--) {
    const m = /^step_(\d+)$/.exec(parts[i]!);
    if (m) return Number(m[1]);
  }
  return null;
}

/** Strict UTF-8: a file with invalid bytes is reported, never stored with replacement characters. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
export type TextCheck = { ok: true; text: string } | { ok: false; reason: string };

export function decodeSource(buf: Buffer, maxBytes: number): TextCheck {
  if (buf.length === 0) return { ok: false, reason: 'empty file' };
  if (buf.length > maxBytes) return { ok: false, reason: `too large (${buf.length} bytes; the limit is ${maxBytes})` };
  if (buf.includes(0)) return { ok: false, reason: 'binary content (NUL bytes)' };
  let text: string;
  try {
    text = strictUtf8.decode(buf);
  } catch {
    return { ok: false, reason: 'not valid UTF-8' };
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (!text.trim()) return { ok: false, reason: 'empty file (only whitespace)' };
  return { ok: true, text };
}

/**
 * The field our export adds to a tool-use manifest entry it made up (the environment came with no
 * release entry of its own), so that the importer does not keep that entry as the environment's.
 */
export const MANIFEST_FROM = 'manifest_from';
