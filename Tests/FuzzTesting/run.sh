#!/usr/bin/env bash
# Bounded libFuzzer runs of FuzzJWS (JWS / JSON decoding and App Store signed-data verification), FuzzJSON (the
# strict JSON reader alone) and FuzzAppRequest (the app endpoints' headers and purchase report bodies), one after
# the other.
#
#   bash Tests/FuzzTesting/run.sh            # from anywhere; FUZZ_SECONDS (default 45) bounds the fuzzing itself:
#                                      # half to FuzzJWS, a quarter each to FuzzJSON and FuzzAppRequest
#                                      # FUZZ_SANITIZERS=fuzzer builds without ASan (default fuzzer,address)
#
# Builds the harnesses with -sanitize=fuzzer,address (falling back to -sanitize=fuzzer alone, with a notice, if
# that cannot link), fuzzes a temporary copy of each one's corpus/<name>/ and exits non-zero on a crash, sanitizer
# report, leak, OOM (-malloc_limit_mb / -rss_limit_mb) or slow input (-timeout). Inputs that failed are kept in
# Tests/FuzzTesting/.build/fuzz-artifacts/<harness>/ and printed as base64. The build is incremental, so later runs
# only fuzz.
set -euo pipefail

FUZZ_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SECONDS_BUDGET=${FUZZ_SECONDS:-45}
SWIFT=$(command -v swift || echo /opt/swift/usr/bin/swift)
TOOLCHAIN_BIN=$(dirname "$(readlink -f "$SWIFT")")
BUILD_DIR=$FUZZ_DIR/.build
ARTIFACTS=$BUILD_DIR/fuzz-artifacts  # not artifacts/: SwiftPM keeps binary targets there
mkdir -p "$BUILD_DIR"

# ld.gold prints one harmless "Cannot export local symbol '__asan_report_*_asm'" warning per ASan stub.
quiet() { grep -v "Cannot export local symbol" "$1" | tail -n 40 >&2 || true; }

build() {  # build <log> <extra swift build args...>
    local log=$1
    shift
    "$SWIFT" build --package-path "$FUZZ_DIR" -c debug -Xswiftc -parse-as-library "$@" >"$log" 2>&1
}

# FUZZ_SANITIZERS=fuzzer skips ASan; each sanitizer set has its own scratch path so neither rebuilds the other.
scratch_for() { [[ $1 == fuzzer,address ]] && echo "$BUILD_DIR" || echo "$BUILD_DIR/sanitize-${1//,/-}"; }
sanitizers=${FUZZ_SANITIZERS:-fuzzer,address}
if ! build "$BUILD_DIR/build.log" --scratch-path "$(scratch_for "$sanitizers")" -Xswiftc -sanitize="$sanitizers"; then
    quiet "$BUILD_DIR/build.log"
    if [[ $sanitizers != fuzzer,address ]]; then
        echo "fuzz: build failed" >&2
        exit 1
    fi
    echo "fuzz: build with -sanitize=fuzzer,address failed; retrying with -sanitize=fuzzer only (no ASan)" >&2
    sanitizers=fuzzer
    if ! build "$BUILD_DIR/build-fuzzer.log" --scratch-path "$(scratch_for "$sanitizers")" -Xswiftc -sanitize=fuzzer; then
        quiet "$BUILD_DIR/build-fuzzer.log"
        echo "fuzz: build failed" >&2
        exit 1
    fi
fi
bin_dir=$("$SWIFT" build --package-path "$FUZZ_DIR" -c debug --scratch-path "$(scratch_for "$sanitizers")" --show-bin-path)

work=$(mktemp -d "${TMPDIR:-/tmp}/storesync-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
rm -rf "$ARTIFACTS"

# The Swift runtime's own backtracer would race libFuzzer's crash handler (and trips ASan doing so).
export SWIFT_BACKTRACE=enable=no
if [[ -x $TOOLCHAIN_BIN/llvm-symbolizer ]]; then export ASAN_SYMBOLIZER_PATH=$TOOLCHAIN_BIN/llvm-symbolizer; fi

# fuzz <harness> <corpus and dictionary name> <seconds>: one bounded run; prints its line, returns non-zero on failure.
fuzz() {
    local harness=$1 name=$2 budget=$3
    local corpus=$work/$name artifacts=$ARTIFACTS/$harness log=$BUILD_DIR/fuzz-$name.log
    mkdir -p "$corpus" "$artifacts"
    cp "$FUZZ_DIR/corpus/$name"/* "$corpus/"
    local start rc=0
    start=$(date +%s.%N)
    "$bin_dir/$harness" -max_total_time="$budget" -max_len=16384 -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 \
        -dict="$FUZZ_DIR/$name.dict" -artifact_prefix="$artifacts/" -print_final_stats=1 "$corpus" >"$log" 2>&1 || rc=$?
    local elapsed runs rate
    elapsed=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    if [[ -z $runs ]]; then runs=$(sed -n 's/^#\([0-9]*\).*/\1/p' "$log" | tail -n 1); fi
    runs=${runs:-0}
    rate=$(awk -v n="$runs" -v s="$elapsed" 'BEGIN { printf "%d", (s > 0 ? n / s : 0) }')

    if ((rc == 0)) && ! grep -q -E "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)" "$log"; then
        echo "fuzz: $harness: $runs executions in $elapsed s ($rate/s, $sanitizers), no crash"
        return 0
    fi

    # Failure: the sanitizer / libFuzzer report, then each input that triggered it.
    echo "fuzz: $harness FAILED (exit $rc) after $runs executions in $elapsed s ($sanitizers); log: $log" >&2
    # (From the first report line on, minus the Swift runtime's unsymbolized "Current stack trace" frames, since the
    # sanitizer's symbolized stack follows.)
    awk '/^==[0-9]+==|Fatal error: / { p = 1 }
         p && !/^Current stack trace:$/ && !/^[0-9]+ +[^ ]+ +0x[0-9a-f]+ /' "$log" | head -n 60 >&2
    local artifact
    for artifact in "$artifacts"/*; do
        [[ -f $artifact ]] || continue
        echo "fuzz: input $artifact ($(wc -c <"$artifact") bytes), base64:" >&2
        base64 -w 0 "$artifact" >&2
        echo >&2
    done
    return $((rc == 0 ? 1 : rc))
}

# Both run whatever the first found, so one report names every harness that failed.
jws_seconds=$(((SECONDS_BUDGET + 1) / 2))
quarter=$(((SECONDS_BUDGET - jws_seconds + 1) / 2))
((quarter >= 1)) || quarter=1
status=0
fuzz FuzzJWS jws "$jws_seconds" || status=$?
fuzz FuzzJSON json "$quarter" || status=$?
fuzz FuzzAppRequest app "$quarter" || status=$?
exit "$status"
