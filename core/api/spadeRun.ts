/**
 * The folders a SPADE run writes under its OUTPUT_DIR (docs/spade-formats.md section 7: games, the
 * cache with its steps and env_memory.json, rejected games beside the games, Tinker's metrics.jsonl),
 * as an attached job names them: the app's Attach dialog and `jobs attach --output-dir` alike. Pure.
 */
export function spadeRunOutputs(outputDir: string): { gamesDir: string; cacheDir: string; rejectedDir: string; metricsFile: string } {
  const out = outputDir.trim().replace(/\/+$/, '');
  return { gamesDir: `${out}/spade_games`, cacheDir: `${out}/spade_games_cache`, rejectedDir: `${out}/spade_games_rejected`, metricsFile: `${out}/metrics.jsonl` };
}
