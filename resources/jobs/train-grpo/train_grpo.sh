#!/bin/sh
# The local GRPO recipe as a job (Jobs → "Train locally (GRPO)"): `spade-workbench train` over the
# app's own library, set by the job's variables (the launch dialog's fields):
#   TRAIN_SELECTION   the environments, a library query (required; e.g. tag:seed for the seed pack, tag:NAME, skill:NAME)
#   TRAIN_STEPS  TRAIN_GROUP_SIZE  TRAIN_PROMPTS_PER_STEP  TRAIN_LORA_RANK  TRAIN_LR  TRAIN_MAX_TURNS
#   TRAIN_HINT_SHARE  TRAIN_MAX_NEW_TOKENS  TRAIN_MODEL  TRAIN_SEEDS  TRAIN_EVAL_SEEDS  TRAIN_BOXED_REWARD  TRAIN_RUNTIME
#   TRAIN_SAVE_EVERY  an adapter checkpoint-N every N steps, each one evaluable
#   TRAIN_EVALUATE    an adapter folder to evaluate instead of training (the job view's Evaluate sets it)
#   SPADE_DATA_DIR    the library (the app's, filled in at launch)
# TRL's per-step dicts are printed as JSON lines, which the job follower charts.
set -u
job=$1
cli=${SPADE_WORKBENCH_CLI:-spade-workbench}
: "${TRAIN_SELECTION:?TRAIN_SELECTION names the environments to train on (a library query)}"
set -- train --selection "$TRAIN_SELECTION" --out "$job/run"
add() { if [ -n "$2" ]; then args="$args
$1
$2"; fi; }
args=''
add --steps "${TRAIN_STEPS:-}"
add --group-size "${TRAIN_GROUP_SIZE:-}"
add --prompts-per-step "${TRAIN_PROMPTS_PER_STEP:-}"
add --lora-rank "${TRAIN_LORA_RANK:-}"
add --lr "${TRAIN_LR:-}"
add --max-turns "${TRAIN_MAX_TURNS:-}"
add --hint-share "${TRAIN_HINT_SHARE:-}"
add --max-new-tokens "${TRAIN_MAX_NEW_TOKENS:-}"
add --model "${TRAIN_MODEL:-}"
add --train-seeds "${TRAIN_SEEDS:-}"
add --eval-seeds "${TRAIN_EVAL_SEEDS:-}"
add --boxed-reward "${TRAIN_BOXED_REWARD:-}"
add --runtime "${TRAIN_RUNTIME:-}"
add --save-every "${TRAIN_SAVE_EVERY:-}"
add --evaluate "${TRAIN_EVALUATE:-}"
# One argument per line (values never split on spaces).
old_ifs=$IFS
IFS='
'
# shellcheck disable=SC2086
set -- "$@" $args
IFS=$old_ifs
case $cli in
  *.js|*.mjs) exec "${SPADE_WORKBENCH_NODE:-node}" "$cli" "$@" ;;
  *) exec "$cli" "$@" ;;
esac
