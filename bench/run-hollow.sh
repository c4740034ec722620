#!/usr/bin/env bash
# Hollow nodes at scale against the real v1.28.7 control plane (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler started by the e2e harness on loopback, on this one
# machine). For each N (default 100 300 1000):
#
#   ready           `kubelet hollow --nodes=N` started (each node bootstraps its own client
#                   certificate with a bootstrap token) -> all N Nodes Ready
#   memory          after the nodes settled: the process's VmRSS and Pss (smaps_rollup), each
#                   divided by N; threads and open descriptors
#   rest            over IDLE_SECONDS (default 60): the process's CPU (% of one core) and its API
#                   requests per node per minute by verb (its rest_client_requests_total);
#                   kube-apiserver's and etcd's CPU meanwhile, and their RSS
#   pods            a Deployment of PODS_PER_NODE (default 10) x N pods, tolerating the nodes'
#                   taint: created -> all Running in the API; the process's CPU meanwhile and
#                   its RSS once they run; then deleted -> no pod left
#
# The controller manager and the scheduler get --kube-api-qps=500 --kube-api-burst=1000, so
# their client-side rate limits (20 and 50 requests/s by default) do not hide the nodes' pace.
# Figures are printed, never asserted. Not measured here yet: kubemark's hollow node beside ours
# (it needs a network namespace of its own per node).
# Usage: bench/run-hollow.sh [N ...]
# Env: IDLE_SECONDS (60), PODS_PER_NODE (10), START_CONCURRENCY (16).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target kubelet >/dev/null
KUBELET=$(pwd)/$BUILD_DIR/cmd/kubelet/kubelet
if [ -z "${KUBEBUILDER_ASSETS:-}" ]; then
  [ -x ../shared/k8s/unpack.sh ] || { echo "no control plane binaries (../shared/k8s)" >&2; exit 1; }
  mkdir -p "$BUILD_DIR/k8s-bin"
  KUBEBUILDER_ASSETS=$(cd "$(../shared/k8s/unpack.sh "$BUILD_DIR/k8s-bin")" && pwd)
  export KUBEBUILDER_ASSETS
fi
NS=${*:-100 300 1000}
IDLE=${IDLE_SECONDS:-60}
PER_NODE=${PODS_PER_NODE:-10}
CONC=${START_CONCURRENCY:-16}
WORK=/var/tmp/kubelet-hollow-bench
CP=$WORK/cp
rm -rf "$WORK"
mkdir -p "$WORK"
export KUBELET_CP_CONTROLLER_MANAGER_ARGS="--kube-api-qps=500 --kube-api-burst=1000"
export KUBELET_CP_SCHEDULER_ARGS="--kube-api-qps=500 --kube-api-burst=1000"
export KUBELET_CP_REQUIRED=1
test/e2e/harness/controlplane-env.sh up "$CP" --fresh >/dev/null
hollow_pid=""
cleanup() {
  [ -n "$hollow_pid" ] && kill -TERM "$hollow_pid" 2>/dev/null && wait "$hollow_pid" 2>/dev/null
  test/e2e/harness/controlplane-env.sh down "$CP" >/dev/null 2>&1 || true
}
trap cleanup EXIT
# shellcheck disable=SC1091
source "$CP/env"
K=("$KUBELET_CP_KUBECTL" --kubeconfig "$KUBELET_CP_ADMIN_KUBECONFIG")
etcd_pid=$KUBELET_CP_ETCD_PID

