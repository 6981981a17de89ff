#!/usr/bin/env bash
# Starts the real servers the jobs integration tests talk to, all on 127.0.0.1: OpenSSH's sshd on
# a loopback port with a throwaway key pair and known_hosts, a one-node Slurm cluster (munged,
# slurmctld, slurmd) with proctrack linuxproc, task none, no cgroup and no accounting (their
# packages come from .ci/run), and a real Ray head (ray[default] pinned, installed from PyPI into a
# venv under $SPADE_CI_DIR, never into the system Python). Everything it writes lives under
# $SPADE_CI_DIR (default /tmp/spade-ci) except /etc/slurm/slurm.conf, where the Slurm commands
# look when a job is submitted over SSH (no environment is carried into the remote shell).
# Tests read $SPADE_CI_DIR/env (sshd, Slurm) and $SPADE_CI_DIR/ray.env (the Ray head).
#   .ci/services.sh start | stop | status | start-ray | stop-ray | check-loopback
set -euo pipefail

DIR="${SPADE_CI_DIR:-/tmp/spade-ci}"
SSH_PORT="${SPADE_CI_SSH_PORT:-2222}"
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
USER_NAME="$(id -un)"
AGENT_PASSPHRASE="spade-ci-agent-only"

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

RAY_VERSION="${SPADE_CI_RAY_VERSION:-2.60.0}"
RAY_VENV="$DIR/ray-venv"
# Ray puts unix sockets under its temp dir, whose paths must stay short (108 bytes).
RAY_TMP="${SPADE_CI_RAY_TMP:-$DIR/ray}"
RAY_GCS_PORT="${SPADE_CI_RAY_GCS_PORT:-6390}"
RAY_DASHBOARD_PORT="${SPADE_CI_RAY_DASHBOARD_PORT:-8265}"
RAY_URL="http://127.0.0.1:$RAY_DASHBOARD_PORT"

# Our Ray processes, and only ours: the session `ray start` ran in (some agents rename themselves,
# so their command lines no longer name anything), and any process whose command line names our temp dir.
ray_pids() {
  { if [ -s "$DIR/ray.sid" ]; then pgrep -s "$(cat "$DIR/ray.sid")" 2>/dev/null || true; fi
    pgrep -f -- "$RAY_TMP/" 2>/dev/null || true; } | grep -vx "$$" | sort -u
}

