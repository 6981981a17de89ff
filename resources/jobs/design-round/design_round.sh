#!/bin/sh
# A SPADE design round run as a job: the pool shipped beside this script becomes the round's memory
# (a library of its own under the job's folder), then `spade-workbench design` writes the round in
# SPADE's layout under run/, which the workbench that launched the job follows and imports back,
# each game naming its parents by hash in <stem>.json.
#
#   sh design_round.sh JOB_DIR [more `design` options ...]
#
# The round is set by the job's variables (the launch dialog's fields):
#   DESIGN_SKILLS     skills, comma separated (required)
#   DESIGN_COUNT      games (default 2)            DESIGN_ATTEMPTS   attempts per game (default 3)
#   DESIGN_DIFFICULTY easy|medium|hard             DESIGN_PLAY_SEEDS seeds each game is played on
#   DESIGNER_URL      the served designer (an OpenAI-compatible URL), or local (the embedded model)
#   DESIGNER_MODEL    its model name               AGENT_URL / AGENT_MODEL  the agent that plays
#   SPADE_DESIGNER_API_KEY / SPADE_AGENT_API_KEY   keys, given as secret variables
#   SPADE_WORKBENCH_CLI  the workbench on this machine: a command on PATH, or the path of its
#                        launcher script (run with SPADE_WORKBENCH_NODE, default node)
set -u
job=$1
shift
: "${DESIGN_SKILLS:?DESIGN_SKILLS names the skills to design for}"
cli=${SPADE_WORKBENCH_CLI:-spade-workbench}

workbench() {
  case $cli in
    *.js|*.mjs) "${SPADE_WORKBENCH_NODE:-node}" "$cli" "$@" ;;
    *) "$cli" "$@" ;;
  esac
}

if [ -d "$job/pool" ]; then
  echo "design-round: importing the seed pool into the round's memory"
  workbench import "$job/pool" --data-dir "$job/data" --quiet || exit $?
fi

opt() {
  # an option only when its variable is set and not empty
  if [ -n "$2" ]; then extra="$extra$(printf ' %s %s' "$1" "$(quote "$2")")"; fi
}
quote() { printf "'%s'" "$(printf %s "$1" | sed "s/'/'\\\\''/g")"; }
extra=''
opt --count "${DESIGN_COUNT:-2}"
opt --attempts "${DESIGN_ATTEMPTS:-3}"
opt --difficulty "${DESIGN_DIFFICULTY:-}"
opt --play-seeds "${DESIGN_PLAY_SEEDS:-}"
opt --designer "${DESIGNER_URL:-local}"
opt --designer-model "${DESIGNER_MODEL:-}"
opt --agent "${AGENT_URL:-local}"
opt --agent-model "${AGENT_MODEL:-}"

echo "design-round: skills $DESIGN_SKILLS, designer ${DESIGNER_URL:-local}, agent ${AGENT_URL:-local}"
eval "set -- --skills \"\$DESIGN_SKILLS\" $extra --data-dir \"\$job/data\" --out \"\$job/run\" \"\$@\""
case $cli in
  *.js|*.mjs) exec "${SPADE_WORKBENCH_NODE:-node}" "$cli" design "$@" ;;
  *) exec "$cli" design "$@" ;;
esac
