#!/usr/bin/env bash
# Starts the real servers the jobs integration tests talk to, all on 127.0.0.1, installing nothing
# (the packages come from .ci/run): OpenSSH's sshd on a loopback port with a throwaway key pair
# and known_hosts, and a one-node Slurm cluster (munged, slurmctld, slurmd) with proctrack
# linuxproc, task none, no cgroup and no accounting. Everything it writes lives under
# $SPADE_CI_DIR (default /tmp/spade-ci) except /etc/slurm/slurm.conf, where the Slurm commands
# look when a job is submitted over SSH (no environment is carried into the remote shell).
# Tests read $SPADE_CI_DIR/env to find the port, user, key and known_hosts.
#   .ci/services.sh start | stop | status
set -euo pipefail

DIR="${SPADE_CI_DIR:-/tmp/spade-ci}"
SSH_PORT="${SPADE_CI_SSH_PORT:-2222}"
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
USER_NAME="$(id -un)"
AGENT_PASSPHRASE="spade-ci-agent-only"

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

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
  for f in "$DIR/slurm/slurmd.pid" "$DIR/slurm/slurmctld.pid" "$DIR/ssh/sshd.pid"; do
    if pid_alive "$f"; then $SUDO kill "$(cat "$f")" || true; fi
  done
  rm -f "$DIR/env"
}

case "${1:-start}" in
  start)
    mkdir -p "$DIR"
    start_sshd
    start_slurm
    write_env
    ;;
  stop) stop_all ;;
  status)
    pid_alive "$DIR/ssh/sshd.pid" && echo "sshd: up" || echo "sshd: down"
    sinfo 2>/dev/null || echo "slurm: down"
    ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
