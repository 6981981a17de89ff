/**
 * What "SPADE layout" writes, shown on the export page. The README's export section names the same
 * files; a test exports a library and checks both lists against the files actually written.
 */
export const EXPORT_LAYOUT: { path: string; what: string }[] = [
  { path: 'games/', what: 'game_{rollout}_{index}_{skill}.py with {stem}_hint.txt beside each (the hint verbatim)' },
  { path: 'manifest.jsonl', what: "one line per game: name, skill, tags, seed, rating, notes, stats, and spade_blend (SPADE's designer reward of the measurement exported, with its model and run; null where regret was not measured)" },
  { path: 'env_memory.json', what: "SPADE's environment memory: a record per game with a measured win rate (SPADE needs numbers there)" },
  { path: 'spade_games_rejected/', what: 'rejected games with their .reason.txt, never in games/ (SPADE loads games/ whole)' },
  { path: 'tool_use/', what: 'tool-use environments and their manifest.json (the release layout)' },
  { path: 'checksums.sha256', what: 'every file, checked by sha256sum -c' },
];

export const EXPORT_ROUND_TRIP = 'Importing the folder again reports 0 new, 0 updated: the same versions, hints, stats, seeds and tags.';
