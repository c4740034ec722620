#!/usr/bin/env bash
# Hollow nodes at scale against the real v1.28.7 control plane (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler started by the e2e harness, on this one machine, in a
# network namespace of the run's own). For each N (default 100 300 1000) and each contestant:
#
#   ready           the N nodes started (each bootstraps its own client certificate with a
#                   bootstrap token) -> all N Nodes Ready
#   memory          after the nodes settled: VmRSS and Pss (smaps_rollup) summed over the
#                   contestant's processes, divided by N; threads and open descriptors
#   rest            over IDLE_SECONDS (default 60): the contestant's CPU (% of one core), and its
#                   API requests per node per minute by verb, counted in the apiserver's audit
#                   log (every request of the group system:nodes); kube-apiserver's and etcd's CPU
#                   meanwhile, and their RSS
#   pods            a Deployment of PODS_PER_NODE (default 10) x N pods, tolerating the nodes'
#                   taint: created -> all Running in the API; the contestant's CPU and API
#                   requests per pod by verb meanwhile (audit log), and
#                   its RSS once they run; then deleted -> no pod left
#
# Contestants: ours, `kubelet hollow --nodes=N` (one process, clusterDNS set as a cluster's
# kubelets have it: without it every pod sync records MissingClusterDNS on the pod and the Node,
# as upstream's kubelet does); with --kubemark, also upstream's
# kubemark (`kubemark --morph=kubelet`, one process per node, its fake runtime and image
# service), each on a fresh control plane, kubemark first, and the ratio ours/kubemark. Both get
# the same bootstrap token, labels and taint. The namespace keeps kubemark's iptables chains
# out of the machine's own tables.
#
# The controller manager and the scheduler get --kube-api-qps=500 --kube-api-burst=1000, so
# their client-side rate limits (20 and 50 requests/s by default) do not hide the nodes' pace.
# Figures are printed, never asserted.
# Usage: bench/run-hollow.sh [--kubemark] [N ...]   (with --kubemark the default N is 10 30)
# Env: IDLE_SECONDS (60), PODS_PER_NODE (10), START_CONCURRENCY (16), CONTESTANTS (with
# --kubemark: "kubemark ours").
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${HOLLOW_BENCH_NETNS:-}" ]; then
  exec unshare --net env HOLLOW_BENCH_NETNS=1 "$0" "$@"
fi
ip link set lo up
# A default route, as a node has: kubemark's kubelet takes its InternalIP from it.
ip link add hollow0 type veth peer name hollow1
ip addr add 100.127.255.254/32 dev hollow0
ip link set hollow0 up
ip link set hollow1 up
ip route add default dev hollow0
KUBEMARK=0
if [ "${1:-}" = --kubemark ]; then
  KUBEMARK=1
  shift
fi
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
KUBEMARK_BIN=$KUBEBUILDER_ASSETS/kubemark
if [ "$KUBEMARK" = 1 ]; then
  [ -x "$KUBEMARK_BIN" ] || { echo "no kubemark in $KUBEBUILDER_ASSETS" >&2; exit 1; }
  NS=${*:-10 30}
  CONTESTANTS=${CONTESTANTS:-kubemark ours}
else
  NS=${*:-100 300 1000}
  CONTESTANTS="ours"
fi
IDLE=${IDLE_SECONDS:-60}
PER_NODE=${PODS_PER_NODE:-10}
CONC=${START_CONCURRENCY:-16}
WORK=/var/tmp/kubelet-hollow-bench
CP=$WORK/cp
rm -rf "$WORK"
mkdir -p "$WORK"
cat >"$WORK/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
  userGroups: [system:nodes]
