#!/usr/bin/env bash
# tests/setup/check_help_defaults.sh BIN PROGRAM... — every flag that --help lists (but --help
# itself) states its default as "(default: ...)". A flag's entry runs from its "  --name" line to
# the next one, so a description moved to its own line still counts.
set -euo pipefail
bin=$1; shift
status=0
for prog in "$@"; do
  help=$("$bin/$prog" --help) || { echo "$prog --help exited non-zero"; status=1; continue; }
  flags=0
  while IFS= read -r entry; do
    name=${entry%% *}
    [[ "$name" == "--help" ]] && continue
    flags=$((flags + 1))
    [[ "$entry" == *"(default: "* ]] || { echo "$prog: $name shows no default: $entry"; status=1; }
  done < <(printf '%s\n' "$help" | awk '/^  --/ { if (e) print e; e = substr($0, 3); next }
                                        e && /^   / { sub(/^ +/, " "); e = e $0 } END { if (e) print e }')
  [[ $flags -gt 0 ]] || { echo "$prog: --help lists no flags"; status=1; }
  echo "$prog: $flags flags, each with its default"
done
exit $status
