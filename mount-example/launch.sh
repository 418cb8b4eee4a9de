#!/usr/bin/env bash
# launch.sh: start one mountcrawl node on each of several machines that mount the same share.
#
#   launch.sh DATA_DIR host1 host2 ... -- [crawl options and URLs]
#
# For each host: ssh to it (key login, no prompt) and start, in the background with nohup,
#   cd $REMOTE_DIR && $MOUNTCRAWL crawl --data DATA_DIR --no-progress [options and URLs]
# logging to $LOG_DIR/mountcrawl-<host>.log on that host. Then, after $STATUS_AFTER seconds,
# runs `$MOUNTCRAWL status --data DATA_DIR` here. DATA_DIR must be the same path on every
# machine (the mount point of the share, or a directory inside it).
#
# Environment:
#   MOUNTCRAWL    command that runs mountcrawl, here and on the hosts (default: npx mountcrawl)
#   REMOTE_DIR    directory on the hosts where mountcrawl is installed (default: ~)
#   LOG_DIR       directory for the per-host logs, on each host (default: /tmp); a directory
#                 on the share beside DATA_DIR (never inside it) puts all logs in one place
#   STATUS_AFTER  seconds to wait before the status (default: 10)
#   SSH           ssh command (default: ssh -n -o BatchMode=yes -o ConnectTimeout=10)
set -euo pipefail

usage() { echo "usage: $0 DATA_DIR host1 [host2 ...] -- [crawl options and URLs]" >&2; exit 2; }
(($# >= 2)) || usage
data=$1; shift
hosts=()
while (($#)) && [[ $1 != -- ]]; do hosts+=("$1"); shift; done
(($#)) && shift # the --
((${#hosts[@]})) || usage

MOUNTCRAWL=${MOUNTCRAWL:-npx mountcrawl}
REMOTE_DIR=${REMOTE_DIR:-'~'}
LOG_DIR=${LOG_DIR:-/tmp}
STATUS_AFTER=${STATUS_AFTER:-10}
read -ra ssh_cmd <<<"${SSH:-ssh -n -o BatchMode=yes -o ConnectTimeout=10}"

# Quotes one word for the remote POSIX shell: 'it'\''s'.
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

args=""
for a in --data "$data" --no-progress "$@"; do args+=" $(q "$a")"; done

failed=0
for host in "${hosts[@]}"; do
  log="$LOG_DIR/mountcrawl-${host//[^A-Za-z0-9._-]/_}.log"
  # REMOTE_DIR and MOUNTCRAWL are left unquoted on purpose: ~ and "npx mountcrawl" must expand.
  remote="cd $REMOTE_DIR && nohup $MOUNTCRAWL crawl$args >$(q "$log") 2>&1 </dev/null & echo \$!"
  if pid=$("${ssh_cmd[@]}" "$host" "$remote"); then
    echo "$host: started, pid $pid, log $log"
  else
    echo "$host: could not start (ssh failed)" >&2
    failed=1
  fi
done

echo "== status in ${STATUS_AFTER}s (again any time: $MOUNTCRAWL status --data $data)"
sleep "$STATUS_AFTER"
$MOUNTCRAWL status --data "$data" || failed=1
exit "$failed"
