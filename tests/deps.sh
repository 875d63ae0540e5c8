#!/bin/sh
# tests/deps.sh - install what dlplan needs to build and test, if missing.
#
# Uses apt-get (through sudo when not root).  Set DLPLAN_NO_INSTALL=1 to
# only report what is missing.  python3-torch (PyTorch and torchrun) is for
# tests/cli/train.sh, the executor's tests.  Extra package groups:
# "sh tests/deps.sh e2e" adds Slurm, munge and python3-torch for the
# end-to-end launcher tests.

set -u
need="make gcc pkg-config libglpk-dev libcsv-dev libjansson-dev nettle-dev glpk-utils \
coinor-cbc mandoc libxml2-utils valgrind strace zsh fish bash-completion \
python3-torch"
case "${1:-}" in
e2e) need="slurm-wlm munge python3-torch" ;;
esac

missing=""
for p in $need; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
	    missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "dlplan: installing missing packages:$missing"
if [ -n "${DLPLAN_NO_INSTALL:-}" ]; then
	echo "dlplan: DLPLAN_NO_INSTALL is set; install them and retry" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "dlplan: apt-get not found; install:$missing" >&2
	exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
	sudo=""
elif command -v sudo >/dev/null 2>&1; then
	sudo="sudo"
else
	echo "dlplan: not root and no sudo; install:$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null || {
	echo "dlplan: apt-get update failed" >&2
	exit 1
}
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null || {
	echo "dlplan: apt-get install failed for:$missing" >&2
	exit 1
}
echo "dlplan: installed:$missing"
