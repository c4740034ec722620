# shellcheck shell=bash
# cri-lib.sh: a minimal CRI (runtime.v1) client in bash, sourced by the e2e harness.
#
# Why it exists: Debian 12 has no crictl package, yet the harness must speak CRI
# to tear pods down the way the kubelet would (StopPodSandbox runs CNI DEL, which
# releases the IP, removes portmap/masquerade iptables rules and the netns) and to
# smoke-test a pod end to end without depending on the project's own CRI client.
#
# How: gRPC is HTTP/2 with length-prefixed protobuf bodies. `protoc --encode`
# turns a text-format request into bytes (schema: cri-mini.proto beside this
# file), curl sends it over the containerd unix socket with HTTP/2 prior
# knowledge, and `protoc --decode` prints the reply in text format.
#
# Contract:
#   CRI_SOCK must name the containerd socket before any cri_* call.
#   cri_call SERVICE METHOD 'TEXT-REQUEST'  prints the text-format response;
#     returns 1 with "grpc-status N: message" on stderr when the call fails.
#   cri_available  returns 0 when protoc and an HTTP/2-capable curl exist (and
#     KUBELET_E2E_NO_CRI is unset).
# Not thread-safe in any interesting sense; each call uses its own temp dir.

CRI_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CRI_PROTO=cri-mini.proto
: "${CRI_TIMEOUT:=120}"

cri_available() {
  # KUBELET_E2E_NO_CRI=1 forces the ctr-only paths (to test them).
  [[ -z "${KUBELET_E2E_NO_CRI:-}" ]] || return 1
  command -v protoc >/dev/null 2>&1 || return 1
  command -v curl >/dev/null 2>&1 || return 1
  curl --version 2>/dev/null | grep -qw HTTP2
}

# _cri_be32 N: the 4-byte big-endian length of a gRPC message frame.
_cri_be32() {
  local n=$1
  # shellcheck disable=SC2059 # the format is built from hex escapes on purpose
  printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(((n >> 24) & 255)) $(((n >> 16) & 255)) \
    $(((n >> 8) & 255)) $((n & 255)))"
}

# _cri_urldecode S: grpc-message is percent-encoded.
_cri_urldecode() {
  local s=${1//+/ }
  printf '%b' "${s//%/\\x}"
}

cri_call() {
  local service=$1 method=$2 request=${3:-}
  local tmp rc=0 len status message
  [[ -n ${CRI_SOCK:-} ]] || { echo "cri_call: CRI_SOCK is not set" >&2; return 2; }
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/cri-call.XXXXXX")
  if ! printf '%s' "$request" |
    protoc -I "$CRI_LIB_DIR" --encode="runtime.v1.${method}Request" "$CRI_PROTO" >"$tmp/msg"; then
    echo "cri_call: cannot encode ${method}Request from: $request" >&2
    rm -rf "$tmp"
    return 2
  fi
  len=$(stat -c %s "$tmp/msg")
  { printf '\x00'; _cri_be32 "$len"; cat "$tmp/msg"; } >"$tmp/frame"
  # -D captures both headers and trailers (gRPC puts grpc-status in trailers).
  if ! curl -sS --http2-prior-knowledge --unix-socket "$CRI_SOCK" --max-time "$CRI_TIMEOUT" \
    -H 'content-type: application/grpc' -H 'te: trailers' \
    --data-binary @"$tmp/frame" -D "$tmp/headers" -o "$tmp/reply" \
    "http://localhost/runtime.v1.${service}/${method}"; then
    echo "cri_call: ${service}/${method}: transport error talking to $CRI_SOCK" >&2
    rm -rf "$tmp"
    return 1
  fi
  status=$(tr -d '\r' <"$tmp/headers" | awk -F': ' 'tolower($1)=="grpc-status"{s=$2} END{print s}')
  if [[ "$status" != "0" ]]; then
    message=$(tr -d '\r' <"$tmp/headers" | awk -F': ' 'tolower($1)=="grpc-message"{sub(/^[^:]*: /,""); m=$0} END{print m}')
    echo "cri_call: ${service}/${method}: grpc-status ${status:-missing}: $(_cri_urldecode "$message")" >&2
    rm -rf "$tmp"
    return 1
  fi
  # Skip the 5-byte frame header (compressed flag + length); replies are unary.
  tail -c +6 "$tmp/reply" |
    protoc -I "$CRI_LIB_DIR" --decode="runtime.v1.${method}Response" "$CRI_PROTO" || rc=$?
  rm -rf "$tmp"
  return $rc
}

# cri_field NAME: first `NAME: "value"` (or bare value) in a text-format reply on stdin.
cri_field() {
  awk -v k="$1" '$1 == k":" { v=$2; for (i=3;i<=NF;i++) v=v" "$i; gsub(/^"|"$/, "", v); print v; exit }'
}

# cri_all_fields NAME: every `NAME: "value"` in a reply on stdin, one per line.
cri_all_fields() {
  awk -v k="$1" '$1 == k":" { v=$2; gsub(/^"|"$/, "", v); print v }'
}
