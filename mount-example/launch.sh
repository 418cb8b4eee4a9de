#!/usr/bin/env bash
# launch.sh: start, stop and report one mountcrawl node on each of several machines that
# mount the same share (mount-example/README.md, docs/operations.md).
#
#   launch.sh start  DATA_DIR host1 [host2 ...] [-- crawl options and URLs]
#   launch.sh stop   DATA_DIR host1 [host2 ...]
#   launch.sh status DATA_DIR host1 [host2 ...]
#
# start   on each host (over ssh, key login, no prompt), in the background with nohup:
#           cd $REMOTE_DIR && $MOUNTCRAWL crawl --data DATA_DIR [options and URLs]
#         logging to $LOG_DIR/mountcrawl-HOST.log on that host (a progress line every 5 s, the
#         settings it applies, warnings, the end summary; --no-progress keeps the last two).
#         The node's pid goes to $LOG_DIR/mountcrawl-HOST.pid there (removed when the node
#         ends), its exit code and time to $LOG_DIR/mountcrawl-HOST.exit. A host whose node still runs is not started
#         again. After $STATUS_AFTER seconds, shows what `status` shows.
# stop    sends each node SIGINT as Ctrl-C in a terminal does, to its process group (it
#         finishes its requests in flight, writes what it holds and exits 130; the next start
#         resumes the crawl), then waits up to $STOP_TIMEOUT seconds for it to end. Only the
#         node of the pid file is signalled (with what it started: its process group, made by
#         setsid), and only while it is a mountcrawl process started by this script (its
#         parent is the recorded shell that waits for it): nothing else is ever killed. Stop
#         again to stop the nodes still running at once (a second Ctrl-C).
# status  says for each host whether its node runs (or how it ended), then runs
#         `$MOUNTCRAWL status --data DATA_DIR` here once.
#
# DATA_DIR is an absolute path, the same on every machine (the mount point of the share, or a
# directory inside it). Each host line of the output starts with the host's name.
#
# Exit: 0 when every host did what was asked (start: every node started and none has ended
# with a failure by the time of the status; stop: every node ended, or had already ended;
# status: every node runs); 3 from status when a node does not run; 1 when a host could not
# be reached, a node could not be started or did not end within STOP_TIMEOUT, or `mountcrawl
# status` failed; 2 on bad usage.
#
# Environment:
#   MOUNTCRAWL    command that runs mountcrawl, here and on the hosts, split at spaces
#                 (default: npx mountcrawl)
#   REMOTE_DIR    directory on the hosts where mountcrawl is installed (default: ~)
#   LOG_DIR       directory of the log, pid and exit files, on each host (default: /tmp); a
#                 relative path is taken from REMOTE_DIR. One node per host and LOG_DIR.
#   STATUS_AFTER  seconds start waits before the status (default: 10)
#   STOP_TIMEOUT  seconds stop waits for the nodes to end (default: 120)
#   SSH           ssh command (default: ssh -n -o BatchMode=yes -o ConnectTimeout=10)
set -euo pipefail

die() { echo "launch.sh: $*" >&2; exit 2; }
usage() {
  die "usage: launch.sh start|stop|status DATA_DIR host1 [host2 ...] [-- crawl options and URLs (start only)]"
}

# What runs on each host (POSIX sh): sh -c REMOTE sh ACTION TAG REMOTE_DIR LOG_DIR DATA_DIR [...].
# Its exit: 0 done (start: started; stop: ended; status: runs), 3 not running (stop, status),
# 4 ended with a failure (status) or did not end in time (stop), 1 could not start.
read -r -d '' REMOTE <<'EOF' || true
# shellcheck shell=sh
set -f # words are split on purpose below (MOUNTCRAWL, ps and /proc fields), never globbed
action=$1 tag=$2 dir=$3 logdir=$4 data=$5
shift 5
# shellcheck disable=SC2088 # a leading ~ is matched here, and replaced by $HOME
home() { case $1 in "~") printf '%s\n' "$HOME" ;; "~/"*) printf '%s/%s\n' "$HOME" "${1#"~/"}" ;; *) printf '%s\n' "$1" ;; esac; }
dir=$(home "$dir") logdir=$(home "$logdir")
cd "$dir" || { echo "cannot cd to REMOTE_DIR $dir"; exit 1; }
base=$logdir/mountcrawl-$tag
pidf=$base.pid exitf=$base.exit log=$base.log

