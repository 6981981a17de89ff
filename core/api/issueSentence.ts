import type { z } from 'zod';

/**
 * What a person reads when a request breaks a schema rule: a sentence naming the field in words
 * ("Search is limited to 500 characters."), never zod's own text ("Too big: expected string to
 * have <=500 characters"). Every transport gets it from the dispatcher; the raw issues stay in the
 * error's details for scripts.
 */

/** Field keys people meet in forms, in words; anything else is its key split at capitals. */
const LABELS: Record<string, string> = {
  query: 'Search',
  paths: 'Each path',
  outDir: 'The export folder',
  workdir: 'The working folder',
  gamesDir: 'The games folder',
  cacheDir: 'The cache folder',
  rejectedDir: 'The rejected games folder',
  metricsFile: 'The metrics file',
  stepTimeoutSec: 'The step time limit (seconds)',
  callTimeoutSec: 'The per-call time limit (seconds)',
  maxTurns: 'The turn limit',
  tags: 'Each tag',
  tag: 'A tag',
  host: 'The host',
  port: 'The port',
  user: 'The user name',
  name: 'The name',
  value: 'The value',
  hint: 'The hint',
  source: 'The source',
  message: 'The message',
  seeds: 'The number of seeds',
  seed: 'The seed',
  limit: 'The limit',
  baseUrl: 'The endpoint URL',
  model: 'The model',
  checks: 'The check list',
  checkId: 'The check id',
  hash: 'The version',
  id: 'The id',
  ids: 'The id list',
  envIds: 'The environment list',
  action: 'The action',
  actions: 'The action list',
};

function words(key: string): string {
  const spaced = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ').toLowerCase();
  return `The ${spaced}`;
}

/** The field an issue is about, in words: the last named key on its path. */
export function fieldLabel(path: readonly PropertyKey[]): string {
  const key = [...path].reverse().find((k): k is string => typeof k === 'string');
  if (!key) return 'The request';
  return LABELS[key] ?? words(key);
}

const TYPE_WORDS: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a set of fields',
  bigint: 'a whole number',
};

function plural(n: number | bigint, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${Number(n) === 1 ? one : many}`;
}

function sentence(s: string): string {
  const t = s.trim();
  const cap = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(cap) ? cap : `${cap}.`;
}

/** zod's own wording: such a message is replaced; a message a schema gave is kept. */
function isZodDefault(message: string): boolean {
  return /^(Invalid|Too (big|small)|Unrecognized key|Expected|Required)\b/.test(message);
}

export function issueSentence(issue: z.core.$ZodIssue): string {
  const label = fieldLabel(issue.path);
  switch (issue.code) {
    case 'too_big': {
      const max = issue.maximum;
      if (issue.origin === 'string') return `${label} is limited to ${plural(max, 'character')}.`;
      if (issue.origin === 'array' || issue.origin === 'set') return `${label} takes at most ${plural(max, 'item')}.`;
      return `${label} must be at most ${max.toLocaleString('en-US')}${issue.inclusive === false ? ' (exclusive)' : ''}.`;
    }
    case 'too_small': {
      const min = issue.minimum;
      if (issue.origin === 'string') return Number(min) <= 1 ? `${label} cannot be empty.` : `${label} needs at least ${plural(min, 'character')}.`;
      if (issue.origin === 'array' || issue.origin === 'set') return Number(min) <= 1 ? `${label}: give at least one.` : `${label} needs at least ${plural(min, 'item')}.`;
      return `${label} must be at least ${min.toLocaleString('en-US')}${issue.inclusive === false ? ' (exclusive)' : ''}.`;
    }
    case 'invalid_type': {
      if (issue.input === undefined) return `${label} is required.`;
      if (issue.expected === 'int') return `${label} must be a whole number.`;
      return `${label} must be ${TYPE_WORDS[issue.expected] ?? issue.expected}.`;
    }
    case 'unrecognized_keys':
      return `${issue.keys.length === 1 ? 'Unknown field' : 'Unknown fields'}: ${issue.keys.slice(0, 5).join(', ')}${issue.path.length ? ` (in ${fieldLabel(issue.path).toLowerCase()})` : ''}.`;
    case 'invalid_value':
      return `${label} must be ${issue.values.length === 1 ? JSON.stringify(issue.values[0]) : `one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`}.`;
    case 'not_multiple_of':
      return `${label} must be a multiple of ${String(issue.divisor)}.`;
    case 'invalid_union':
      return `${label} is not in a form this accepts.`;
    case 'invalid_format':
      if (!isZodDefault(issue.message)) return /[.!?]$/.test(issue.message.trim()) ? sentence(issue.message) : `${label} must be ${issue.message.trim()}.`;
      if (issue.format === 'url') return `${label} must be a URL.`;
      if (issue.format === 'regex') return `${label} contains characters it cannot have.`;
      return `${label} must be a valid ${issue.format}.`;
    default:
      // custom (refine) and the rest: the schema's own message, as a sentence.
      if (!isZodDefault(issue.message)) return /[.!?]$/.test(issue.message.trim()) ? sentence(issue.message) : `${label} must be ${issue.message.trim()}.`;
      return `${label} is not valid.`;
  }
}

/** The sentences of a failed parse, the first few joined: the message a person reads. */
export function issuesSentence(issues: readonly z.core.$ZodIssue[], most = 3): string {
  if (!issues.length) return 'The request was rejected.';
  const said = [...new Set(issues.map(issueSentence))];
  return said.slice(0, most).join(' ') + (said.length > most ? ` (and ${said.length - most} more)` : '');
}
