#!/usr/bin/env bash
# Installs the Debian packages dralloc builds against, only those that are missing.
# Idempotent and silent when everything is present (one dpkg query, no network).
set -euo pipefail

PKGS=(
  build-essential cmake pkg-config
  libjansson-dev        # JSON decode/encode of Kubernetes objects
  libyaml-dev           # YAML input (kubectl get -o yaml, multi-document files)
  libxxhash-dev         # hashing for the intern table and hash maps
  libre2-dev            # RE2: the regex syntax and linear-time matching CEL specifies
  libsimdjson-dev       # simdjson: cluster files parsed several times faster than jansson reads them
  libmicrohttpd-dev     # extender HTTP server
  libgnutls28-dev       # the fake kube-apiserver's https checks client certificates (tests/live)
  openssl               # the live test makes its CA and certificates with the CLI
  libcurl4-openssl-dev  # list+watch client
  libjemalloc-dev       # process allocator for release builds
  libcriterion-dev      # unit tests
  curl                  # the two lines `make run` prints to paste
)
# headless screenshots of the plan report and serve's status page (tests/planner/
# screenshot_test.sh); installed with its recommended packages (fonts among them), as
# the test was verified
EXTRA=(chromium)
[[ -n "${DRALLOC_NO_BROWSER:-}" ]] && EXTRA=()   # image builds (Dockerfile) run no tests

missing=() extra=()
for p in "${PKGS[@]}"; do
  st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$st" == "install ok installed" ]] || missing+=("$p")
done
for p in "${EXTRA[@]}"; do
  st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$st" == "install ok installed" ]] || extra+=("$p")
done
[[ ${#missing[@]} -eq 0 && ${#extra[@]} -eq 0 ]] && exit 0

echo "deps: installing ${missing[*]} ${extra[*]}" >&2
SUDO=""
[[ $(id -u) -eq 0 ]] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
[[ ${#missing[@]} -eq 0 ]] || $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
[[ ${#extra[@]} -eq 0 ]] || $SUDO apt-get install -y -qq "${extra[@]}" >/dev/null