# "STATE PPID PGID" of a process, from /proc or (without /proc) from ps.
state_ppid() {
  if [ -r "/proc/$1/stat" ]; then
    s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    # shellcheck disable=SC2086
    set -- ${s##*) }
    echo "$1 $2 $3"
  else
    s=$(ps -o stat= -o ppid= -o pgid= -p "$1" 2>/dev/null) || return 1
    # shellcheck disable=SC2086
    echo $s
  fi
}
alive() { st=$(state_ppid "$1") || return 1; case $st in [ZX]*) return 1 ;; esac; }
args_of() {
  if [ -r "/proc/$1/cmdline" ]; then tr '\0' ' ' <"/proc/$1/cmdline"; else ps -o args= -p "$1"; fi
}
# True when the pid file names a live mountcrawl process whose parent is the recorded
# wrapper (so that a pid reused by another process is never taken for the node); sets pid.
running() {
  [ -f "$pidf" ] || return 1
  read -r pid wrapper recorded <"$pidf" || true
  case $pid$wrapper in "" | *[!0-9]*) return 1 ;; esac
  st=$(state_ppid "$pid") || return 1
  # shellcheck disable=SC2086
  set -- $st
  case $1 in [ZX]*) return 1 ;; esac
  [ "$2" = "$wrapper" ] || return 1
  group=$3
  case $(args_of "$pid") in *mountcrawl*) ;; *) return 1 ;; esac
  if [ "$recorded" != "$data" ]; then
    printf 'runs a node of another data directory (%s), pid %s: left alone\n' "$recorded" "$pid"
    exit 1
  fi
}
# Says how the node ended (a pid file left behind is removed); returns 4 when it failed, else 3.
ended() {
  if [ -f "$exitf" ]; then
    rm -f "$pidf"
    read -r code at <"$exitf" || true
    case $code in
      0) echo "not running: the crawl ended at $at (exit 0)" ;;
      130 | 143) echo "not running: stopped at $at (exit $code)" ;;
      *) printf 'not running: failed at %s (exit %s): %s\n' "$at" "$code" "$(tail -n 1 "$log" 2>/dev/null)"; return 4 ;;
    esac
  elif [ -f "$pidf" ]; then
    rm -f "$pidf"
    echo "not running: its pid file names no mountcrawl process this script started (stale, removed)"
  else
    printf 'not running: no node was started here (no %s)\n' "$pidf"
  fi
  return 3
}

case $action in
start)
  if running; then echo "already running, pid $pid: not started again"; exit 1; fi
  mkdir -p "$logdir" || { printf 'cannot create LOG_DIR %s\n' "$logdir"; exit 1; }
  rm -f "$pidf" "$exitf"
  mc=$1
  shift
  printf '== %s launch.sh start: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$mc $*" >>"$log"
  # The wrapper waits for the node: it records the node's pid (and its own, the node's
  # parent), then its exit code, and removes the pid file once the node has ended. The node
  # leads a process group of its own (setsid, where there is one), so that stop reaches it
  # as Ctrl-C in a terminal does, through `npx` and the shell it starts too.
  # shellcheck disable=SC2016,SC2086 # the wrapper expands its own; MOUNTCRAWL is split
  nohup sh -c '
    pidf=$1 exitf=$2 data=$3
    shift 3
    if command -v setsid >/dev/null; then set -- setsid "$@"; fi
    "$@" &
    pid=$!
    printf "%s %s %s\n" "$pid" "$$" "$data" >"$pidf.tmp" && mv "$pidf.tmp" "$pidf"
    wait "$pid"
    code=$?
    printf "%s %s\n" "$code" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$exitf"
    rm -f "$pidf"
  ' sh "$pidf" "$exitf" "$data" $mc "$@" </dev/null >>"$log" 2>&1 &
  deadline=$(($(date +%s) + 10))
  while [ ! -f "$pidf" ] && [ ! -f "$exitf" ] && [ "$(date +%s)" -lt $deadline ]; do sleep 0.1; done
  if running; then echo "started, pid $pid, log $log"; exit 0; fi
  ended
  exit 1
  ;;
stop)
  timeout=$1
  running || { ended; exit 3; }
  # Its process group when it leads one (only what it started is in it), as Ctrl-C does.
  if [ "$group" = "$pid" ]; then kill -s INT -- "-$pid" 2>/dev/null || true; else kill -s INT "$pid" 2>/dev/null || true; fi
  deadline=$(($(date +%s) + timeout))
  while alive "$pid" && [ "$(date +%s)" -lt $deadline ]; do sleep 0.5; done
  if alive "$pid"; then echo "did not end within ${timeout}s: pid $pid runs on (stop again to stop it at once)"; exit 4; fi
  deadline=$(($(date +%s) + 5))
  while [ -f "$pidf" ] && [ "$(date +%s)" -lt $deadline ]; do sleep 0.1; done
  read -r code at <"$exitf" 2>/dev/null || code=unknown
  echo "stopped (exit $code), log $log"
  ;;
status)
  if running; then echo "running, pid $pid, log $log"; exit 0; fi
  ended
  ;;
esac
EOF

