import { AGENT_PROMPT } from '../api/spadeRules';

/** SPADE's with-hint play changes only the first observation the agent sees (docs/spade-formats.md section 3). */
export function injectHint(observation: string, hint: string): string {
  return `${observation}${AGENT_PROMPT.hintSeparator}${hint}`;
}

/** Splits a hinted first observation back into the environment's part and the hint. */
export function splitHint(observation: string): { observation: string; hint: string | null } {
  const i = observation.lastIndexOf('\n\nHINT: ');
  if (i < 0) return { observation, hint: null };
  return { observation: observation.slice(0, i), hint: observation.slice(i + '\n\nHINT: '.length) };
}

/** SPADE's first agent message; later turns send the raw observation. */
export const FIRST_PROMPT_PREFIX = AGENT_PROMPT.firstPrefix;
export const FIRST_PROMPT_SUFFIX = AGENT_PROMPT.firstSuffix;

export function firstPrompt(observation: string): string {
  return `${FIRST_PROMPT_PREFIX}${observation}${FIRST_PROMPT_SUFFIX}`;
}

/** The observation inside a first user message, whether or not it used SPADE's template. */
export function observationFromFirstPrompt(content: string): string {
  let s = content;
  if (s.startsWith(FIRST_PROMPT_PREFIX)) s = s.slice(FIRST_PROMPT_PREFIX.length);
  else {
    const i = s.indexOf('\nObservation: ');
    if (s.startsWith('You are playing') && i >= 0) s = s.slice(i + '\nObservation: '.length);
  }
  if (s.endsWith(FIRST_PROMPT_SUFFIX)) s = s.slice(0, -FIRST_PROMPT_SUFFIX.length);
  return s;
}