- level: None
EOF
export KUBELET_CP_CONTROLLER_MANAGER_ARGS="--kube-api-qps=500 --kube-api-burst=1000"
export KUBELET_CP_SCHEDULER_ARGS="--kube-api-qps=500 --kube-api-burst=1000"
export KUBELET_CP_APISERVER_ARGS="--audit-policy-file=$WORK/audit-policy.yaml --audit-log-path=$WORK/audit.log --audit-log-maxsize=0"
export KUBELET_CP_REQUIRED=1
PIDS=()
stop_contestant() {
  [ "${#PIDS[@]}" -gt 0 ] || return 0
  kill -TERM "${PIDS[@]}" 2>/dev/null || true
  wait "${PIDS[@]}" 2>/dev/null || true
  PIDS=()
}
cleanup() {
  stop_contestant
  test/e2e/harness/controlplane-env.sh down "$CP" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# A fresh control plane with a bootstrap token whose group may create node client CSRs and have
# them approved, and the bench's namespace; sets K (kubectl), the pids and $WORK/bootstrap.kubeconfig.
control_plane_up() {
  test/e2e/harness/controlplane-env.sh down "$CP" >/dev/null 2>&1 || true
  rm -f "$WORK/audit.log"
  test/e2e/harness/controlplane-env.sh up "$CP" --fresh >/dev/null
  # shellcheck disable=SC1091
  source "$CP/env"
  K=("$KUBELET_CP_KUBECTL" --kubeconfig "$KUBELET_CP_ADMIN_KUBECONFIG")
  etcd_pid=$KUBELET_CP_ETCD_PID
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
  "${K[@]}" create namespace hollow-bench >/dev/null
  cat >"$WORK/bootstrap.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$KUBELET_CP_SERVER", certificate-authority: "$KUBELET_CP_CA"}}]
users: [{name: u, user: {token: hbench.0123456789abcdef}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
EOF
}

cat >"$WORK/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
registerWithTaints: [{key: hollow.bench/node, value: "true", effect: NoSchedule}]
clusterDNS: [10.96.0.10]
clusterDomain: cluster.local
EOF

# start_ours N RUN / start_kubemark N RUN: start the contestant's N nodes, labelled
# hollow.bench/run=RUN; their pids in PIDS.
start_ours() {
  "$KUBELET" hollow --nodes="$1" --name-prefix="$2-" --start-concurrency="$CONC" \
    --bootstrap-kubeconfig="$WORK/bootstrap.kubeconfig" --config="$WORK/config.yaml" \
    --root-dir="$WORK/root-$2" --node-labels="hollow.bench/run=$2" --healthz-port=0 \
    >"$WORK/$2.log" 2>&1 &
  PIDS=($!)
}
start_kubemark() {
  local i d
  for ((i = 0; i < $1; i++)); do
    d=$WORK/root-$2/$i
    mkdir -p "$d/tmp"
    # Its temporary root directory and fake runtime socket go to TMPDIR.
    TMPDIR=$d/tmp "$KUBEMARK_BIN" --morph=kubelet --name="$2-$i" \
      --bootstrap-kubeconfig="$WORK/bootstrap.kubeconfig" --kubeconfig="$d/kubeconfig" \
      --cert-dir="$d/pki" --kubelet-port=$((30000 + i)) --kubelet-read-only-port=0 \
      --use-host-image-service=false --node-labels="hollow.bench/run=$2" \
      --register-with-taints=hollow.bench/node=true:NoSchedule >"$d/log" 2>&1 &
    PIDS+=($!)
  done
}

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }
hz=$(getconf CLK_TCK)
# Sums over the pids given: utime + stime (clock ticks); a /proc/PID/status field (KiB or count);
# Pss (KiB); open descriptors.
cpu_ticks() { local p; for p in "$@"; do cat "/proc/$p/stat"; done | awk '{s+=$14+$15} END{print s+0}'; }
status_sum() { local k=$1 p; shift; for p in "$@"; do cat "/proc/$p/status"; done | awk -v k="$k" '$1==k":"{s+=$2} END{print s+0}'; }
pss_sum() { local p; for p in "$@"; do cat "/proc/$p/smaps_rollup"; done | awk '$1=="Pss:"{s+=$2} END{print s+0}'; }
fd_sum() { local p; for p in "$@"; do ls "/proc/$p/fd"; done | wc -l; }
cpu_pct() { awk -v a="$1" -v b="$2" -v s="$3" -v hz="$hz" 'BEGIN{printf "%.1f", (b-a)/hz/s*100}'; }
cpu_s() { awk -v a="$1" -v b="$2" -v hz="$hz" 'BEGIN{printf "%.1f", (b-a)/hz}'; }
alive() { local p; for p in "$@"; do kill -0 "$p" 2>/dev/null || return 1; done; }
ready_nodes() { "${K[@]}" get nodes -l "hollow.bench/run=$1" --no-headers 2>/dev/null | awk '$2=="Ready"' | wc -l; }
running_pods() { "${K[@]}" get pods -n hollow-bench -l app=load --field-selector=status.phase=Running --no-headers 2>/dev/null | wc -l; }
all_pods() { "${K[@]}" get pods -n hollow-bench --no-headers 2>/dev/null | wc -l; }
audit_lines() { [ -f "$WORK/audit.log" ] && wc -l <"$WORK/audit.log" || echo 0; }
# per_pod FROM TO PODS: requests per pod by verb and resource[/subresource] in audit log lines
# FROM+1..TO.
per_pod() {
  sed -n "$(($1 + 1)),$2p" "$WORK/audit.log" |
    jq -r '.verb + " " + .objectRef.resource + (if .objectRef.subresource then "/" + .objectRef.subresource else "" end)' |
    sort | uniq -c | sort -rn | awk -v p="$3" '{printf "%s %s %.2f  ", $2, $3, $1/p}'
}
# verbs FROM TO N SECONDS: requests per node per minute by verb and resource[/subresource] in
# audit log lines FROM+1..TO.
verbs() {
  sed -n "$(($1 + 1)),$2p" "$WORK/audit.log" |
    jq -r '.verb + " " + .objectRef.resource + (if .objectRef.subresource then "/" + .objectRef.subresource else "" end)' |
    sort | uniq -c | awk -v n="$3" -v s="$4" '{printf "%s %s %.2f  ", $2, $3, $1/n/(s/60)}'
}

