import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A STAND-IN for SPADE's cmd/games/train_spade_8b.sh, written into a scratch checkout by the tests (jobs/cliJobs, e2e jobArtefacts):
 * it needs the real script's variables, does with LOAD_DIR what the real one does (seeds the env
 * memory from dirname(LOAD_DIR)/spade_games_cache, cmd/games/train_spade_8b.sh:46-53), and lays out
 * a Megatron save folder as Slime's --save does (iter_NNNNNNN, latest_checkpointed_iteration.txt).
 * It trains nothing, kills nothing and installs nothing.
 */
const STAND_IN = `#!/usr/bin/env bash
# STAND-IN for SPADE's cmd/games/train_spade_8b.sh (tests/integration/jobs/standIn8b.ts): no training.
set -e
: "\${OUTPUT_DIR:?}" "\${WANDB_ENTITY:?}" "\${WANDB_API_KEY:?}"
mkdir -p "\${OUTPUT_DIR}/spade_games_cache"
if [ -n "\${LOAD_DIR:-}" ]; then
  echo "[stand-in] LOAD_DIR=\${LOAD_DIR} latest=$(cat "\${LOAD_DIR}/latest_checkpointed_iteration.txt")"
  OLD_MEM="$(dirname "\${LOAD_DIR}")/spade_games_cache/env_memory.json"
  if [ -f "\${OLD_MEM}" ]; then cp "\${OLD_MEM}" "\${OUTPUT_DIR}/spade_games_cache/env_memory.json"; echo "[MEMORY] Seeded env memory from \${OLD_MEM}"; fi
fi
SAVE="\${OUTPUT_DIR}/Qwen3-8B_games_blend_thinking"
for it in 15 31; do mkdir -p "\${SAVE}/$(printf 'iter_%07d' "$it")"; printf '%s' "$it" > "\${SAVE}/latest_checkpointed_iteration.txt"; done
[ -f "\${OUTPUT_DIR}/spade_games_cache/env_memory.json" ] || echo '[]' > "\${OUTPUT_DIR}/spade_games_cache/env_memory.json"
echo "[stand-in] saved"
if [ "\${STANDIN_SLEEP:-0}" != 0 ]; then echo "[stand-in] sleeping"; sleep "\${STANDIN_SLEEP}"; fi
echo "[stand-in] done"
`;

/** A scratch SPADE-shaped checkout at `checkout` whose cmd/games/train_spade_8b.sh is the stand-in above. */
export function writeStandIn8b(checkout: string): void {
  mkdirSync(join(checkout, 'cmd', 'games'), { recursive: true });
  writeFileSync(join(checkout, 'cmd', 'games', 'train_spade_8b.sh'), STAND_IN);
  chmodSync(join(checkout, 'cmd', 'games', 'train_spade_8b.sh'), 0o755);
}