# A bootstrap token whose group may create node client CSRs and have them approved.
"${K[@]}" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Secret
metadata: {name: bootstrap-token-hbench, namespace: kube-system}
type: bootstrap.kubernetes.io/token
stringData: {token-id: hbench, token-secret: 0123456789abcdef, usage-bootstrap-authentication: "true"}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: hollow-bench-create}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:node-bootstrapper}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: system:bootstrappers}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: hollow-bench-approve}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:certificates.k8s.io:certificatesigningrequests:nodeclient"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: system:bootstrappers}]
EOF
cat >"$WORK/bootstrap.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$KUBELET_CP_SERVER", certificate-authority: "$KUBELET_CP_CA"}}]
users: [{name: u, user: {token: hbench.0123456789abcdef}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
EOF
cat >"$WORK/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
registerWithTaints: [{key: hollow.bench/node, value: "true", effect: NoSchedule}]
EOF

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }  # utime + stime, clock ticks
hz=$(getconf CLK_TCK)
cpu_pct() { awk -v a="$1" -v b="$2" -v s="$3" -v hz="$hz" 'BEGIN{printf "%.1f", (b-a)/hz/s*100}'; }
cpu_s() { awk -v a="$1" -v b="$2" -v hz="$hz" 'BEGIN{printf "%.1f", (b-a)/hz}'; }
kib() { awk -v k="$2" '$1==k":"{print $2}' "/proc/$1/status"; }
pss_kib() { awk '$1=="Pss:"{print $2}' "/proc/$1/smaps_rollup"; }
ready_nodes() { "${K[@]}" get nodes -l "hollow.bench/run=$1" --no-headers 2>/dev/null | awk '$2=="Ready"' | wc -l; }
running_pods() { "${K[@]}" get pods -n hollow-bench -l app=load --field-selector=status.phase=Running --no-headers 2>/dev/null | wc -l; }
all_pods() { "${K[@]}" get pods -n hollow-bench --no-headers 2>/dev/null | wc -l; }
# rest_client_requests_total summed by method, from a metrics text on stdin: "METHOD COUNT" lines.
by_method() { awk -F'[{}]' '/^rest_client_requests_total\{/{split($2,l,","); for(i in l){if(l[i]~/^method=/){m=l[i]; gsub(/method=|"/,"",m)}}; split($3,v," "); s[m]+=v[1]} END{for(m in s) print m, s[m]}'; }
"${K[@]}" create namespace hollow-bench >/dev/null

declare -A R
for n in $NS; do
  echo "== N = $n" >&2
  run="n$n"
  port=$((23000 + n % 1000))
  "$KUBELET" hollow --nodes="$n" --name-prefix="hb$n-" --start-concurrency="$CONC" \
    --bootstrap-kubeconfig="$WORK/bootstrap.kubeconfig" --config="$WORK/config.yaml" \
    --root-dir="$WORK/root-$n" --node-labels="hollow.bench/run=$run" --healthz-port="$port" \
    >"$WORK/hollow-$n.log" 2>&1 &
  hollow_pid=$!
  t0=$(now)
  deadline=$(($(date +%s) + 900))
  while [ "$(ready_nodes "$run")" -lt "$n" ]; do
    kill -0 "$hollow_pid" 2>/dev/null || { echo "hollow process exited: $WORK/hollow-$n.log" >&2; exit 1; }
    [ "$(date +%s)" -gt "$deadline" ] && { echo "not all Ready after 900 s" >&2; break; }
    sleep 1
  done
  R[$n,ready]=$(secs "$t0" "$(now)")
  R[$n,readyn]=$(ready_nodes "$run")
  sleep 20
  R[$n,rss]=$(kib "$hollow_pid" VmRSS)
  R[$n,pss]=$(pss_kib "$hollow_pid")
  R[$n,threads]=$(kib "$hollow_pid" Threads)
  R[$n,fds]=$(ls "/proc/$hollow_pid/fd" | wc -l)
  # At rest.
  m0=$(curl -s "http://127.0.0.1:$port/metrics" | by_method)
  c0=$(cpu_ticks "$hollow_pid"); a0=$(cpu_ticks "$KUBELET_CP_APISERVER_PID"); e0=$(cpu_ticks "$etcd_pid")
  sleep "$IDLE"
  c1=$(cpu_ticks "$hollow_pid"); a1=$(cpu_ticks "$KUBELET_CP_APISERVER_PID"); e1=$(cpu_ticks "$etcd_pid")
  m1=$(curl -s "http://127.0.0.1:$port/metrics" | by_method)
  R[$n,idle]=$(cpu_pct "$c0" "$c1" "$IDLE")
  R[$n,api_idle]=$(cpu_pct "$a0" "$a1" "$IDLE")
  R[$n,etcd_idle]=$(cpu_pct "$e0" "$e1" "$IDLE")
  R[$n,api_rss]=$(kib "$KUBELET_CP_APISERVER_PID" VmRSS)
  R[$n,etcd_rss]=$(kib "$etcd_pid" VmRSS)
  R[$n,verbs]=$(join -a2 <(echo "$m0" | sort) <(echo "$m1" | sort) |
    awk -v n="$n" -v s="$IDLE" '{d=(NF==3?$3-$2:$2); if(d>0) printf "%s %.2f  ", $1, d/n/(s/60)}')
  # Pods.
  pods=$((n * PER_NODE))
  c0=$(cpu_ticks "$hollow_pid"); a0=$(cpu_ticks "$KUBELET_CP_APISERVER_PID"); e0=$(cpu_ticks "$etcd_pid")
  t0=$(now)
  deadline=$(($(date +%s) + 1200))
  "${K[@]}" apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: load, namespace: hollow-bench}
