#!/bin/sh
# fuzz_report.sh FUZZER FINDING [libFuzzer flags...]: replays one finding of `make fuzz` with
# every API call traced (WGT_FUZZ_TRACE=1) and prints the trace's end, then a digest: the
# finding's bytes as base64, the last calls before the report, the report's first line, the
# first frames of its stack and its SUMMARY line. The digest comes last because a CI log is
# often kept only by its tail, and the finding's file does not outlive the machine; the
# bytes and the stack are what it takes to reproduce it elsewhere (base64 -d > f; FUZZER f).
# Environment (WGT_BACKEND, ASAN_OPTIONS, ...) passes through to the replay.
#
# fuzz_report.sh --log LOG: the digest of the fuzzing run's own output. A finding that does
# not come back on replay (one that depends on timing, or happened outside an input: at
# startup, in a driver's thread, at exit, where libFuzzer saves an empty input) is known
# only from what the run itself printed, so `make fuzz` keeps that output and shows its
# digest too.

# digest LOG: the report's first line, its stack's first frames and its SUMMARY, plus the
# fuzzer's own messages (contract violations, contexts it could not create).
digest() {
	grep -m 3 -E '^fuzz_api: |^fuzz_files: ' "$1" | cut -c 1-240
	grep -m 1 -E '^==[0-9]+== ?(ERROR|WARNING)|runtime error:|deadly signal' "$1" | cut -c 1-240
	# The report's first stack up to libFuzzer's own frames, shortened to "#N function file:line".
	awk '/^==[0-9]+== ?ERROR|runtime error:|deadly signal/ { on = 1 } on && / in fuzzer::/ { exit }
		on && /^    #[0-9]+ / { print; n++ } on && n && /^$/ { exit } n >= 12 { exit }' "$1" |
		sed -E -e 's/^ +(#[0-9]+) 0x[0-9a-f]+ in /\1 /' -e 's/ \(BuildId: [0-9a-f]+\)//' | cut -c 1-200
	grep -m 1 '^SUMMARY:' "$1" | cut -c 1-240
}

if [ "$1" = --log ]; then
	echo "fuzz: ---- digest of the fuzzing run's own output ($2) ----"
	grep -m 1 'Test unit written to' "$2" | cut -c 1-240
	digest "$2" | sed 's/^/fuzz: run: /'
	exit 0
fi

fuzzer=$1
finding=$2
shift 2
log=$(mktemp)
if WGT_FUZZ_TRACE=1 "$fuzzer" "$@" "$finding" > "$log" 2>&1; then reproduced=0; else reproduced=1; fi
grep -v '^INFO' "$log" | tail -n 200
echo "fuzz: ---- digest of $finding (replay: WGT_BACKEND=${WGT_BACKEND:-auto} $fuzzer FILE) ----"
echo "fuzz: bytes (base64): $(base64 -w0 "$finding")"
if [ "$reproduced" = 0 ]; then
	echo "fuzz: the replay passed: the finding did not come back (the run's own report follows)"
fi
# The calls traced before the sanitizer spoke (lines up to the first "==PID==" report line).
awk '/^==[0-9]+==/ { exit } !/^INFO/ && !/^(#|MS:|stat::|Executed|=+$)/ && !/: Running [0-9]+ inputs/ { print }' "$log" | tail -n 4 |
	cut -c 1-240 | sed 's/^/fuzz: call: /'
digest "$log"
rm -f "$log"
