#!/usr/bin/env bash
# demo.sh: six end-to-end scenarios of dtq against a scratch redis-server,
# with a real `dtq api` and `dtq worker` processes, driven by the dtq CLI:
#
#   1. retries          a flaky task fails twice, then succeeds
#   2. dead letters     a failing task goes DEAD; requeue runs it again
#   3. backpressure     a full queue answers 429 with Retry-After
#   4. worker killed    SIGKILL mid-task; another worker takes the task over
#   5. idempotency      the same submit twice makes one task; a different one is refused
#   6. delay + cancel   a delayed task runs when due; a cancelled one never does
#
# Usage: scripts/demo.sh   (needs Go, curl and redis-server; exits non-zero if a scenario fails)
set -euo pipefail

cd "$(dirname "$0")/.."
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
fail() { printf '\033[31mFAIL: %s\033[0m\n' "$*"; exit 1; }
ok() { printf '\033[32mok\033[0m  %s\n' "$*"; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
	echo $((20000 + RANDOM % 20000)); }

if [ -n "${DTQ_BIN:-}" ]; then # a dtq binary already built (the e2e tests pass theirs)
	cp "$DTQ_BIN" "$work/dtq"
else
	go build -o "$work/dtq" ./cmd/dtq
fi
dtq() { "$work/dtq" "$@"; } # (background processes run the binary itself, so that $! is its pid)

# A scratch redis-server, no persistence.
rport=$(free_port)
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >"$work/redis.log" 2>&1 </dev/null &
pids+=($!)
for _ in $(seq 50); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done
export DTQ_REDIS_URL="redis://127.0.0.1:$rport"

aport=$(free_port)
export DTQ_API_URL="http://127.0.0.1:$aport"
"$work/dtq" api --addr "127.0.0.1:$aport" --max-depth 3 >/dev/null 2>"$work/api.log" &
pids+=($!)

start_worker() { # start_worker NAME: a worker with a short visibility timeout; its pid in $last_pid
	"$work/dtq" worker --addr 127.0.0.1:0 --queues default,demo --visibility-timeout 2s >/dev/null 2>"$work/$1.log" &
	last_pid=$!
	pids+=("$last_pid")
}
start_worker worker1
worker1=$last_pid
for _ in $(seq 100); do curl -fs "$DTQ_API_URL/ready" >/dev/null 2>&1 && break; sleep 0.1; done

field() { # field NAME: the first "NAME": value of the JSON on stdin
	sed -n 's/^ *"'"$1"'": *"\{0,1\}\([^",]*\)"\{0,1\},\{0,1\}$/\1/p' | head -1
}
wait_status() { # wait_status ID STATUS [SECONDS]
	local deadline=$((SECONDS + ${3:-30})) s
	while :; do
		s=$(dtq get "$1" --json | field status)
		[ "$s" = "$2" ] && return 0
		[ $SECONDS -ge $deadline ] && fail "task $1 is $s, want $2"
		sleep 0.1
	done
}

say "1. retries: a flaky task fails twice, then succeeds"
id=$(dtq submit flaky --payload '{"fail_times":2}' --max-attempts 5 --json | field id)
wait_status "$id" SUCCEEDED 60
dtq get "$id"
[ "$(dtq get "$id" --json | field attempt)" = 3 ] || fail "want success on attempt 3"
ok "succeeded on attempt 3 after two retries with backoff"

say "2. dead letters: a failing task goes DEAD; requeue runs it again"
id=$(dtq submit always_fail --payload '{"permanent":true}' --json | field id)
wait_status "$id" DEAD
dtq dlq list
dtq dlq requeue "$id"
wait_status "$id" DEAD
runs=$(dtq get "$id" --json | grep -c '"run":')
[ "$runs" = 2 ] || fail "want 2 runs in the history, got $runs"
ok "dead, requeued, ran again (2 runs in its history)"
dtq dlq purge --queue default --yes

say "3. backpressure: a full queue answers 429 with Retry-After"
for i in 1 2 3; do dtq submit echo --queue parked --payload "$i" >/dev/null; done
code=$(curl -s -o "$work/429.json" -D "$work/429.hdr" -w '%{http_code}' -XPOST "$DTQ_API_URL/api/v1/tasks" \
	-H 'Content-Type: application/json' -d '{"task_type":"echo","queue":"parked"}')
cat "$work/429.json"
[ "$code" = 429 ] || fail "want 429, got $code"
grep -qi '^retry-after:' "$work/429.hdr" || fail "no Retry-After header"
ok "the 4th submit to a queue capped at 3 got 429 with $(grep -i '^retry-after:' "$work/429.hdr" | tr -d '\r')"

say "4. worker killed: SIGKILL mid-task; another worker takes it over"
# (10 s: on a loaded machine the polls between RUNNING and the kill take seconds, and a task that
# finished before the kill would show no takeover)
id=$(dtq submit sleep --payload '{"seconds":10}' --queue demo --json | field id)
wait_status "$id" RUNNING
kill -KILL "$worker1"
s=$(dtq get "$id" --json | field status)
[ "$s" = RUNNING ] || fail "the task was $s when its worker was killed, not RUNNING: the kill came too late"
ok "killed the worker running $id"
start_worker worker2
wait_status "$id" SUCCEEDED 60
dtq get "$id"
[ "$(dtq get "$id" --json | field crashes)" = 1 ] || fail "want crashes 1"
ok "reclaimed after the 2 s visibility timeout and finished: crashes 1, attempts unchanged"

say "5. idempotency: the same submit twice makes one task"
a=$(dtq submit echo --payload '{"order":42}' --idempotency-key order-42 --json | field id)
wait_status "$a" SUCCEEDED
b=$(dtq submit echo --payload '{"order":42}' --idempotency-key order-42 --json | field id)
[ "$a" = "$b" ] || fail "two tasks for one key: $a $b"
ok "replayed submit returned the same task $a"
if dtq submit echo --payload '{"order":43}' --idempotency-key order-42 2>"$work/422.txt"; then
	fail "a different request with the same key was accepted"
fi
cat "$work/422.txt"
ok "a different request with the same key was refused"

say "6. delay + cancel: a delayed task runs when due; a cancelled one never does"
submitted=$(date +%s%N)
due=$(dtq submit echo --delay 5s --json | field id)
gone=$(dtq submit echo --delay 1m --json | field id)
s=$(dtq get "$due" --json | field status)
# (Under a loaded CI machine the two commands may outlast the delay: only a
# task promoted before it is due is wrong.)
if [ "$s" != SCHEDULED ] && [ $(( ($(date +%s%N) - submitted) / 1000000 )) -lt 5000 ]; then
	fail "task $due is '$s' less than 5 s after its submit with --delay 5s, want SCHEDULED"
fi
dtq cancel "$gone"
wait_status "$due" SUCCEEDED 30
wait_status "$gone" CANCELLED 1
ok "the 5 s delayed task ran when due; the cancelled one is CANCELLED"

say "all six scenarios passed"
dtq queue list