ray_http() { "$RAY_VENV/bin/python" - "$@" <<'PY'
import json, sys, time, urllib.request
url, what = sys.argv[1], sys.argv[2]
def req(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    r = urllib.request.Request(url + path, data=data, method=method, headers={"content-type": "application/json"})
    with urllib.request.urlopen(r, timeout=10) as resp:
        return json.loads(resp.read() or b"null")
if what == "up":
    try:
        req("GET", "/api/version"); sys.exit(0)
    except Exception:
        sys.exit(1)
# Ready means a job can run: a fresh head answers "No available agent" for a while, and its
# first job supervisor may die while the head settles; a probe that fails is replaced by a new one.
deadline = time.time() + 240
n = 0
while time.time() < deadline:
    n += 1
    sid = "spade_ci_ready_%d_%d" % (int(time.time()), n)
    try:
        req("POST", "/api/jobs/", {"entrypoint": "true", "submission_id": sid})
    except Exception:
        time.sleep(1)
        try:
            req("GET", "/api/jobs/" + sid)
        except Exception:
            continue
    status = None
    while time.time() < deadline:
        try:
            status = req("GET", "/api/jobs/" + sid)["status"]
        except Exception:
            status = None
        if status in ("SUCCEEDED", "FAILED", "STOPPED"):
            break
        time.sleep(1)
    try:
        req("DELETE", "/api/jobs/" + sid)
    except Exception:
        pass
    if status == "SUCCEEDED":
        sys.exit(0)
    print("probe job %s ended %s; trying again" % (sid, status), file=sys.stderr)
print("the Ray head did not run a probe job in time", file=sys.stderr)
sys.exit(1)
PY
}

start_ray() {
  mkdir -p "$DIR"
  if [ ! -x "$RAY_VENV/bin/ray" ] || ! "$RAY_VENV/bin/python" -c "import ray, sys; sys.exit(ray.__version__ != '$RAY_VERSION')" 2>/dev/null; then
    python3 -m venv "$RAY_VENV"
    "$RAY_VENV/bin/pip" install -q --disable-pip-version-check "ray[default]==$RAY_VERSION"
  fi
  if ray_http "$RAY_URL" up; then
    echo "ray head already up at $RAY_URL"
  else
    mkdir -p "$RAY_TMP"
    # In a session of its own, so that stop finds every process of this head by its session id.
    # The head listens on loopback only, as every test service does. --node-ip-address alone is not
    # enough: Ray turns 127.0.0.1 into the machine's external address unless it is told this is not a
    # multi-node cluster (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0, read by ray._private.services); with
    # both, no Ray port is bound beyond 127.0.0.1 (checked with ss -ltn).
    RAY_ADDRESS="" RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 setsid "$RAY_VENV/bin/ray" start --head --node-ip-address=127.0.0.1 --port="$RAY_GCS_PORT" --dashboard-host=127.0.0.1 \
      --dashboard-port="$RAY_DASHBOARD_PORT" --num-cpus=2 --num-gpus=0 --object-store-memory=536870912 \
      --disable-usage-stats --temp-dir="$RAY_TMP" >"$DIR/ray-start.log" 2>&1 || { cat "$DIR/ray-start.log" >&2; return 1; }
    local one
    one="$(pgrep -f -- "$RAY_TMP/" | head -1)"
    if [ -n "$one" ]; then ps -o sid= -p "$one" | tr -d ' ' > "$DIR/ray.sid"; fi
  fi
  ray_http "$RAY_URL" ready
  cat > "$DIR/ray.env" <<ENV
SPADE_CI_RAY_ADDRESS=$RAY_URL
SPADE_CI_RAY_BIN=$RAY_VENV/bin
SPADE_CI_RAY_TMP=$RAY_TMP
ENV
  echo "ray $RAY_VERSION head on $RAY_URL (temp dir $RAY_TMP)"
}

stop_ray() {
  local pids
  pids="$(ray_pids)"
  if [ -n "$pids" ]; then
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    for _ in $(seq 1 20); do [ -z "$(ray_pids)" ] && break; sleep 0.5; done
    pids="$(ray_pids)"
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
  fi
  rm -f "$DIR/ray.env" "$DIR/ray.sid"
}

start_sshd() {
  mkdir -p "$DIR/ssh"
  chmod 700 "$DIR/ssh"
  [ -f "$DIR/ssh/host_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -f "$DIR/ssh/host_ed25519" -C spade-ci-host
  [ -f "$DIR/ssh/client_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -f "$DIR/ssh/client_ed25519" -C spade-ci-client
  # A passphrase-protected key only an ssh-agent can use (the agent-login test loads it into one).
  [ -f "$DIR/ssh/agent_ed25519" ] || ssh-keygen -q -t ed25519 -N "$AGENT_PASSPHRASE" -f "$DIR/ssh/agent_ed25519" -C spade-ci-agent
  cat "$DIR/ssh/client_ed25519.pub" "$DIR/ssh/agent_ed25519.pub" > "$DIR/ssh/authorized_keys"
  chmod 600 "$DIR/ssh/authorized_keys"
  # known_hosts in the [host]:port form OpenSSH uses for a non-default port.
  echo "[127.0.0.1]:$SSH_PORT $(cut -d' ' -f1,2 "$DIR/ssh/host_ed25519.pub")" > "$DIR/ssh/known_hosts"
  cat > "$DIR/ssh/sshd_config" <<CONF
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $DIR/ssh/host_ed25519
AuthorizedKeysFile $DIR/ssh/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
PidFile $DIR/ssh/sshd.pid
Subsystem sftp internal-sftp
MaxSessions 50
MaxStartups 50:30:100
LogLevel ERROR
CONF
  if pid_alive "$DIR/ssh/sshd.pid"; then echo "sshd already running"; return; fi
  $SUDO mkdir -p /run/sshd
  $SUDO /usr/sbin/sshd -f "$DIR/ssh/sshd_config" -E "$DIR/ssh/sshd.log"
  echo "sshd on 127.0.0.1:$SSH_PORT"
}

start_slurm() {
  local host cpus mem
  host="$(hostname -s)"
  cpus="$(nproc)"
  mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
  $SUDO mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge "$DIR/slurm"
  $SUDO tee /etc/slurm/slurm.conf >/dev/null <<CONF
# Written by .ci/services.sh for the jobs tests: one node, nothing but the basics.
ClusterName=spadeci
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldPidFile=$DIR/slurm/slurmctld.pid
SlurmdPidFile=$DIR/slurm/slurmd.pid
SlurmctldLogFile=$DIR/slurm/slurmctld.log
SlurmdLogFile=$DIR/slurm/slurmd.log
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPort=6817
SlurmdPort=6818
# Bind the daemons to the addresses named here (127.0.0.1), not to every interface.
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
MinJobAge=300
KillWait=5
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
  $SUDO chown -R munge:munge /run/munge 2>/dev/null || true
  if ! pgrep -x munged >/dev/null; then
    if [ ! -s /etc/munge/munge.key ]; then $SUDO mungekey --create 2>/dev/null || $SUDO /usr/sbin/create-munge-key -f; fi
    $SUDO -u munge /usr/sbin/munged 2>/dev/null || $SUDO /usr/sbin/munged --force
    # Only a munged started here is stopped by `stop`; one the machine runs anyway is left alone.
    for _ in $(seq 1 20); do [ -s /run/munge/munged.pid ] && break; sleep 0.1; done
    cp /run/munge/munged.pid "$DIR/slurm/munged.pid" 2>/dev/null || pgrep -xo munged > "$DIR/slurm/munged.pid" || true
  fi
  if ! pid_alive "$DIR/slurm/slurmctld.pid"; then $SUDO /usr/sbin/slurmctld; fi
  if ! pid_alive "$DIR/slurm/slurmd.pid"; then $SUDO /usr/sbin/slurmd; fi
  for _ in $(seq 1 60); do
    if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then echo "slurm ready ($host)"; return; fi
    sleep 1
  done
  echo "slurm did not become ready; see $DIR/slurm/*.log" >&2
  sinfo >&2 || true
  return 1
}

write_env() {
  cat > "$DIR/env" <<ENV
SPADE_CI_SSH_HOST=127.0.0.1
SPADE_CI_SSH_PORT=$SSH_PORT
SPADE_CI_SSH_USER=$USER_NAME
SPADE_CI_SSH_KEY=$DIR/ssh/client_ed25519
SPADE_CI_AGENT_KEY=$DIR/ssh/agent_ed25519
SPADE_CI_AGENT_PASSPHRASE=$AGENT_PASSPHRASE
SPADE_CI_KNOWN_HOSTS=$DIR/ssh/known_hosts
SPADE_CI_HOST_PUB=$DIR/ssh/host_ed25519.pub
SPADE_CI_SLURM=1
ENV
  echo "wrote $DIR/env"
}

stop_all() {
  stop_ray
  for f in "$DIR/slurm/slurmd.pid" "$DIR/slurm/slurmctld.pid" "$DIR/ssh/sshd.pid"; do
    if pid_alive "$f"; then $SUDO kill "$(cat "$f")" || true; fi
  done
  # munged last: slurmctld and slurmd talk to it while they shut down.
  for _ in $(seq 1 20); do pid_alive "$DIR/slurm/slurmctld.pid" || pid_alive "$DIR/slurm/slurmd.pid" || break; sleep 0.25; done
  if pid_alive "$DIR/slurm/munged.pid"; then $SUDO kill "$(cat "$DIR/slurm/munged.pid")" || true; fi
  rm -f "$DIR/env" "$DIR/slurm/munged.pid"
}

# Every port our services listen on is a loopback one: a test service reachable from the network
# would be a hole, so a start that left one fails here instead of passing quietly.
check_loopback() {
  local pids pid bad=""
  pids="$(ray_pids; for f in "$DIR/ssh/sshd.pid" "$DIR/slurm/slurmctld.pid" "$DIR/slurm/slurmd.pid"; do [ -s "$f" ] && cat "$f"; done)"
  for pid in $pids; do
    bad+="$(ss -ltnpH 2>/dev/null | grep -F "pid=$pid," | awk '{print $4}' | grep -vE '^(127\.[0-9.]+|\[::1\]|\[::ffff:127\.[0-9.]+\]):[0-9]+$' | sed "s/^/pid $pid listens on /" || true)"
  done
  if [ -n "$bad" ]; then
    echo "a test service listens beyond loopback:" >&2
    echo "$bad" >&2
    return 1
  fi
  echo "every service port is on loopback"
}

case "${1:-start}" in
  start)
    mkdir -p "$DIR"
    start_sshd
    start_slurm
    write_env
    start_ray
    check_loopback
    ;;
  stop) stop_all ;;
  start-ray) start_ray ;;
  stop-ray) stop_ray ;;
  status)
    pid_alive "$DIR/ssh/sshd.pid" && echo "sshd: up" || echo "sshd: down"
    sinfo 2>/dev/null || echo "slurm: down"
    if [ -x "$RAY_VENV/bin/python" ] && ray_http "$RAY_URL" up; then echo "ray: up at $RAY_URL"; else echo "ray: down"; fi
    ;;
  check-loopback) check_loopback ;;
  *) echo "usage: $0 start|stop|status|start-ray|stop-ray|check-loopback" >&2; exit 2 ;;
esac
