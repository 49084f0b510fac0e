#!/usr/bin/env bash
# Asks a real NCCL job's RAS thread what it says (issue 34 item 5), on a GPU
# machine, from the bundle scripts/gpu-bundle.sh made (either bundle: both
# carry fabtrack and fabtrack-allreduce). No build, no install, no network.
#   1. starts one NCCL rank (fabtrack-allreduce --backend nccl as an MPI
#      singleton, one size repeated long enough to be asked) with
#      NCCL_DEBUG=INFO, and waits until RAS listens (NCCL_RAS_ADDR, default
#      localhost:28028: NCCL's own default);
#   2. keeps RAS's raw replies, bytes as sent, one file per conversation
#      (raw/NAME.txt; raw/NAME.transcript says what was sent and each answer
#      line): STATUS, VERBOSE STATUS, SET FORMAT json then VERBOSE STATUS
#      (2.28.7+; older releases refuse the command, which is kept too), and
#      MONITOR for a few seconds (2.29+). These are the fixtures the tests'
#      stand-in replays in image only;
#   3. runs `fabtrack ras status` on the live job: text, json, --verbose, each
#      with its exit code (expected 0: one healthy rank);
#   4. freezes the job (SIGSTOP: its RAS thread stops with it) and asks again
#      with a short --timeout: what a hung single process gives (expected
#      exit 3, "stalled"), then SIGCONT;
#   5. stops the job, packs everything into gpu-ras.tar.gz, copied to $OUT.
# Usage: scripts/gpu-ras-capture.sh   (bundle: .gpu-bundle or $FABTRACK_BUNDLE)
# GPU_RAS_JOB replaces the job's command (the tests run the protocol stand-in
# instead of NCCL on a machine without a GPU; GPU_RAS_SETTLE_S, GPU_RAS_MONITOR_S and
# GPU_RAS_FROZEN_S shorten the waits there); output in ./gpu-ras-out or
# $GPU_RAS_DIR. Exit 0 every step answered as expected, 1 one did not, 2 no
# bundle or RAS never listened.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
bundle=${FABTRACK_BUNDLE:-.gpu-bundle}
out=${GPU_RAS_DIR:-./gpu-ras-out}
addr=${NCCL_RAS_ADDR:-localhost:28028}
ras_host=${addr%:*}
ras_port=${addr##*:}
rm -rf "$out"
mkdir -p "$out/raw"

if [[ -z ${GPU_RAS_JOB:-} ]]; then
  [[ -f $bundle/env.sh ]] || { echo "gpu-ras: no bundle at $bundle (run scripts/gpu-bundle.sh here first)" >&2; exit 2; }
  # shellcheck source=/dev/null
  source "$bundle/env.sh" || { echo "gpu-ras: $bundle/env.sh failed" >&2; exit 2; }
  fabtrack=$bundle/bin/fabtrack
  # One 256 MiB all-reduce repeated: ~0.3 ms each on an H100, so 400,000
  # iterations outlast the capture (the job is stopped at the end).
  job=("$bundle/bin/fabtrack-allreduce" --backend nccl -q -b 256M -e 256M -n 400000 -w 5)
else
  fabtrack=${FABTRACK:-build/cli/fabtrack}
  read -r -a job <<<"$GPU_RAS_JOB"
fi
status=0
fail() { echo "gpu-ras: FAIL: $*"; status=1; }

NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,RAS "${job[@]}" >"$out/job.log" 2>&1 &
job_pid=$!
stop_job() {
  kill -CONT "$job_pid" 2>/dev/null
  kill "$job_pid" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$job_pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$job_pid" 2>/dev/null
}
trap stop_job EXIT

# The raw conversations: a few lines of python, which every GPU image has;
# bytes are kept as they came.
python3 - "$ras_host" "$ras_port" "$out/raw" "$job_pid" "${GPU_RAS_SETTLE_S:-3}" \
  "${GPU_RAS_MONITOR_S:-5}" <<'PY'
import os, socket, sys, time

host, port, raw, job_pid = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
settle_s, monitor_s = float(sys.argv[5]), float(sys.argv[6])


def job_alive():
    try:
        os.kill(job_pid, 0)
        return True
    except OSError:
        return False


deadline = time.time() + 120
while True:
    try:
        socket.create_connection((host, port), timeout=1).close()
        break
    except OSError:
        if time.time() > deadline or not job_alive():
            print("gpu-ras: RAS never listened on %s:%d (job %s)" %
                  (host, port, "running" if job_alive() else "ended"))
            sys.exit(2)
        time.sleep(0.5)
print("gpu-ras: RAS listens on %s:%d" % (host, port))
time.sleep(settle_s)  # the rank's communicator is up and counting


def converse(name, lines, read_for):
    """Sends each line, keeps the answer line of all but the last, then reads
    what follows until the server closes or read_for seconds pass."""
    s = socket.create_connection((host, port), timeout=10)
    log = []
    f = s.makefile("rb")
    for line in lines[:-1]:
        s.sendall(line.encode() + b"\n")
        answer = f.readline()
        log.append("> %s\n< %r\n" % (line, answer))
    s.sendall(lines[-1].encode() + b"\n")
    log.append("> %s\n" % lines[-1])
    s.settimeout(0.5)
    body, start, ended = b"", time.time(), "read_for elapsed"
    while time.time() - start < read_for:
        try:
            chunk = f.read1(65536)
        except socket.timeout:
            continue
        if not chunk:
            ended = "server closed"
            break
        body += chunk
    s.close()
    log.append("< %d bytes, %s after %.2f s\n" % (len(body), ended, time.time() - start))
    open(os.path.join(raw, name + ".txt"), "wb").write(body)
    open(os.path.join(raw, name + ".transcript"), "w").write("".join(log))
    print("gpu-ras: %s: %d bytes, %s" % (name, len(body), ended))


hello = "CLIENT PROTOCOL 2"
converse("status", [hello, "STATUS"], 30)
converse("verbose_status", [hello, "VERBOSE STATUS"], 30)
converse("json_verbose_status", [hello, "SET FORMAT json", "VERBOSE STATUS"], 30)
converse("monitor", [hello, "MONITOR"], monitor_s)
converse("json_monitor", [hello, "SET FORMAT json", "MONITOR"], monitor_s)
converse("unknown_command", [hello, "NO SUCH COMMAND"], monitor_s)
PY
case $? in
  0) ;;
  2) status=2 ;;
  *) fail "the raw conversations" ;;
