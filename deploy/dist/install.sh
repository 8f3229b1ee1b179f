#!/bin/sh
# Installs cgov @VERSION@ from this release archive (scripts/make-dist wrote it): checks every
# file against SHA256SUMS and the host's glibc (at least @GLIBC@) before anything is copied, then
# installs under PREFIX (default /usr/local), the systemd unit's paths pointed there. The admin's
# existing etc/default/cgov is kept. Nothing is started: the last lines say what to run.
#
# Usage: ./install.sh [--prefix DIR] [--destdir DIR]   (--destdir: stage under DIR, as packagers do)
set -eu

prefix=/usr/local
destdir=
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
    --destdir) destdir=${2:?--destdir needs a directory}; shift 2 ;;
    -h | --help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument $1 (--prefix DIR, --destdir DIR)" >&2; exit 2 ;;
  esac
done
case "$prefix" in /*) ;; *) echo "install.sh: --prefix must be absolute: $prefix" >&2; exit 2 ;; esac
# The prefix is written into the unit's ExecStart: plain path characters only.
case "$prefix" in
  *[!A-Za-z0-9._/+@-]*)
    echo "install.sh: --prefix may hold only letters, digits and . _ / + @ -" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)

# Every file as released.
if ! (cd "$here" && sha256sum --quiet -c SHA256SUMS); then
  echo "install.sh: the archive's files do not match SHA256SUMS: nothing installed" >&2
  exit 1
fi
# The host's glibc: the binary needs @GLIBC@ or later.
have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
if [ -z "$have" ]; then
  echo "install.sh: not a glibc system (getconf GNU_LIBC_VERSION): cgov needs glibc @GLIBC@" >&2
  exit 1
fi
if [ "$(printf '%s\n%s\n' "@GLIBC@" "$have" | sort -V | sed -n 1p)" != "@GLIBC@" ]; then
  echo "install.sh: this host's glibc is $have; cgov @VERSION@ needs @GLIBC@ or later" >&2
  exit 1
fi

if [ "$prefix" = /usr ]; then etc=/etc; else etc=$prefix/etc; fi
target=$destdir$prefix
mkdir -p "$target"
for dir in bin share lib; do
  [ -d "$here/$dir" ] && cp -R "$here/$dir" "$target/"
done
# The unit's paths: the archive's were /usr/local's.
unit=$target/lib/systemd/system/cgov.service
sed -e "s#/usr/local/bin/cgov#$prefix/bin/cgov#g" -e "s#=-/usr/local/etc/default/cgov#=-$etc/default/cgov#g" \
  "$here/lib/systemd/system/cgov.service" >"$unit"
mkdir -p "$destdir$etc/default"
if [ -e "$destdir$etc/default/cgov" ]; then
  echo "install.sh: kept $etc/default/cgov (yours); the release's is $prefix/share/cgov/cgov.default"
  mkdir -p "$target/share/cgov"
  cp "$here/etc/default/cgov" "$target/share/cgov/cgov.default"
else
  cp "$here/etc/default/cgov" "$destdir$etc/default/cgov"
fi
echo "install.sh: cgov @VERSION@ installed under $prefix"
echo "  the daemon: ln -s $prefix/lib/systemd/system/cgov.service /etc/systemd/system/ &&"
echo "              systemctl daemon-reload && systemctl enable --now cgov"
echo "  a report:   $prefix/bin/cgov report --since 7d"
