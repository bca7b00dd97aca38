#!/usr/bin/env bash
# Generate a folder of Markdown notes for the sync timings in BENCHMARKS.md ("Notes folder
# sync"): N notes (default 1000) under DIR, in 10 project subfolders, a third of them daily
# notes (`2023-MM-DD Standup.md`), the rest with YAML front matter (date, tags, aliases);
# each a title and 3 short paragraphs naming people, projects and places. Deterministic:
# the same N gives the same bytes, so a re-run over an existing folder changes nothing.
#
#   scripts/gen-notes.sh DIR [N]
set -euo pipefail

dir="${1:?usage: scripts/gen-notes.sh DIR [N]}"
n="${2:-1000}"
people=("Maya Okafor" "Jonas Berg" "Priya Shah" "Tomás Silva" "Lena Fischer" "Sam Carter" "Hannah Kim" "Omar Haddad")
projects=(Atlas Heron Lisbon Quarry Beacon Juniper Falcon Meridian Orchid Tundra)
verbs=("reviewed the rollout plan for" "found a regression in" "wrote the migration notes for" "asked for more time on"
       "demoed the new dashboard of" "moved the deadline of" "paired on the flaky tests of" "signed off the budget of")

for ((i = 0; i < n; i++)); do
  p=${projects[i % 10]}
  sub="$dir/$(echo "$p" | tr '[:upper:]' '[:lower:]')"
  mkdir -p "$sub"
  month=$(( (i / 28) % 12 + 1 ))
  day=$(( i % 28 + 1 ))
  date=$(printf '2023-%02d-%02d' "$month" "$day")
  a=${people[i % 8]}
  b=${people[(i * 3 + 1) % 8]}
  v1=${verbs[i % 8]}
  v2=${verbs[(i * 5 + 3) % 8]}
  body="Note $i about $p. $a $v1 $p, and $b $v2 ${projects[(i + 3) % 10]}.

$b met $a on $date to go through the open questions: the $p owners want a decision by the
end of the month, and the ${projects[(i + 7) % 10]} team is waiting on it.

Follow-up $i: $a will write it down, $b checks the numbers (ticket $p-$((i * 7 % 1000)))."
  if (( i % 3 == 0 )); then
    file="$sub/$date Standup $i.md"
    printf '# Standup %s\n\n%s\n' "$i" "$body" > "$file"
  else
    file="$sub/note-$i.md"
    printf -- '---\ndate: %s\ntags: [%s, notes]\naliases: [%s note %s]\n---\n# %s notes %s\n\n%s\n' \
      "$date" "$(echo "$p" | tr '[:upper:]' '[:lower:]')" "$p" "$i" "$p" "$i" "$body" > "$file"
  fi
done
echo "wrote $n notes under $dir" >&2
