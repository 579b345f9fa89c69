#!/usr/bin/env python3
"""Workers over HTTP against the Go worker, Celery and BullMQ, in one run.

Drains N echo tasks at concurrency C with each worker implementation of dtq
(the Go worker on Redis; the Python and TypeScript libraries over HTTP
against `dtq api`), then measures their start latency at a steady rate;
beside them Celery 5 (Debian python3-celery: threads pool, Redis broker,
late acks, results ignored) and BullMQ's Node worker (the peer harness's,
../shared/peerbench/bullmq). One redis-server of its own on a free port;
everything it starts it stops. Standard library only.

    python3 bench/httpworkers/bench.py                  # N=20000, C=50 and 10
    N=5000 SYSTEMS=python,celery python3 bench/httpworkers/bench.py

Measures, per system:
  drain        N tasks queued first, then the worker started; tasks/s from
               just before its start until the last is recorded done
               (worker start included, as ../shared/httpbench does);
  Redis CPU    Redis's used_cpu_sys+user over the drain, per task (for dtq
               over HTTP this includes the API server's Redis work);
  start p50/99 LAT_N tasks submitted one by one at RATE/s to an idle
               worker: handler start - submit call began (dtq: the Python
               library's Client.submit over HTTP), both on this
               machine's clock (the conformance workers' echo notes its
               start in $DTQ_BENCH_STARTS; Celery's task in Redis).
Numbers compare within one run on one quiet machine.
"""

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
N = int(os.environ.get("N", "20000"))
CS = [int(c) for c in os.environ.get("C", "50,10").split(",")]
LAT_N = int(os.environ.get("LAT_N", "1000"))
RATE = float(os.environ.get("RATE", "100"))
SYSTEMS = os.environ.get("SYSTEMS", "go,python,typescript,celery,bullmq").split(",")
PEERBENCH = os.environ.get("PEERBENCH", os.path.join(ROOT, "..", "shared", "peerbench"))
CELERY_PY = os.environ.get("CELERY_PY", "/usr/bin/python3")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Rig:
    """A redis-server and `dtq api` of our own, and the processes started."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = []
        self.dtq = os.path.join(tmp, "dtq")
        self.goworker = os.path.join(tmp, "goworker")
        run(["go", "build", "-o", self.dtq, "./cmd/dtq"], cwd=ROOT)
        run(["go", "build", "-o", self.goworker, "./conformance/goworker"], cwd=ROOT)
        self.rport = free_port()
        self.start(["redis-server", "--port", str(self.rport), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], "redis")
        wait_for(lambda: self.redis("PING") == "PONG", "redis-server")
        aport = free_port()
        self.url = "http://127.0.0.1:%d" % aport
        self.start([self.dtq, "api", "--addr", "127.0.0.1:%d" % aport, "--redis", self.redis_url()], "api")
        wait_for(lambda: http("GET", self.url + "/health")[0] == 200, "dtq api")

    def redis_url(self):
        return "redis://127.0.0.1:%d" % self.rport

    def redis(self, *args):
        out = subprocess.run(["redis-cli", "-p", str(self.rport)] + list(args), capture_output=True, text=True)
        return out.stdout.strip()

    def redis_cpu(self):
        info = dict(line.split(":", 1) for line in self.redis("INFO", "cpu").splitlines() if ":" in line)
        return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])

    def start(self, argv, name, env=None, cwd=None):
        log = open(os.path.join(self.tmp, name + ".log"), "ab")
        p = subprocess.Popen(argv, stdout=log, stderr=log, env=env, cwd=cwd, start_new_session=True)
        self.procs.append(p)
        return p

    def stop(self, p):
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()

    def close(self):
        for p in reversed(self.procs):
            self.stop(p)


def run(argv, **kw):
    subprocess.run(argv, check=True, **kw)


def wait_for(ok, what, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        try:
            if ok():
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise SystemExit("bench: %s did not come up within %ds" % (what, timeout))


def http(method, url, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"} if data else {})
    with urllib.request.urlopen(req, timeout=60) as res:
        return res.status, json.loads(res.read() or b"null")


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


# ---------------------------------------------------------------- dtq

def worker_argv(rig, system, queue, c):
    if system == "go":
        argv = [rig.goworker]
    elif system == "python":
        argv = [sys.executable, os.path.join(ROOT, "clients/python/tests/conformance_worker.py")]
    else:
        argv = ["node", os.path.join(ROOT, "clients/typescript/test/conformance-worker.mjs")]
    return argv + ["--url", rig.url, "--redis", rig.redis_url(), "--queues", queue, "--concurrency", str(c),
                   "--types", "echo", "--worker", "%s-%s" % (system, queue)]


def succeeded(rig, queue):
    return http("GET", "%s/api/v1/queues/%s" % (rig.url, queue))[1].get("succeeded_total", 0)


def dtq_drain(rig, system, c):
    queue = "d%s%d" % (system[:2], c)
    for i in range(0, N, 1000):
        tasks = [{"task_type": "echo", "queue": queue, "payload": {"i": j}} for j in range(i, min(N, i + 1000))]
        http("POST", rig.url + "/api/v1/tasks/batch", {"tasks": tasks})
    rig.redis("CONFIG", "RESETSTAT")
    cpu0, t0 = rig.redis_cpu(), time.time()
    p = rig.start(worker_argv(rig, system, queue, c), "%s-drain-%d" % (system, c), env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    while succeeded(rig, queue) < N:
        if time.time() - t0 > 600:
            raise SystemExit("bench: %s drain timed out" % system)
        time.sleep(0.01)
    el, cpu = time.time() - t0, rig.redis_cpu() - cpu0
    rig.stop(p)
    if os.environ.get("CMDSTATS"):
        print_cmdstats(rig, "%s c=%d" % (system, c))
    return N / el, cpu / N * 1e6


def print_cmdstats(rig, what):
    """Redis's commandstats over the drain, per task (CMDSTATS=1): which
    commands a task costs Redis (those run by scripts count twice: under
    their own name and in the script's time)."""
    rows = []
    for line in rig.redis("INFO", "commandstats").splitlines():
        if not line.startswith("cmdstat_"):
            continue
        name, rest = line[len("cmdstat_"):].split(":", 1)
        f = dict(kv.split("=") for kv in rest.split(","))
        rows.append((float(f["usec"]) / N, float(f["calls"]) / N, name))
    print("commandstats of %s, per task:" % what, file=sys.stderr)
    for usec, calls, name in sorted(rows, reverse=True)[:12]:
        print("  %-20s %6.2f us %6.2f calls" % (name, usec, calls), file=sys.stderr)


def dtq_latency(rig, system, c):
    queue = "l%s%d" % (system[:2], c)
    starts_file = os.path.join(rig.tmp, "starts-%s" % queue)
    p = rig.start(worker_argv(rig, system, queue, c), "%s-latency-%d" % (system, c),
                  env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1", DTQ_BENCH_STARTS=starts_file))
    time.sleep(2)  # the worker is up and polling
    # Submitted with the Python library's Client (a kept-alive connection),
    # as a Python producer would.
    sys.path.insert(0, os.path.join(ROOT, "clients", "python"))
    import dtq
    client = dtq.Client(rig.url)
    began = {}
    t = time.time()
    for i in range(LAT_N):
        t += 1.0 / RATE
        time.sleep(max(0.0, t - time.time()))
        t0 = time.time()
        began[client.submit("echo", {"i": i}, queue=queue).id] = t0
    client.close()
    wait_for(lambda: succeeded(rig, queue) >= LAT_N, "the latency run's tasks", timeout=120)
    rig.stop(p)
    handled = {}
    with open(starts_file) as f:
        for line in f:
            tid, t = line.split()
            handled.setdefault(tid, float(t))  # the first start of a task
    starts = [handled[tid] - t0 for tid, t0 in began.items()]
    return percentile(starts, 50) * 1e3, percentile(starts, 99) * 1e3


# ---------------------------------------------------------------- celery

CELERY_APP = """
import time
from celery import Celery
import redis
app = Celery("capp", broker="redis://127.0.0.1:%(port)d/1")
app.conf.update(task_ignore_result=True, worker_prefetch_multiplier=4, task_acks_late=True,
                broker_connection_retry_on_startup=True, worker_hijack_root_logger=False)
r = redis.Redis(port=%(port)d, db=2)
@app.task(name="echo")
def echo(payload):
    if "t" in payload:
        r.rpush("lat", time.time() - payload["t"])
    r.incr("done")
    return payload
"""

CELERY_SUBMIT = """
import sys, time
from capp import echo
n, rate, queue = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
t = time.time()
for i in range(n):
    if rate > 0:
        t += 1.0 / rate
        time.sleep(max(0.0, t - time.time()))
    echo.apply_async(({"i": i, "t": time.time()} if rate > 0 else {"i": i},), queue=queue)
"""


def celery_ready():
    ok = subprocess.run([CELERY_PY, "-c", "import celery, redis"], capture_output=True).returncode == 0
    if not ok:
        print("bench: installing python3-celery python3-redis (Debian)", file=sys.stderr)
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "python3-celery", "python3-redis"], check=True,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    return True


def celery_worker(rig, queue, c):
    return rig.start([CELERY_PY, "-m", "celery", "-A", "capp", "worker", "-Q", queue, "--pool", "threads", "-c", str(c),
                      "--without-heartbeat", "--without-gossip", "--without-mingle", "-l", "WARNING"],
                     "celery-%s" % queue, cwd=rig.tmp)


def celery_drain(rig, c):
    with open(os.path.join(rig.tmp, "capp.py"), "w") as f:
        f.write(CELERY_APP % {"port": rig.rport})
    queue = "cel%d" % c
    rig.redis("-n", "2", "DEL", "done")
    subprocess.run([CELERY_PY, "-c", CELERY_SUBMIT, str(N), "0", queue], cwd=rig.tmp, check=True)
    cpu0, t0 = rig.redis_cpu(), time.time()
    p = celery_worker(rig, queue, c)
    while rig.redis("-n", "2", "GET", "done") != str(N):
        if time.time() - t0 > 600:
            raise SystemExit("bench: celery drain timed out")
        time.sleep(0.02)
    el, cpu = time.time() - t0, rig.redis_cpu() - cpu0
    rig.stop(p)
    return N / el, cpu / N * 1e6


def celery_latency(rig, c):
    queue = "celat%d" % c
    rig.redis("-n", "2", "DEL", "done", "lat")
    p = celery_worker(rig, queue, c)
    time.sleep(3)
    subprocess.run([CELERY_PY, "-c", CELERY_SUBMIT, str(LAT_N), str(RATE), queue], cwd=rig.tmp, check=True)
    wait_for(lambda: rig.redis("-n", "2", "GET", "done") == str(LAT_N), "celery's latency tasks", timeout=120)
    rig.stop(p)
    lat = [float(x) for x in rig.redis("-n", "2", "LRANGE", "lat", "0", "-1").split()]
    return percentile(lat, 50) * 1e3, percentile(lat, 99) * 1e3


# ---------------------------------------------------------------- bullmq

def bullmq_drain(rig, c):
    folder = os.path.join(rig.tmp, "bullmq")
    if not os.path.isdir(folder):
        shutil.copytree(os.path.join(PEERBENCH, "bullmq"), folder)
        for root, dirs, files in os.walk(folder):
            for name in dirs + files:
                os.chmod(os.path.join(root, name), 0o755)
        run([os.path.join(folder, "build")], cwd=folder)
    cpu0 = rig.redis_cpu()
    out = subprocess.run([os.path.join(folder, "run"), "drain", "--n", str(N), "--c", str(c), "--redis", "127.0.0.1:%d" % rig.rport,
                          "--queue", "bull%d" % c], capture_output=True, text=True, check=True, cwd=folder)
    cpu = rig.redis_cpu() - cpu0  # the untimed pre-enqueue included: an upper bound
    res = json.loads(out.stdout.strip().splitlines()[-1])
    return res["tasks_per_s"], cpu / N * 1e6


# ---------------------------------------------------------------- main

def main():
    tmp = tempfile.mkdtemp(prefix="dtq-httpbench-")
    rig = Rig(tmp)
    rows = []
    try:
        for system in SYSTEMS:
            for c in CS:
                if system in ("go", "python", "typescript"):
                    rate, cpu = dtq_drain(rig, system, c)
                    p50, p99 = dtq_latency(rig, system, c) if c == CS[0] else (None, None)
                elif system == "celery":
                    celery_ready()
                    rate, cpu = celery_drain(rig, c)
                    p50, p99 = celery_latency(rig, c) if c == CS[0] else (None, None)
                elif system == "bullmq":
                    rate, cpu = bullmq_drain(rig, c)
                    p50 = p99 = None
                else:
                    raise SystemExit("bench: unknown system %r" % system)
                rows.append((system, c, rate, cpu, p50, p99))
                print("%-10s c=%-3d drain %8.0f tasks/s  Redis CPU %6.1f us/task  start p50/p99 %s" % (
                    system, c, rate, cpu, "-" if p50 is None else "%.2f / %.2f ms" % (p50, p99)), flush=True)
    finally:
        rig.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print()
    print("| system | c | drain (tasks/s) | Redis CPU (µs/task) | start p50 / p99 (ms, %d at %g/s) |" % (LAT_N, RATE))
    print("|---|---:|---:|---:|---:|")
    for system, c, rate, cpu, p50, p99 in rows:
        print("| %s | %d | %s | %.1f | %s |" % (system, c, "{:,.0f}".format(rate), cpu, "–" if p50 is None else "%.2f / %.2f" % (p50, p99)))


if __name__ == "__main__":
    main()
