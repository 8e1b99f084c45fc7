#!/usr/bin/env bash
# The README's promise, checked: a fresh Debian 12 root file system
# (debootstrap --variant=minbase bookworm), and in it, as root, the README's
# two commands on a clone of this repository's HEAD. Run as root on a
# Debian or Ubuntu host with debootstrap; ~50 min on 2 CPUs.
#
#   bash scripts/fresh-root.sh [ROOT]        # ROOT: /tmp/hp-fresh-root
#   STEPS=demo bash scripts/fresh-root.sh    # then STEPS=test: the two
#                                            # commands at separate times,
#                                            # on the same clone
#
# The root gets only what the machine it stands for would have from its
# surroundings: /proc, /sys, /dev, a tmpfs /dev/shm, itself as a mount
# point (as a machine's / is: unshare needs it), the host's resolv.conf,
# and the host's network settings: its local CA certificates
# (/usr/local/share/ca-certificates, for a network that intercepts TLS;
# setup.sh's ca-certificates install picks them up) and its apt.conf.d
# files that set Acquire:: options (proxies, mirrors of dated snapshots).
# Everything else comes from the README's commands. Logs: ROOT.demo.log,
# ROOT.test.log; exits with the test command's status.
set -uo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
R=${1:-/tmp/hp-fresh-root}
STEPS=${STEPS:-demo,test}
step() { [[ ",$STEPS," == *,$1,* ]]; }
[ "$(id -u)" = 0 ] || { echo "fresh-root: run as root (debootstrap, chroot, mounts)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "fresh-root: no debootstrap (apt-get install debootstrap)" >&2; exit 1; }
if [ ! -x "$R/bin/bash" ]; then
	debootstrap --variant=minbase bookworm "$R" http://deb.debian.org/debian >"$R.debootstrap.log" 2>&1 ||
		{ echo "fresh-root: debootstrap failed: $R.debootstrap.log" >&2; exit 1; }
fi
mountpoint -q "$R" || mount --bind "$R" "$R"
for d in proc sys dev dev/pts; do mountpoint -q "$R/$d" || mount --bind "/$d" "$R/$d"; done
mkdir -p "$R/dev/shm"; mountpoint -q "$R/dev/shm" || mount -t tmpfs tmpfs "$R/dev/shm"
cp /etc/resolv.conf "$R/etc/resolv.conf"
mkdir -p "$R/usr/local/share/ca-certificates"
cp /usr/local/share/ca-certificates/*.crt "$R/usr/local/share/ca-certificates/" 2>/dev/null
for f in /etc/apt/apt.conf.d/*; do grep -qs '^[[:space:]]*Acquire::' "$f" && cp "$f" "$R/etc/apt/apt.conf.d/"; done
if step demo; then
	rm -rf "$R/root/heapprobe" && git clone -q "$HERE" "$R/root/heapprobe" || exit 1
elif [ ! -d "$R/root/heapprobe/.git" ]; then
	echo "fresh-root: no clone in $R (STEPS=demo first)" >&2; exit 1
fi
echo "fresh-root: $(git -C "$R/root/heapprobe" log --oneline -1 | cut -c1-72) in $R"
in_root() {
	chroot "$R" /usr/bin/env -i HOME=/root TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/bash -c "cd /root/heapprobe && $1"
}
rc=0
if step demo; then
	in_root 'bash scripts/demo.sh' >"$R.demo.log" 2>&1
	rc=$?
	echo "fresh-root: bash scripts/demo.sh exit $rc ($R.demo.log)"
fi
if step test; then
	in_root 'bash scripts/test.sh' >"$R.test.log" 2>&1
	rc=$?
	echo "fresh-root: bash scripts/test.sh exit $rc ($R.test.log): $(tail -1 "$R.test.log" | cut -c1-200)"
fi
exit $rc