esac

if ((status != 2)); then
  # fabtrack's own client on the live job: one healthy rank.
  for form in "text" "json" "text --verbose"; do
    name=ras_status_${form// /_}
    name=${name//--/}
    read -r -a args <<<"--format $form"
    "$fabtrack" ras status --host "$ras_host" --port "$ras_port" "${args[@]}" >"$out/$name.out" 2>&1
    code=$?
    echo "gpu-ras: fabtrack ras status --format $form: exit $code"
    ((code == 0)) || fail "ras status --format $form exited $code (see $name.out)"
  done
  # A frozen process: its RAS thread cannot answer either.
  kill -STOP "$job_pid"
  "$fabtrack" ras status --host "$ras_host" --port "$ras_port" --timeout "${GPU_RAS_FROZEN_S:-5}" \
    >"$out/ras_status_frozen.out" 2>&1
  code=$?
  kill -CONT "$job_pid"
  echo "gpu-ras: fabtrack ras status on a frozen job: exit $code"
  ((code == 3)) || fail "a frozen job gave exit $code, not 3 (see ras_status_frozen.out)"
fi
stop_job
trap - EXIT
if [[ -n ${OUT:-} ]]; then
  tar -czf "$OUT/gpu-ras.tar.gz" -C "$out" .
  cp "$out"/*.out "$OUT/" 2>/dev/null
fi
if ((status == 0)); then verdict=PASSED; else verdict=FAILED; fi
echo "gpu-ras: $verdict; output in $out"
exit $status