spec:
  replicas: $pods
  selector: {matchLabels: {app: load}}
  template:
    metadata: {labels: {app: load}}
    spec:
      nodeSelector: {hollow.bench/run: $run}
      tolerations: [{key: hollow.bench/node, operator: Exists}]
      automountServiceAccountToken: false
      containers: [{name: c, image: registry.invalid/load:1}]
EOF
  while [ "$(running_pods)" -lt "$pods" ]; do
    [ "$(date +%s)" -gt "$deadline" ] && { echo "not all Running after 1200 s" >&2; break; }
    sleep 2
  done
  R[$n,running]=$(secs "$t0" "$(now)")
  R[$n,runningn]=$(running_pods)
  c1=$(cpu_ticks "$hollow_pid"); a1=$(cpu_ticks "$KUBELET_CP_APISERVER_PID"); e1=$(cpu_ticks "$etcd_pid")
  R[$n,start_cpu]=$(cpu_s "$c0" "$c1")
  R[$n,api_start_cpu]=$(cpu_s "$a0" "$a1")
  R[$n,etcd_start_cpu]=$(cpu_s "$e0" "$e1")
  sleep 10
  R[$n,rss_pods]=$(kib "$hollow_pid" VmRSS)
  t0=$(now)
  deadline=$(($(date +%s) + 1200))
  "${K[@]}" delete deployment load -n hollow-bench --wait=false >/dev/null
  while [ "$(all_pods)" -gt 0 ]; do
    [ "$(date +%s)" -gt "$deadline" ] && { echo "pods left after 1200 s" >&2; break; }
    sleep 2
  done
  R[$n,deleted]=$(secs "$t0" "$(now)")
  kill -TERM "$hollow_pid"
  wait "$hollow_pid" || true
  hollow_pid=""
  "${K[@]}" delete nodes -l "hollow.bench/run=$run" --wait=false >/dev/null
  rm -rf "$WORK/root-$n"
done

echo
echo "Hollow nodes (kubelet hollow), real v1.28.7 control plane on this machine ($(nproc) cores)"
printf "  %-44s" ""; for n in $NS; do printf " %12s" "N=$n"; done; echo
row() { printf "  %-44s" "$1"; for n in $NS; do printf " %12s" "${R[$n,$2]}"; done; echo; }
perN() { printf "  %-44s" "$1"; for n in $NS; do printf " %12s" "$(awk -v a="${R[$n,$2]}" -v n="$n" 'BEGIN{printf "%.2f", a/1024/n}')"; done; echo; }
row "nodes Ready" readyn
row "start -> all Ready (s)" ready
perN "RSS per node, settled (MiB)" rss
perN "PSS per node, settled (MiB)" pss
row "threads" threads
row "open descriptors" fds
row "CPU at rest (% of a core)" idle
row "kube-apiserver CPU at rest (%)" api_idle
row "etcd CPU at rest (%)" etcd_idle
row "pods Running" runningn
row "Deployment -> all Running (s)" running
row "  hollow CPU meanwhile (s)" start_cpu
row "  kube-apiserver CPU meanwhile (s)" api_start_cpu
row "  etcd CPU meanwhile (s)" etcd_start_cpu
perN "RSS per node with the pods (MiB)" rss_pods
row "Deployment deleted -> no pod (s)" deleted
row "kube-apiserver RSS (KiB)" api_rss
row "etcd RSS (KiB)" etcd_rss
echo "  API requests per node per minute at rest, by verb:"
for n in $NS; do echo "    N=$n: ${R[$n,verbs]}"; done
