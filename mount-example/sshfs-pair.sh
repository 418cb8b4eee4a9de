#!/usr/bin/env bash
# sshfs-pair.sh: N sshfs mounts of one directory on this machine, each acting as a separate
# machine with its own FUSE cache. For trying mountcrawl on a real shared mount without a
# second machine, and for the test suite (test/support/sshfs-pair.ts).
#
#   sshfs-pair.sh start DIR [N]   private sshd on 127.0.0.1 (or SSHFS_PAIR_ADDRESS) + DIR/mnt1..mntN
#                                 mounting DIR/export; prints the mount points, one per line (all
#                                 else goes to stderr)
#   sshfs-pair.sh stop DIR        unmounts them and stops that sshd
#   sshfs-pair.sh check           exit 0 if sshd, sshfs, fusermount3 and /dev/fuse are usable,
#                                 else one line on what is missing and exit 3
#   sshfs-pair.sh mount DIR I PORT  one more mount, DIR/mntI, through 127.0.0.1:PORT (a relay in
#                                 front of the sshd of `start`, whose port is in DIR/port);
#                                 `start DIR 0` starts sshd alone. SSHFS_PAIR_MOUNT_OPTS adds
#                                 sshfs options (e.g. sshfs_debug, which logs every SFTP request
#                                 to DIR/sshfs-mntI.log)
#
# A mount counts as up once DIR/export/.sshfs-pair shows through it. Everything else lives
# under DIR too: keys, sshd_config, pid files, logs. The system's sshd and ssh
# configuration are never read or changed (only /run/sshd, sshd's privilege-separation
# directory, is created when missing). SSHFS_PAIR_PORT picks the port; otherwise a free one is
# found. SSHFS_PAIR_ADDRESS is the address sshd listens on, 127.0.0.1 by default: another
# loopback address, this machine's address on a network, or 0.0.0.0 / :: for all (then another
# machine can mount DIR/export with the key DIR/ssh/client_key); the mounts of `start` connect
# to it (to loopback for 0.0.0.0 and ::). Needs the Debian packages openssh-server, sshfs and
# fuse3.
set -euo pipefail

SSHD=/usr/sbin/sshd
# The options that gave correct cross-mount behaviour (see mount-example/README.md): no
# metadata caching (otherwise another mount sees changes ~21 s late and exclusive creates fail
# falsely), reconnect (otherwise a dropped link unmounts and the path becomes an empty local
# directory), keep-alives to notice a dead link within ~15 s.
MOUNT_OPTS=dir_cache=no,attr_timeout=0,entry_timeout=0,negative_timeout=0,reconnect,ServerAliveInterval=5,ServerAliveCountMax=3

SENTINEL=.sshfs-pair
ADDRESS=${SSHFS_PAIR_ADDRESS:-127.0.0.1}

log() { echo "sshfs-pair: $*" >&2; }
die() { log "$*"; exit 1; }

# True while PID is a running process (a zombie, state Z or X, counts as gone: PID 1 here may
# not reap orphans, so `kill -0` is not enough).
alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }            # the state follows the last ") " (the command name may hold spaces)
  [[ ${stat:0:1} != [ZX] ]]
}

