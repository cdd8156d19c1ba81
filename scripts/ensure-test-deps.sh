#!/usr/bin/env bash
# Makes sure the system tools the tests drive for real are installed, installing the missing
# ones from Debian packages. Does nothing (and needs no network or root) when all are present,
# so `npm test` and .ci/run can call it every time.
#
#   openssl        openssl ts / cms: local timestamp authority, signature cross-checks
#   poppler-utils  pdfsig: independent check of signed PDFs
#   softhsm2       SoftHSM2 PKCS#11 module and softhsm2-util: the test token and the server HSM
#   chromium       headless browser for the signing pages
#   qpdf           PDF signing tests: object-stream, linearized and encrypted variants, qpdf --check
#   libreoffice-writer-nogui  soffice --headless: .docx contract uploads converted to PDF
#   libnss3-tools  certutil: the NSS database that makes pdfsig trust the test CA
#   opencryptoki   pkcsslotd and its software token, which really locks a user PIN (pinLocked test)
#   opensc         pkcs11-tool: writes test tokens as the agent's docs tell developers (key discovery test)
#   sqlite3        the operator's command-line tool: the database must open in it (Debian 12: 3.40)
#   postgresql     initdb / pg_ctl: the PostgreSQL server every database test also runs on
#   systemd        systemd-analyze verify / security: the unit in deploy/ (works without systemd as PID 1)
set -euo pipefail

# Debian package -> the command that shows it is installed.
packages=(openssl poppler-utils softhsm2 chromium qpdf libreoffice-writer-nogui libnss3-tools opencryptoki opensc sqlite3 systemd postgresql)
# Full path for pkcsslotd: /usr/sbin is often not on a user's PATH.
commands=(openssl pdfsig softhsm2-util chromium qpdf soffice certutil /usr/sbin/pkcsslotd pkcs11-tool sqlite3 systemd-analyze /usr/lib/postgresql/15/bin/initdb)

missing=()
for i in "${!packages[@]}"; do
  command -v "${commands[$i]}" >/dev/null 2>&1 || missing+=("${packages[$i]}")
done
[ "${#missing[@]}" -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-test-deps: missing ${missing[*]}; install them with your system's package manager" >&2
  exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "ensure-test-deps: missing ${missing[*]}; run as root or install them: apt-get install ${missing[*]}" >&2
    exit 1
  fi
  sudo=(sudo)
fi

echo "ensure-test-deps: installing ${missing[*]}" >&2
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600)
"${apt[@]}" update
"${apt[@]}" install -y --no-install-recommends "${missing[@]}"