declare -A R
# measure CONTESTANT N: one contestant at one N on a fresh control plane; results in R[c,N,*].
measure() {
  local c=$1 n=$2 run t0 deadline c0 c1 a0 a1 e0 e1 l0 l1 pods key
  run="hb$n${c:0:1}"
  key="$c,$n"
  echo "== $c, N = $n" >&2
  control_plane_up
  "start_$c" "$n" "$run"
  t0=$(now)
  deadline=$(($(date +%s) + 900))
  while [ "$(ready_nodes "$run")" -lt "$n" ]; do
    alive "${PIDS[@]}" || { echo "$c: a process exited; logs in $WORK" >&2; exit 1; }
    [ "$(date +%s)" -gt "$deadline" ] && { echo "not all Ready after 900 s" >&2; break; }
    sleep 1
  done
  R[$key,ready]=$(secs "$t0" "$(now)")
  R[$key,readyn]=$(ready_nodes "$run")
  sleep 20
  R[$key,rss]=$(status_sum VmRSS "${PIDS[@]}")
  R[$key,pss]=$(pss_sum "${PIDS[@]}")
  R[$key,threads]=$(status_sum Threads "${PIDS[@]}")
  R[$key,fds]=$(fd_sum "${PIDS[@]}")
  # At rest.
  l0=$(audit_lines)
  c0=$(cpu_ticks "${PIDS[@]}"); a0=$(cpu_ticks "$KUBELET_CP_APISERVER_PID"); e0=$(cpu_ticks "$etcd_pid")
  sleep "$IDLE"
  c1=$(cpu_ticks "${PIDS[@]}"); a1=$(cpu_ticks "$KUBELET_CP_APISERVER_PID"); e1=$(cpu_ticks "$etcd_pid")
  l1=$(audit_lines)
  R[$key,idle]=$(cpu_pct "$c0" "$c1" "$IDLE")
  R[$key,api_idle]=$(cpu_pct "$a0" "$a1" "$IDLE")
  R[$key,etcd_idle]=$(cpu_pct "$e0" "$e1" "$IDLE")
  R[$key,api_rss]=$(status_sum VmRSS "$KUBELET_CP_APISERVER_PID")
  R[$key,etcd_rss]=$(status_sum VmRSS "$etcd_pid")
  R[$key,reqs]=$(awk -v a="$l0" -v b="$l1" -v n="$n" -v s="$IDLE" 'BEGIN{printf "%.1f", (b-a)/n/(s/60)}')
  R[$key,verbs]=$(verbs "$l0" "$l1" "$n" "$IDLE")
  # Pods.
  pods=$((n * PER_NODE))
  c0=$(cpu_ticks "${PIDS[@]}"); a0=$(cpu_ticks "$KUBELET_CP_APISERVER_PID"); e0=$(cpu_ticks "$etcd_pid")
  l0=$(audit_lines)
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
  R[$key,running]=$(secs "$t0" "$(now)")
  R[$key,runningn]=$(running_pods)
  c1=$(cpu_ticks "${PIDS[@]}"); a1=$(cpu_ticks "$KUBELET_CP_APISERVER_PID"); e1=$(cpu_ticks "$etcd_pid")
  R[$key,start_cpu]=$(cpu_s "$c0" "$c1")
  R[$key,api_start_cpu]=$(cpu_s "$a0" "$a1")
  R[$key,etcd_start_cpu]=$(cpu_s "$e0" "$e1")
  R[$key,start_reqs]=$(per_pod "$l0" "$(audit_lines)" "$pods")
  sleep 10
  R[$key,rss_pods]=$(status_sum VmRSS "${PIDS[@]}")
  t0=$(now)
  deadline=$(($(date +%s) + 1200))
  "${K[@]}" delete deployment load -n hollow-bench --wait=false >/dev/null
  while [ "$(all_pods)" -gt 0 ]; do
    [ "$(date +%s)" -gt "$deadline" ] && { echo "pods left after 1200 s" >&2; break; }
    sleep 2
  done
  R[$key,deleted]=$(secs "$t0" "$(now)")
  stop_contestant
  rm -rf "$WORK/root-$run"
  mv "$WORK/audit.log" "$WORK/audit-$c-$n.log"
}

