#!/usr/bin/env bash
# STAND-IN for SPADE's cmd/games/train_spade_8b.sh, used only by the jobs tests. It has the real
# script's shape where the workbench depends on it: the same required variables, OUTPUT_DIR and
# GAMES_DIR, `set -x`, `RAY_JOB_ID=spade_games_8b_$$`, the trainer submitted with
# `ray job submit --no-wait` and followed with `ray job logs --follow` (which exits 0 whatever the
# job did). The trainer is a small Python script printing Slime-style `rollout <id>: {...}` lines,
# not SPADE's training. Unlike SPADE's script it kills no process by name and installs nothing.
# STANDIN_START_HEAD=1 starts a Ray head first, as SPADE's does (dashboard on STANDIN_DASHBOARD_PORT).

set -ex

export PYTHONUNBUFFERED=1
SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &>/dev/null && pwd)"
PROJECT_ROOT="$(cd "${SCRIPT_DIR}/../.." && pwd)"

OUTPUT_DIR="${OUTPUT_DIR:-/tmp/spade_games_8b/$(date +%Y%m%d_%H%M%S)}"
GAMES_DIR="${GAMES_DIR:-${OUTPUT_DIR}/spade_games}"
if [ -z "${WANDB_ENTITY:-}" ]; then
   echo "ERROR: Set WANDB_ENTITY to your Weights & Biases team/entity." >&2
   exit 1
fi
if [ "${CORPUS_FILE+x}" != x ]; then
   echo "ERROR: Set CORPUS_FILE to the paper games corpus JSONL." >&2
   exit 1
fi
: "${WANDB_API_KEY:?Set WANDB_API_KEY.}"
mkdir -p "${OUTPUT_DIR}" "${GAMES_DIR}"

PORT="${STANDIN_DASHBOARD_PORT:-8265}"
if [ "${STANDIN_START_HEAD:-0}" = "1" ]; then
   ray start --head --port="${STANDIN_GCS_PORT:-6391}" --num-cpus 1 --num-gpus 0 --disable-usage-stats \
      --dashboard-host=127.0.0.1 --dashboard-port="${PORT}" --object-store-memory=100000000 --temp-dir="${STANDIN_RAY_TMP:-/tmp/spade-standin-ray}" \
      --dashboard-agent-listen-port="${STANDIN_AGENT_PORT:-52365}"
fi

RUNTIME_ENV_JSON="{
  \"env_vars\": {
    \"STANDIN_FAIL\": \"${STANDIN_FAIL:-0}\",
    \"STANDIN_HOLD\": \"${STANDIN_HOLD:-0}\"
  }
}"

RAY_JOB_ID="spade_games_8b_$$"

ray job submit --address="http://127.0.0.1:${PORT}" \
   --submission-id="${RAY_JOB_ID}" \
   --runtime-env-json="${RUNTIME_ENV_JSON}" \
   --no-wait \
   -- python3 "${PROJECT_ROOT}/train_spade_slime_standin.py" \
   --num-rollout "${NUM_ROLLOUT:-3}" \
   --spade-games-dir "${GAMES_DIR}"

ray job logs --address="http://127.0.0.1:${PORT}" --follow "${RAY_JOB_ID}"