# Quotes one word for the remote POSIX shell: 'it'\''s'.
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

action=${1:-}
case $action in start | stop | status) ;; *) usage ;; esac
shift
(($# >= 2)) || usage
data=$1
shift
[[ $data == /* ]] || die "DATA_DIR must be an absolute path (the same on every machine), not '$data'"
hosts=()
host_re='^[A-Za-z0-9._@:%+-]+$'
while (($#)) && [[ $1 != -- ]]; do
  [[ $1 != -* ]] || die "host '$1' begins with '-': crawl options go after --"
  [[ $1 =~ $host_re ]] || die "host '$1' is no ssh host name"
  for h in "${hosts[@]}"; do [[ $h != "$1" ]] || die "host '$1' is given twice"; done
  hosts+=("$1")
  shift
done
((${#hosts[@]})) || usage
if (($#)); then
  shift # the --
  [[ $action == start ]] || die "$action takes no crawl options (nothing after --)"
fi
crawl_args=("$@")

MOUNTCRAWL=${MOUNTCRAWL:-npx mountcrawl}
REMOTE_DIR=${REMOTE_DIR:-'~'}
LOG_DIR=${LOG_DIR:-/tmp}
STATUS_AFTER=${STATUS_AFTER:-10}
STOP_TIMEOUT=${STOP_TIMEOUT:-120}
[[ $STATUS_AFTER =~ ^[0-9]+$ ]] || die "STATUS_AFTER must be a whole number of seconds, not '$STATUS_AFTER'"
[[ $STOP_TIMEOUT =~ ^[0-9]+$ ]] || die "STOP_TIMEOUT must be a whole number of seconds, not '$STOP_TIMEOUT'"
read -ra ssh_cmd <<<"${SSH:-ssh -n -o BatchMode=yes -o ConnectTimeout=10}"
read -ra mountcrawl <<<"$MOUNTCRAWL"
((${#ssh_cmd[@]})) || die "SSH is empty"
((${#mountcrawl[@]})) || die "MOUNTCRAWL is empty"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# on_hosts ACTION [ARGS...]: runs REMOTE's ACTION on every host at once, then prints each
# host's answer, in the order given, as "HOST: line". Sets the globals worst (the highest
# remote exit, 1 for an ssh failure) and failures (hosts whose answer was 1 or an ssh failure).
on_hosts() {
  local i host tag word cmd rc line
  for i in "${!hosts[@]}"; do
    host=${hosts[i]}
    tag=${host//[^A-Za-z0-9._-]/_}
    cmd="sh -c $(q "$REMOTE") sh"
    for word in "$1" "$tag" "$REMOTE_DIR" "$LOG_DIR" "$data" "${@:2}"; do cmd+=" $(q "$word")"; done
    { set +e; "${ssh_cmd[@]}" "$host" "$cmd" >"$tmp/$i.out" 2>&1; echo $? >"$tmp/$i.rc"; } &
  done
  wait
  worst=0 failures=0
  for i in "${!hosts[@]}"; do
    rc=$(cat "$tmp/$i.rc")
    if ((rc == 255)) || [[ ! -s $tmp/$i.out ]]; then
      echo "${hosts[i]}: unreachable (ssh exit $rc): $(tail -n 1 "$tmp/$i.out" | tr -d "\r")"
      rc=1
    else
      while IFS= read -r line; do echo "${hosts[i]}: $line"; done <"$tmp/$i.out"
    fi
    ((rc != 1)) || failures=$((failures + 1))
    ((rc <= worst)) || worst=$rc
  done
}

# Every host's state, then the crawl's status from the share; returns 0, 3 or 1 (above).
status() {
  on_hosts status
  local rc=0 worst_hosts=$worst failed_hosts=$failures
  echo "== $MOUNTCRAWL status --data $data"
  "${mountcrawl[@]}" status --data "$data" || rc=1
  ((failed_hosts == 0)) || rc=1
  ((rc != 0 || worst_hosts == 0)) || rc=3
  return "$rc"
}

case $action in
start)
  on_hosts start "$MOUNTCRAWL" crawl --data "$data" "${crawl_args[@]}"
  started_ok=$((failures == 0))
  echo "== status in ${STATUS_AFTER}s (again any time: $0 status $data ${hosts[*]})"
  sleep "$STATUS_AFTER"
  rc=0
  status || rc=$?
  # A node that has ended by now is a failure only when it failed (worst 4), not when it finished.
  if ((started_ok && rc != 1 && worst < 4)); then exit 0; fi
  exit 1
  ;;
stop)
  on_hosts stop "$STOP_TIMEOUT"
  ((failures == 0 && worst < 4)) || exit 1
  ;;
status)
  rc=0
  status || rc=$?
  exit "$rc"
  ;;
esac