for n in $NS; do
  for c in $CONTESTANTS; do measure "$c" "$n"; done
done

echo
echo "Hollow nodes, real v1.28.7 control plane on this machine ($(nproc) cores)"
echo "(ours: kubelet hollow, one process; kubemark: one kubemark --morph=kubelet process per node)"
COLS=()
for n in $NS; do for c in $CONTESTANTS; do COLS+=("$c,$n"); done; done
printf "  %-44s" ""
for col in "${COLS[@]}"; do printf " %14s" "${col%,*} N=${col#*,}"; done
[ "$KUBEMARK" = 1 ] && for n in $NS; do printf " %12s" "ours/km N=$n"; done
echo
# row LABEL FIELD [per-node]: the field for every column; per-node divides KiB by 1024 N.
row() {
  local col v n
  printf "  %-44s" "$1"
  for col in "${COLS[@]}"; do
    v=${R[$col,$2]}
    [ "${3:-}" = per-node ] && v=$(awk -v a="$v" -v n="${col#*,}" 'BEGIN{printf "%.2f", a/1024/n}')
    printf " %14s" "$v"
  done
  if [ "$KUBEMARK" = 1 ]; then
    for n in $NS; do
      printf " %12s" "$(awk -v a="${R[ours,$n,$2]:-0}" -v b="${R[kubemark,$n,$2]:-0}" 'BEGIN{if(b>0) printf "%.2f", a/b; else print "-"}')"
    done
  fi
  echo
}
row "nodes Ready" readyn
row "start -> all Ready (s)" ready
row "RSS per node, settled (MiB)" rss per-node
row "PSS per node, settled (MiB)" pss per-node
row "threads" threads
row "open descriptors" fds
row "CPU at rest (% of a core)" idle
row "API requests per node per minute at rest" reqs
row "kube-apiserver CPU at rest (%)" api_idle
row "etcd CPU at rest (%)" etcd_idle
row "pods Running" runningn
row "Deployment -> all Running (s)" running
row "  contestant CPU meanwhile (s)" start_cpu
row "  kube-apiserver CPU meanwhile (s)" api_start_cpu
row "  etcd CPU meanwhile (s)" etcd_start_cpu
row "RSS per node with the pods (MiB)" rss_pods per-node
row "Deployment deleted -> no pod (s)" deleted
row "kube-apiserver RSS (KiB)" api_rss
row "etcd RSS (KiB)" etcd_rss
echo "  API requests per node per minute at rest, by verb (audit log):"
for col in "${COLS[@]}"; do echo "    ${col%,*} N=${col#*,}: ${R[$col,verbs]}"; done
echo "  API requests per pod while the Deployment's pods start, by verb (audit log):"
for col in "${COLS[@]}"; do echo "    ${col%,*} N=${col#*,}: ${R[$col,start_reqs]}"; done
