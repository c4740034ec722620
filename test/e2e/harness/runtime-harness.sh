#!/usr/bin/env bash
# Prints the path of the harness script for $KUBELET_RUNTIME: containerd-env.sh (containerd, the
# default) or crio-env.sh (crio, cri-o); any other value is an error. Used by the README's run
# command and the benchmarks.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case "${KUBELET_RUNTIME:-containerd}" in
  containerd) echo "$here/containerd-env.sh" ;;
  crio | cri-o) echo "$here/crio-env.sh" ;;
  *)
    echo "KUBELET_RUNTIME must be containerd or crio, not '$KUBELET_RUNTIME'" >&2
    exit 2
    ;;
esac
