#!/bin/sh
# Runs the end-to-end scaling sweep of BENCHMARKS.md with bin/glle-bench (built by make) unless
# its JSON reports already exist in $BENCH_OUT (default out/bench); SWEEP=1 forces a rerun.
#   lle at SWEEP_SIZES (default 10k, 100k, 200k, 1M, 2M) with -peers (scikit-learn, if installed;
#   PEER_REPEAT (default 5) interleaved runs of each side, medians reported);
#   em and direct with SWEEP_GENERATIONS (default 3) generations at SWEEP_GEN_SIZES (default 200k, 1M),
#   GEN_REPEAT (default 5) runs of each, the median (by generation-to-fit ratio) reported (single
#   runs' ratios spread from 19% to 56% at n = 200k on this shared machine, so three were too few).
# The runs are sequential (one child process each): never start it beside another heavy job.
# A failed sweep (glle-bench exits non-zero, e.g. when a run failed) stops the script with its
# status, before benchmd can read it, and its report is moved to NAME.json.failed so the next
# call reruns it instead of skipping it.
set -eu
# go from the PATH, else from the default install location the README names.
PATH="$PATH:/usr/local/go/bin"

# sweep JSON CMD...: runs CMD (a glle-bench bench command writing -json JSON) with its output
# shown and copied to JSON's .md. /bin/sh has no pipefail, so CMD's status travels through a
# file: the pipeline's own status is tee's.
sweep() {
  json=$1
  shift
  status=$(mktemp)
  { if "$@"; then c=0; else c=$?; fi; echo "$c" >"$status"; } | tee "${json%.json}.md"
  code=$(cat "$status")
  rm -f "$status"
  if [ "$code" != 0 ]; then
    [ ! -e "$json" ] || mv -f "$json" "$json.failed"
    echo "sweep.sh: $* failed with status $code" >&2
    exit "$code"
  fi
}
out=${BENCH_OUT:-out/bench}
sizes=${SWEEP_SIZES:-10000,100000,200000,1000000,2000000}
gen_sizes=${SWEEP_GEN_SIZES:-200000,1000000}
mkdir -p "$out"
if [ "${SWEEP:-0}" = 1 ] || [ ! -s "$out/sweep_lle.json" ]; then
  sweep "$out/sweep_lle.json" ./bin/glle-bench bench -sizes "$sizes" -methods lle -peers -peer-repeat "${PEER_REPEAT:-5}" -json "$out/sweep_lle.json"
fi
if [ "${SWEEP:-0}" = 1 ] || [ ! -s "$out/sweep_gen.json" ]; then
  sweep "$out/sweep_gen.json" ./bin/glle-bench bench -sizes "$gen_sizes" -methods em,direct -generations "${SWEEP_GENERATIONS:-3}" -repeat "${GEN_REPEAT:-5}" -json "$out/sweep_gen.json"
fi
if [ "${SWEEP:-0}" = 1 ] || [ ! -s "$out/sweep_lle_purego.json" ]; then
  CGO_ENABLED=0 go build -tags purego -o bin/glle-bench-purego ./cmd/glle-bench
  sweep "$out/sweep_lle_purego.json" ./bin/glle-bench-purego bench -sizes "${SWEEP_PUREGO_SIZES:-100000,1000000}" -methods lle -json "$out/sweep_lle_purego.json"
fi
