#!/usr/bin/env bash
# The library's ABI surface: libheapprobe.so's soname and versioned exports,
# and libheapprobe.a's global symbols, each against the public header's
# HP_API functions. Usage: check-exports.sh HEADER SHARED_LIB STATIC_LIB
set -euo pipefail
header=$1 so=$2 ar=$3
fail=0
api=$(grep -v '#define HP_API' "$header" | grep -o 'HP_API [^(]*(' | sed -E 's/.*[ *]([a-z_0-9]+)\($/\1/' | sort -u)
n=$(echo "$api" | wc -l)
[ "$n" -ge 15 ] || { echo "only $n HP_API functions parsed from $header"; exit 1; }

soname=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "libheapprobe.so.0" ] || { echo "soname is '$soname', not libheapprobe.so.0"; fail=1; }

# Defined dynamic symbols: name@@version, no others.
dyn=$(readelf --dyn-syms -W "$so" | awk '$7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK") && $8 != "" {print $8}' | sort -u)
unversioned=$(echo "$dyn" | grep -v '@@HEAPPROBE_0$' | grep -v '^HEAPPROBE_0$' || true)
[ -z "$unversioned" ] || { echo "exported without the HEAPPROBE_0 version: $unversioned"; fail=1; }
names=$(echo "$dyn" | sed 's/@@HEAPPROBE_0$//' | grep -v '^HEAPPROBE_0$' | sort -u)
want=$(printf '%s\nAgent_OnLoad\nAgent_OnAttach\nAgent_OnUnload\nJava_io_heapprobe_HeapProbe_command0\nJava_io_heapprobe_HeapProbe_info0\n' "$api" | sort -u)
if [ "$names" != "$want" ]; then
	echo "libheapprobe.so exports differ from the header's HP_API functions + Agent_On* + the jar's natives:"
	diff <(echo "$want") <(echo "$names") || true
	fail=1
fi

# The static archive: only the HP_API functions global.
globals=$(nm -g --defined-only "$ar" | awk 'NF == 3 {print $3}' | sort -u)
if [ "$globals" != "$api" ]; then
	echo "libheapprobe.a's global symbols differ from the header's HP_API functions:"
	diff <(echo "$api") <(echo "$globals") | head -20 || true
	fail=1
fi
[ $fail = 0 ] && echo "ok: soname $soname, $(echo "$names" | wc -l) versioned exports, $(echo "$globals" | wc -l) archive globals = $n HP_API functions + 3 Agent_On*"
exit $fail