# True when PATH is a mount point (read from the mount table, so a dead FUSE mount counts too).
mounted() {
  local p=${1// /\\040}
  P=$p awk '$2 == ENVIRON["P"] { found = 1 } END { exit !found }' /proc/self/mounts
}

# wait_for TENTHS COMMAND...: runs COMMAND every 0.1 s until it succeeds, at most TENTHS times.
wait_for() {
  local tries=$1; shift
  while ((tries-- > 0)); do "$@" && return 0; sleep 0.1; done
  return 1
}
not() { ! "$@"; }

check() {
  local missing=() pkgs=()
  [[ -x $SSHD ]] || { missing+=("$SSHD"); pkgs+=(openssh-server); }
  command -v ssh-keygen >/dev/null || { missing+=(ssh-keygen); pkgs+=(openssh-client); }
  command -v sshfs >/dev/null || { missing+=(sshfs); pkgs+=(sshfs); }
  command -v fusermount3 >/dev/null || { missing+=(fusermount3); pkgs+=(fuse3); }
  if [[ ! -c /dev/fuse ]] || ! { : <>/dev/fuse; } 2>/dev/null; then
    missing+=("usable /dev/fuse (absent or not permitted: a container needs --device /dev/fuse)")
  fi
  if [[ ! -d /run/sshd && $(id -u) != 0 ]]; then
    missing+=("/run/sshd (sshd's privilege-separation directory; only root can create it)")
  fi
  if ((${#missing[@]})); then
    local hint=""
    ((${#pkgs[@]})) && hint="; install the Debian packages: apt-get install ${pkgs[*]}"
    local list
    printf -v list '%s, ' "${missing[@]}"
    echo "sshfs-pair: missing: ${list%, }$hint"
    exit 3
  fi
}

# The address the mounts of `start` connect to: sshd's, or loopback when it listens on all.
connect_address() {
  case $ADDRESS in
    0.0.0.0) echo 127.0.0.1 ;;
    ::) echo ::1 ;;
    *) echo "$ADDRESS" ;;
  esac
}

start() {
  local dir=$1 n=${2:-2}
  [[ $n =~ ^[0-9]+$ ]] || die "N must be a number, not '$n'"
  # An IPv4 or IPv6 address (sshd would also take a host name, which a mount might resolve elsewhere).
  [[ $ADDRESS =~ ^[0-9.]+$ || $ADDRESS =~ ^[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*$ ]] ||
    die "SSHFS_PAIR_ADDRESS must be an IP address (127.0.0.1, 0.0.0.0, ::1), not '$ADDRESS'"
  check >&2
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)       # sshd wants absolute paths
  if [[ -f $dir/sshd.pid ]] && alive "$(cat "$dir/sshd.pid")"; then
    die "$dir is already started (run: $0 stop $dir)"
  fi
  # From here on, a failure undoes what was started.
  started=0 start_dir=$dir sshd_pid=""
  trap undo_failed_start EXIT

  mkdir -p "$dir/export" "$dir/ssh"
  chmod 700 "$dir/ssh"
  rm -f "$dir"/ssh/{host_key,client_key}{,.pub}
  ssh-keygen -q -t ed25519 -N '' -C sshfs-pair-host -f "$dir/ssh/host_key"
  ssh-keygen -q -t ed25519 -N '' -C sshfs-pair-client -f "$dir/ssh/client_key"
  cp "$dir/ssh/client_key.pub" "$dir/ssh/authorized_keys"
  if [[ $(id -u) == 0 && ! -d /run/sshd ]]; then mkdir -m 755 /run/sshd; fi

  # sshd runs in the foreground (-D) of a background job, so its pid is known. It writes its
  # pid file once it listens, and exits at once when the port is taken: then another is tried.
  local port tries=20
  while :; do
    port=${SSHFS_PAIR_PORT:-$((20000 + RANDOM % 40000))}
    write_sshd_config "$dir" "$port"
    rm -f "$dir/sshd.pid"
    "$SSHD" -D -f "$dir/sshd_config" -E "$dir/sshd.log" </dev/null >/dev/null 2>&1 &
    sshd_pid=$!
    wait_for 100 settled has_pid_file "$dir" "$sshd_pid" || true
    alive "$sshd_pid" && has_pid_file "$dir" && break
    if alive "$sshd_pid"; then kill "$sshd_pid"; fi
    if [[ -n ${SSHFS_PAIR_PORT:-} ]] || ((--tries == 0)); then
      die "sshd did not start on port $port: $(tail -n 2 "$dir/sshd.log" 2>/dev/null | tr '\n' ' ')"
    fi
  done
  sshd_pid=""
  log "sshd pid $(cat "$dir/sshd.pid") on $ADDRESS port $port"

  # A file that shows through a mount only when the mount really reaches the export.
  echo "sshfs-pair export" >"$dir/export/$SENTINEL"

  # Pin the host key (under an alias, so that a relay on another port is accepted too): the
  # client accepts this server only.
  echo "sshfs-pair $(cut -d' ' -f1,2 "$dir/ssh/host_key.pub")" >"$dir/ssh/known_hosts"
  echo "$port" >"$dir/port"

  local i
  local host
  host=$(connect_address)
  for ((i = 1; i <= n; i++)); do mount_one "$dir" "$i" "$host" "$port"; done
  started=1
  for ((i = 1; i <= n; i++)); do echo "$dir/mnt$i"; done
}

# mount_one DIR I HOST PORT: mounts DIR/export on DIR/mntI through HOST:PORT; dies on failure.
mount_one() {
  local dir=$1 i=$2 host=$3 port=$4 mnt=$1/mnt$2 pid extra=()
  [[ $host == *:* ]] && host="[$host]"     # an IPv6 address, as ssh's user@host:path wants it
  [[ -n ${SSHFS_PAIR_MOUNT_OPTS:-} ]] && extra=(-o "$SSHFS_PAIR_MOUNT_OPTS")
  mkdir -p "$mnt"
  # -f keeps sshfs in the foreground of this background job, so its pid is known exactly;
  # -F /dev/null keeps the user's ~/.ssh/config out of it.
  sshfs -f -F /dev/null "$(id -un)@$host:$dir/export" "$mnt" \
    -o "$MOUNT_OPTS" "${extra[@]}" \
    -o "port=$port,IdentityFile=$dir/ssh/client_key,IdentitiesOnly=yes,HostKeyAlias=sshfs-pair" \
    -o "UserKnownHostsFile=$dir/ssh/known_hosts,GlobalKnownHostsFile=/dev/null,StrictHostKeyChecking=yes" \
    -o "BatchMode=yes,UpdateHostKeys=no,ConnectTimeout=10" \
    </dev/null >>"$dir/sshfs-mnt$i.log" 2>&1 &
  pid=$!
  echo "$pid" >"$dir/sshfs-mnt$i.pid"
  # sshfs mounts first and connects after (and unmounts again if that fails), so a mount in
  # the table proves nothing: wait until the sentinel of the export shows through it.
  wait_for 150 settled sees_sentinel "$mnt" "$pid" || true
  if ! alive "$pid" || ! sees_sentinel "$mnt"; then
    if alive "$pid"; then kill "$pid"; fi
    die "sshfs did not mount $mnt: $(tail -n 3 "$dir/sshfs-mnt$i.log" | tr '\n' ' ')"
  fi
}

# EXIT trap of start: stops what a failed start left running (globals: the function is gone).
undo_failed_start() {
  ((started)) && return
  log "start failed; cleaning up"
  [[ -z $sshd_pid ]] || kill "$sshd_pid" 2>/dev/null || true
  stop "$start_dir" >/dev/null 2>&1 || true
}

# settled TEST ARG PID: true once TEST ARG holds, or once PID has exited (it failed).
settled() { "$1" "$2" || ! alive "$3"; }
has_pid_file() { [[ -s $1/sshd.pid ]]; }
sees_sentinel() { [[ -f $1/$SENTINEL ]]; }

write_sshd_config() {
  cat >"$1/sshd_config" <<EOF
# Private sshd of sshfs-pair.sh: on $ADDRESS only, key login of $(id -un) only, sftp only.
ListenAddress $ADDRESS
Port $2
HostKey $1/ssh/host_key
PidFile $1/sshd.pid
AuthorizedKeysFile $1/ssh/authorized_keys
AllowUsers $(id -un)
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowTcpForwarding no
X11Forwarding no
PrintMotd no
LogLevel ERROR
Subsystem sftp internal-sftp
EOF
}

stop() {
  local dir=$1 mnt pidfile pid failed=0
  [[ -d $dir ]] || { log "no such directory: $dir"; return 0; }
  dir=$(cd "$dir" && pwd)
  for mnt in "$dir"/mnt*; do
    [[ -d $mnt ]] || continue
    if mounted "$mnt"; then
      fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -u -z "$mnt" || failed=1
    fi
  done
  # sshfs exits once its mount is gone; one still running (a lazy unmount of a busy mount) is
  # stopped, so that its sshd session ends too.
  for pidfile in "$dir"/sshfs-mnt*.pid; do
    [[ -f $pidfile ]] || continue
    pid=$(cat "$pidfile")
    if ! wait_for 30 not alive "$pid"; then kill "$pid" 2>/dev/null || true; fi
    wait_for 50 not alive "$pid" || { log "sshfs pid $pid does not exit"; failed=1; }
    rm -f "$pidfile"
  done
  if [[ -f $dir/sshd.pid ]]; then
    pid=$(cat "$dir/sshd.pid")
    if alive "$pid"; then
      # Killing the listening sshd leaves its session processes running: end those first.
      local child
      for child in $(session_children "$pid"); do kill "$child" 2>/dev/null || true; done
      kill "$pid" 2>/dev/null || true
      if ! wait_for 50 not alive "$pid"; then
        kill -KILL "$pid" 2>/dev/null || true
        wait_for 20 not alive "$pid" || true
      fi
    fi
    if alive "$pid"; then log "sshd pid $pid does not exit"; failed=1; else rm -f "$dir/sshd.pid"; fi
  fi
  return "$failed"
}

# Pids of the live processes whose parent is $1 (the per-connection sshd processes).
session_children() {
  local p stat fields
  for p in /proc/[0-9]*; do
    stat=$(cat "$p/stat" 2>/dev/null) || continue
    read -ra fields <<<"${stat##*) }"      # state, ppid, ...
    [[ ${fields[1]} == "$1" && ${fields[0]} != [ZX] ]] && echo "${p#/proc/}"
  done
  return 0
}

case ${1:-} in
  start) [[ $# -ge 2 && $# -le 3 ]] || die "usage: $0 start DIR [N]"; start "$2" "${3:-2}" ;;
  stop) [[ $# -eq 2 ]] || die "usage: $0 stop DIR"; stop "$2" ;;
  check) check ;;
  mount)
    [[ $# -eq 4 && $3 =~ ^[1-9][0-9]*$ && $4 =~ ^[1-9][0-9]*$ ]] || die "usage: $0 mount DIR I PORT"
    [[ -f $2/port ]] || die "$2 is not started (run: $0 start $2 0)"
    mount_one "$(cd "$2" && pwd)" "$3" 127.0.0.1 "$4"
    echo "$(cd "$2" && pwd)/mnt$3" ;;
  *) echo "usage: $0 start DIR [N] | mount DIR I PORT | stop DIR | check (env: SSHFS_PAIR_ADDRESS, SSHFS_PAIR_PORT, SSHFS_PAIR_MOUNT_OPTS)" >&2; exit 2 ;;
esac
