#!/usr/bin/env bash
# check-layers.sh — checks that te's code keeps to its layers (lib/layers.txt).
#
#   scripts/check-layers.sh [--root DIR]            every #include "..." of every layer's folder
#   scripts/check-layers.sh --objects FILE          and the symbols the built objects use
#
# Include rules, for a file in the folder of layer L:
#   "te/NAME"        a public header: always allowed
#   "NAME"           a header of L's own folder (it must be there)
#   "M/NAME"         a header of layer M, allowed when M is L or a layer L may use
#   anything with ".." (climbing out of the folder would slip past the include paths), or a first
#   component that is no layer: refused.
# Every folder under lib/ must be a layer of the table, so a new folder cannot go unchecked.
# --objects FILE (CTest layers.symbols; FILE lists "layer object..." per line, written by
# cmake/TeLayers.cmake): every symbol a layer's objects use from another layer's objects must
# come from a layer it may use (a call up through a public te_* function has no include).
# Prints each violation as "file:line: ..." and exits 1 if there was one; 0 and a summary if not.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
objects=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --root) root="$(cd "$2" && pwd)"; shift 2 ;;
    --objects) objects="$2"; shift 2 ;;
    -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "check-layers: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

table="$root/lib/layers.txt"
[[ -f "$table" ]] || { echo "check-layers: no layer table $table" >&2; exit 2; }

declare -A folder_of uses_of layer_of_folder
layers=()
while read -r name folder rest; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  layers+=("$name")
  folder_of[$name]="$folder"
  uses_of[$name]=" $rest "
  layer_of_folder[$folder]="$name"
done <"$table"

errors=0
fail() {
  echo "$1"
  errors=$((errors + 1))
}

# Every used layer exists, and no layer uses itself or a layer listed after it (the table is
# bottom first, so the order is the layering and a cycle cannot be written).
for ((i = 0; i < ${#layers[@]}; i++)); do
  l="${layers[$i]}"
  for m in ${uses_of[$l]}; do
    pos=-1
    for ((j = 0; j < ${#layers[@]}; j++)); do [[ "${layers[$j]}" == "$m" ]] && pos=$j; done
    if ((pos < 0)); then
      fail "lib/layers.txt: layer $l uses '$m', which is not a layer"
    elif ((pos >= i)); then
      fail "lib/layers.txt: layer $l uses $m, which is not below it in the table"
    fi
  done
done

for dir in "$root"/lib/*/; do
  f="lib/$(basename "$dir")"
  [[ -n "${layer_of_folder[$f]:-}" ]] || fail "$f/: a folder of lib/ that is not a layer of lib/layers.txt"
done

# ---------------------------------------------------------------- includes
nincludes=0
for l in "${layers[@]}"; do
  f="${folder_of[$l]}"
  [[ -d "$root/$f" ]] || { fail "lib/layers.txt: layer $l: no folder $f"; continue; }
  files=()
  for file in "$root/$f"/*.c "$root/$f"/*.h "$root/$f"/*.def; do
    [[ -f "$file" ]] && files+=("${file#"$root"/}")
  done
  ((${#files[@]})) || continue
  # One "file:line:path" per include of the folder's files.
  while IFS=: read -r rel line inc; do
    nincludes=$((nincludes + 1))
    if [[ "$inc" == *..* ]]; then
      fail "$rel:$line: \"$inc\": climbs out of the folder; include another layer's header as \"<layer>/<name>\""
    elif [[ "$inc" == te/* ]]; then
      [[ -f "$root/include/$inc" ]] || fail "$rel:$line: \"$inc\": no such public header in include/te/"
    elif [[ "$inc" != */* ]]; then
      [[ -f "$root/$f/$inc" ]] ||
        fail "$rel:$line: \"$inc\": not in $f/; include another layer's header as \"<layer>/<name>\""
    else
      m="${inc%%/*}"
      if [[ -z "${folder_of[$m]:-}" ]]; then
        fail "$rel:$line: \"$inc\": '$m' is not a layer (lib/layers.txt)"
      elif [[ "$m" != "$l" && "${uses_of[$l]}" != *" $m "* ]]; then
        allowed="$(echo ${uses_of[$l]})"
        fail "$rel:$line: \"$inc\": layer $l may not use layer $m (it may use: ${allowed:-no other layer})"
      elif [[ ! -f "$root/${folder_of[$m]}/${inc#*/}" ]]; then
        fail "$rel:$line: \"$inc\": no such header in ${folder_of[$m]}/"
      fi
    fi
  done < <(cd "$root" && grep -H -n -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "${files[@]}" |
           sed -E 's/^([^:]*):([0-9]+):.*include[[:space:]]*"([^"]*)".*/\1:\2:\3/')
done

# ---------------------------------------------------------------- symbols
nsyms=0
if [[ -n "$objects" ]]; then
  [[ -f "$objects" ]] || { echo "check-layers: no object list $objects" >&2; exit 2; }
  for obj in $(cut -d' ' -f2- "$objects"); do
    [[ -f "$obj" ]] || { echo "check-layers: $obj is missing: build the layers first" >&2; exit 2; }
  done
  uses_list=""
  for l in "${layers[@]}"; do uses_list+="$l:${uses_of[$l]};"; done
  # nm -P -A: "object: symbol type [value size]" for every global symbol of every object.
  # shellcheck disable=SC2046
  report="$(nm -P -A -g $(cut -d' ' -f2- "$objects") | awk -v uses="$uses_list" -v list="$objects" '
    BEGIN {
      n = split(uses, rows, ";")
      for (i = 1; i <= n; i++) {
        split(rows[i], kv, ":"); m = split(kv[2], us, " ")
        for (j = 1; j <= m; j++) may[kv[1] SUBSEP us[j]] = 1
      }
      while ((getline row < list) > 0) {
        k = split(row, w, " ")
        for (j = 2; j <= k; j++) layer_of[w[j]] = w[1]
      }
    }
    {
      obj = substr($1, 1, length($1) - 1); sym = $2; type = $3
      if (!(obj in layer_of)) next
      if (type == "U") { nu++; uobj[nu] = obj; usym[nu] = sym }
      else if (type !~ /^[vw]$/) def[sym] = layer_of[obj]
    }
    END {
      for (i = 1; i <= nu; i++) {
        l = layer_of[uobj[i]]; m = def[usym[i]]
        if (m == "" || m == l || ((l SUBSEP m) in may)) continue
        o = uobj[i]; sub(/.*\//, "", o)
        printf "%s: layer %s uses %s of layer %s, which it may not use\n", o, l, usym[i], m
      }
      print "uses " nu + 0
    }')"
  nsyms="$(sed -n 's/^uses //p' <<<"$report")"
  while IFS= read -r v; do
    [[ -n "$v" ]] && fail "$v"
  done < <(grep -v '^uses ' <<<"$report" || true)
fi

if ((errors)); then
  echo "check-layers: $errors violation(s) of the layers in lib/layers.txt" >&2
  exit 1
fi
echo "check-layers: ${#layers[@]} layers, $nincludes includes${objects:+, $nsyms symbol uses}: all allowed"
