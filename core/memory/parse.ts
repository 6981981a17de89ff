/**
 * Reading what SPADE writes: class names, kinds, skills and rollout steps from sources and file
 * names (see SPADE-FORMATS.md sections 2, 4 and 6). Pure functions, no I/O.
 */
import { createHash } from 'node:crypto';

import { COGNITIVE_SKILLS, TOOL_USE_SKILLS } from '../api/skills';

export { COGNITIVE_SKILLS, TOOL_USE_SKILLS };

export function skillSlug(skill: string): string {
  return skill
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

const slugToSkill = new Map<string, string>([...COGNITIVE_SKILLS, ...TOOL_USE_SKILLS].map((s) => [skillSlug(s), s]));
/** Longest first, so `multi_step_workflows` wins over a shorter slug that prefixes it. */
const knownSlugs = [...slugToSkill.keys()].sort((a, b) => b.length - a.length);

/** A known skill's display name for a slug; an unknown slug is title-cased rather than dropped. */
export function skillFromSlug(slug: string): string {
  const known = slugToSkill.get(slug.toLowerCase());
  if (known) return known;
  return slug
    .split(/[_\s-]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join(' ');
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
    if (name.endsWith('Env') && name !== 'Env' && name !== 'ToolUseBaseEnv') return name;
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
  skill: string | null;
  stage: string | null;
}

/**
 * `reject_{rollout:05d}_{idx:03d}_{slug}_{stage}` or `rej_r{r}_g{i}_a{a}_{skill}`. The slug and
 * the stage both may hold underscores, so a known skill slug is matched first and the rest is the stage.
 */
export function parseRejectedStem(stem: string): RejectedFileName | null {
  let m = /^reject_(\d+)_(\d+)_(.+)$/.exec(stem);
  if (m) {
    const rest = m[3]!;
    for (const slug of knownSlugs) {
      if (rest.startsWith(`${slug}_`)) return { rollout: Number(m[1]), skill: slugToSkill.get(slug)!, stage: rest.slice(slug.length + 1) };
      if (rest === slug) return { rollout: Number(m[1]), skill: slugToSkill.get(slug)!, stage: null };
    }
    const cut = rest.lastIndexOf('_');
    return cut < 0
      ? { rollout: Number(m[1]), skill: null, stage: rest }
      : { rollout: Number(m[1]), skill: skillFromSlug(rest.slice(0, cut)), stage: rest.slice(cut + 1) };
  }
  m = /^rej_r(\d+)_g\d+_a\d+_(.+)$/.exec(stem);
  if (m) return { rollout: Number(m[1]), skill: skillFromSlug(m[2]!), stage: null };
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
