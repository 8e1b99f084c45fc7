#!/usr/bin/env bash
# Checks that shipped binaries are self-contained (HP_SELF_CONTAINED):
#   check-self-contained.sh FILE...
# A shared library or executable passes when every NEEDED entry is one of
# glibc's own (libc, libm, libpthread, libdl, librt, the loader) and no
# GLIBC_ symbol version it needs is newer than HP_MAX_GLIBC (2.17). A static
# archive passes when a shared object made of all of it links with -z defs
# against glibc's libraries alone (host architecture only: other archives
# are skipped, said so). readelf reads any architecture. Exit 1 on a failure.
set -euo pipefail
max=${HP_MAX_GLIBC:-2.17}
allowed='^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$'
[ $# -gt 0 ] || { echo "usage: $0 FILE..." >&2; exit 2; }
fail=0
for f in "$@"; do
	[ -e "$f" ] || { echo "FAIL $f: not found"; fail=1; continue; }
	if [ "$(head -c 7 "$f")" = '!<arch>' ]; then
		machine=$(readelf -h "$f" 2>/dev/null | sed -n 's/ *Machine: *//p' | sort -u)
		host=$(readelf -h /bin/sh | sed -n 's/ *Machine: *//p')
		if [ "$machine" != "$host" ]; then
			echo "skip $f: archive for '$machine', link check runs on '$host' only"
			continue
		fi
		tmp=$(mktemp -d)
		if ${CC:-cc} -shared -o "$tmp/all.so" -Wl,--whole-archive "$f" -Wl,--no-whole-archive \
			-Wl,-z,defs -lm -ldl -lpthread -lrt 2>"$tmp/err"; then
			echo "ok   $f: links with -lm -ldl -lpthread -lrt alone"
		else
			echo "FAIL $f: needs more than glibc's libraries:"
			grep -o "undefined reference to \`[^']*'" "$tmp/err" | sort -u | head -20 | sed 's/^/       /'
			fail=1
		fi
		rm -rf "$tmp"
		continue
	fi
	bad=$(readelf -dW "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -Ev "$allowed" || true)
	# The versions the file needs from glibc (readelf -V: .gnu.version_r).
	versions=$(readelf -VW "$f" | grep -o 'Name: GLIBC_[0-9.]*' | sed 's/Name: GLIBC_//' | sort -uV)
	newer=$(for v in $versions; do
		[ "$(printf '%s\n%s\n' "$v" "$max" | sort -V | tail -1)" = "$max" ] || echo "GLIBC_$v"
	done)
	top=$(echo "$versions" | tail -1)
	if [ -z "$bad$newer" ]; then
		echo "ok   $f: NEEDED $(readelf -dW "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '); newest GLIBC_${top:-none}"
	else
		echo "FAIL $f:"
		[ -z "$bad" ] || echo "       NEEDED outside glibc: $(echo $bad)"
		[ -z "$newer" ] || echo "       needs glibc newer than $max: $(echo $newer)"
		if [ -n "$newer" ]; then
			# which symbols need them (dynamic symbol table, any architecture)
			readelf --dyn-syms -W "$f" | awk '$7 == "UND" {print $8}' | grep -E "@($(echo $newer | tr ' ' '|'))( |$)" |
				head -10 | sed 's/^/       /'
		fi
		fail=1
	fi
done
exit $fail
