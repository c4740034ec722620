#!/usr/bin/env bash
# controlplane-env.sh: a private, throw-away Kubernetes control plane on loopback for the
# kubelet's API-server-mode e2e tests (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler; no kubelet: the one under test registers itself).
#
#   controlplane-env.sh up DIR [--fresh] [--kubelet-ca FILE|cluster]
#                                         start it under DIR (idempotent; --fresh rebuilds)
#   controlplane-env.sh down DIR          stop it; DIR keeps only logs/ (safe after a failed up)
#   controlplane-env.sh apiserver-stop DIR
#   controlplane-env.sh apiserver-start DIR
#                                         stop kube-apiserver / start it again on the same
#                                         port with the same flags (outage tests; start does
#                                         nothing while it runs, and every test's
#                                         ControlPlane::FromEnv() runs it, so an API server
#                                         that one test left down, or that died, is back for
#                                         the next)
#   controlplane-env.sh node-cert DIR NAME
#                                         mint a node identity (O=system:nodes,
#                                         CN=system:node:NAME) plus a serving cert for NAME,
#                                         map NAME to 127.0.0.1 in /etc/hosts; prints the
#                                         path of the node's kubeconfig
#   controlplane-env.sh static-pods DIR MANIFEST_DIR NODE_NAME IMAGE
#                                         the same control plane as static pods of a kubelet:
#                                         PKI, kubeconfigs, DIR/env and NODE_NAME's identity
#                                         made, one manifest per component (the host's binaries
#                                         mounted into IMAGE, host network) written to
#                                         MANIFEST_DIR, nothing started; prints the node's
#                                         kubeconfig. `down DIR` cleans up after the kubelet
#                                         stopped the pods.
#
# Binaries, as envtest finds them: kube-apiserver, kube-controller-manager, kube-scheduler and
# kubectl in $KUBEBUILDER_ASSETS (KUBELET_CP_CONFIGURED_ASSETS is the fallback CMake passes
# from configure time); etcd from $KUBEBUILDER_ASSETS/etcd, else $TEST_ASSET_ETCD, else PATH
# (Debian's etcd-server). Without them `up` prints one line `SKIPPED: <reason>`, writes
# DIR/env with KUBELET_CP_SKIPPED=<reason> and exits 0, so tests can skip with that reason;
# with KUBELET_CP_REQUIRED=1 a missing piece is an error instead.
#
# DIR/env: KEY=VALUE lines; values have no spaces or quotes, except KUBELET_CP_SKIPPED, which
# is single-quoted (the file stays sourceable by sh). Keys (all KUBELET_CP_):
#   SERVER                 https://127.0.0.1:<port> (the apiserver)
#   CA, CA_KEY             cluster CA: signs every cert here, the kube-controller-manager
#                          signs CSRs with it; a kubelet's --client-ca-file is CA
#   ADMIN_KUBECONFIG       cluster-admin (O=system:masters)
#   KUBECTL                the v1.28.7 kubectl from the assets
#   KUBELET_CLIENT_CERT/_KEY  what the apiserver presents to kubelets (CN=kube-apiserver-
#                          kubelet-client, O=system:masters)
#   KUBELET_CA             the --kubelet-certificate-authority given, empty when none (then
#                          the apiserver does not verify kubelet serving certs, as kubeadm)
#   SERVICE_CIDR, SERVICE_IP, SA_ISSUER, VERSION (the apiserver's gitVersion)
#   ETCD_PORT, ETCD_PEER_PORT, APISERVER_PORT, CONTROLLER_MANAGER_PORT, SCHEDULER_PORT
#   ETCD_PID, APISERVER_PID, CONTROLLER_MANAGER_PID, SCHEDULER_PID
#   DIR, LOG_DIR, ASSETS, SCRIPT (this file, for node-cert), UP_SECONDS
#
# Reaching a kubelet under test: the upstream v1.28.7 kubelet refuses a loopback --node-ip
# ("nodeIP can't be loopback address": it then reports no address at all) and, without one,
# reports the host's default-route address as InternalIP. So the apiserver prefers the Hostname
# address (--kubelet-preferred-address-types=Hostname,InternalIP; KUBELET_CP_ADDRESS_TYPES
# overrides), which is the node name, and `node-cert` adds `127.0.0.1 NAME` to /etc/hosts
# (tagged with DIR; `down` removes it): the apiserver reaches the kubelet on loopback at its
# Node's daemonEndpoints.kubeletEndpoint.Port. Every listener here binds 127.0.0.1 and every
# port is picked free at random (below the ephemeral range), so
# concurrent runs never collide.
#
# Extra flags for one component: KUBELET_CP_APISERVER_ARGS, KUBELET_CP_CONTROLLER_MANAGER_ARGS,
# KUBELET_CP_SCHEDULER_ARGS, KUBELET_CP_ETCD_ARGS (whitespace-separated, appended last, so
# they override). KUBELET_CP_KUBELET_CA=FILE|cluster is the same as --kubelet-ca.
set -euo pipefail

readonly MARKER=.kubelet-cp-harness
readonly SERVICE_CIDR=10.0.0.0/24
# The first address of the range: the `kubernetes` Service's ClusterIP.
readonly SERVICE_IP=10.0.0.1
readonly SA_ISSUER=https://kubernetes.default.svc.cluster.local
# Below Linux's default ephemeral range (32768-60999), so outgoing connections of other
# processes cannot take a port between our check and our bind.
readonly PORT_MIN=20000 PORT_SPAN=12700
readonly K8S_BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubectl)

HARNESS_NAME=controlplane-env
# shellcheck source=SCRIPTDIR/harness-lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/harness-lib.sh"

usage() {
  cat >&2 <<'EOF'
usage: controlplane-env.sh up DIR [--fresh] [--kubelet-ca FILE|cluster]
       controlplane-env.sh down DIR
       controlplane-env.sh apiserver-stop DIR
       controlplane-env.sh apiserver-start DIR
       controlplane-env.sh node-cert DIR NODE_NAME
       controlplane-env.sh static-pods DIR MANIFEST_DIR NODE_NAME IMAGE
EOF
  exit 2
}

now() { date +%s.%N; }
# since T0: seconds elapsed since T0, one decimal.
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# ---------------------------------------------------------------------------
# Run state: DIR/.state holds KEY=VALUE lines appended as `up` progresses, so that `down`
# can undo exactly what a (possibly half-finished) `up` started (state_set / state_load of
# harness-lib.sh). pid_alive checks a PID against this run's DIR in its command line, so a PID
# reused by an unrelated process is never signalled (a zombie has an empty cmdline).
# ---------------------------------------------------------------------------

# group_members PGID: live (non-zombie) processes in process group PGID.
group_members() {
  ps -eo pid=,pgid=,stat= | awk -v g="$1" '$2 == g && $3 !~ /^Z/ { print $1 }'
}

# signal_run PID SIG: SIG to PID's whole process group when PID leads one (setsid made it a
# session leader, so children it forked die with it), else to PID alone.
signal_run() {
  local pid=$1 sig=$2 pgid
  pgid=$(ps -o pgid= -p "$pid" 2>/dev/null | tr -d ' ') || true
  if [[ "$pgid" == "$pid" ]]; then
    kill "-$sig" -- "-$pid" 2>/dev/null || true
  else
    kill "-$sig" "$pid" 2>/dev/null || true
  fi
}

# stop_pid PID LABEL: SIGTERM, up to 10 s, then SIGKILL; the process must mention DIR.
stop_pid() {
  local pid=$1 label=$2 i
  pid_alive "$pid" "$DIR/" || return 0
  log "stopping $label (pid $pid)"
  signal_run "$pid" TERM
  for ((i = 0; i < 100; i++)); do
    pid_alive "$pid" "$DIR/" || break
    sleep 0.1
  done
  if pid_alive "$pid" "$DIR/"; then
    log "$label (pid $pid) ignored SIGTERM for 10s; sending SIGKILL"
    signal_run "$pid" KILL
    for ((i = 0; i < 50; i++)); do
      pid_alive "$pid" "$DIR/" || break
      sleep 0.1
    done
  fi
  pid_alive "$pid" "$DIR/" && die "$label (pid $pid) survived SIGKILL"
  # Stragglers of the group (none expected: these daemons do not fork).
  local rest
  rest=$(group_members "$pid")
  if [[ -n "$rest" ]]; then
    log "killing leftover processes of $label's group: ${rest//$'\n'/ }"
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
}

# sweep: any control-plane binary whose command line names this DIR but whose PID was not
# recorded (an `up` killed between starting a daemon and writing its PID).
sweep() {
  local pid comm cmd n=0
  # comm is cut to 15 characters: kube-controller-manager shows as kube-controller.
  while read -r pid comm; do
    case $comm in
      etcd | kube-apiserver | kube-controller | kube-scheduler) ;;
      *) continue ;;
    esac
    cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || continue
    [[ "$cmd" == *"$DIR/"* ]] || continue
    log "killing unrecorded $comm (pid $pid)"
    kill -KILL "$pid" 2>/dev/null || true
    n=$((n + 1))
  done < <(ps -eo pid=,comm=)
  ((n == 0)) || sleep 0.2
}

# ---------------------------------------------------------------------------
# Binaries
# ---------------------------------------------------------------------------

# find_assets: sets ASSETS, ETCD_BIN; on anything missing, sets SKIP_REASON instead.
find_assets() {
  local missing=() b
  SKIP_REASON=''
  ASSETS=${KUBEBUILDER_ASSETS:-${KUBELET_CP_CONFIGURED_ASSETS:-}}
  if [[ -z "$ASSETS" ]]; then
    SKIP_REASON="KUBEBUILDER_ASSETS is not set (it names a directory holding kube-apiserver, kube-controller-manager, kube-scheduler and kubectl v1.28.7; e.g. KUBEBUILDER_ASSETS=\$(../shared/k8s/unpack.sh build/k8s-bin))"
    return 0
  fi
  ASSETS=$(realpath -m -- "$ASSETS")
  for b in "${K8S_BINARIES[@]}"; do
    [[ -x "$ASSETS/$b" ]] || missing+=("$b")
  done
  if [[ -x "$ASSETS/etcd" ]]; then
    ETCD_BIN=$ASSETS/etcd
  elif [[ -n "${TEST_ASSET_ETCD:-}" && -x "${TEST_ASSET_ETCD}" ]]; then
    ETCD_BIN=$TEST_ASSET_ETCD
  elif ETCD_BIN=$(command -v etcd 2>/dev/null); then
    :
  else
    missing+=("etcd (not in KUBEBUILDER_ASSETS, TEST_ASSET_ETCD or PATH; Debian: etcd-server)")
  fi
  for b in openssl curl ss setsid; do
    command -v "$b" >/dev/null 2>&1 || missing+=("$b")
  done
  if ((${#missing[@]} > 0)); then
    SKIP_REASON="KUBEBUILDER_ASSETS=$ASSETS: missing ${missing[*]}"
  fi
}

# ---------------------------------------------------------------------------
# PKI (EC P-256 keys: fast to make, accepted by every component)
# ---------------------------------------------------------------------------

new_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# random_serial: a 128-bit serial, so concurrent node-cert calls need no shared serial file.
random_serial() { echo "0x$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"; }

# sign NAME SUBJECT EXT_LINES: PKI/NAME.key + PKI/NAME.crt signed by the cluster CA for a year.
sign() {
  local name=$1 subject=$2 ext=$3 pki=$DIR/pki
  new_key "$pki/$name.key"
  printf '%s\n' "$ext" >"$pki/$name.ext"
  openssl req -new -key "$pki/$name.key" -subj "$subject" -out "$pki/$name.csr" 2>/dev/null
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
    -set_serial "$(random_serial)" -days 365 -sha256 -extfile "$pki/$name.ext" \
    -out "$pki/$name.crt" 2>/dev/null || die "openssl could not sign $name"
  rm -f "$pki/$name.csr" "$pki/$name.ext"
}

client_ext() {
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth'
}
# server_ext SAN: serving-cert extensions for subjectAltName SAN.
server_ext() {
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=%s' "$1"
}

make_pki() {
  local pki=$DIR/pki
  mkdir -p "$pki"
  chmod 700 "$pki"
  new_key "$pki/ca.key"
  # Unique CA name per run: a cert of another run never chains to this CA by accident.
  openssl req -x509 -new -key "$pki/ca.key" -subj "/CN=kubelet-e2e-ca-$(od -An -N4 -tx1 /dev/urandom | tr -d ' ')" \
    -days 365 -sha256 -set_serial "$(random_serial)" \
    -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature' \
    -out "$pki/ca.crt" 2>/dev/null || die "openssl could not make the CA"
  # The leaf certs side by side: each is a few openssl processes, and on a busy machine
  # process start-up dominates.
  local pids=() pid
  sign apiserver /CN=kube-apiserver "$(server_ext "DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:$SERVICE_IP")" &
  pids+=($!)
  sign admin "/O=system:masters/CN=kubernetes-admin" "$(client_ext)" &
  pids+=($!)
  sign controller-manager /CN=system:kube-controller-manager "$(client_ext)" &
  pids+=($!)
  sign scheduler /CN=system:kube-scheduler "$(client_ext)" &
  pids+=($!)
  # As kubeadm's apiserver-kubelet-client: system:masters, so a kubelet's webhook
  # authorization (SubjectAccessReview) admits the apiserver's logs/exec requests.
  sign apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$(client_ext)" &
  pids+=($!)
  # Serving certs of the controller manager and scheduler (otherwise each makes a
  # self-signed one): their /healthz is then checked against the CA like the apiserver's.
  sign controller-manager-serving /CN=kube-controller-manager "$(server_ext "DNS:localhost,IP:127.0.0.1")" &
  pids+=($!)
  sign scheduler-serving /CN=kube-scheduler "$(server_ext "DNS:localhost,IP:127.0.0.1")" &
  pids+=($!)
  new_key "$pki/sa.key"
  openssl pkey -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  for pid in "${pids[@]}"; do
    wait "$pid" || die "making the PKI failed"
  done
}

# write_kubeconfig PATH CERT KEY USER: a kubeconfig for the apiserver with a client cert.
write_kubeconfig() {
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $DIR/pki/ca.crt
users:
- name: $4
  user:
    client-certificate: $2
    client-key: $3
contexts:
- name: $4@e2e
  context:
    cluster: e2e
    user: $4
current-context: $4@e2e
EOF
  chmod 600 "$1"
}

# ---------------------------------------------------------------------------
# Daemons
# ---------------------------------------------------------------------------

# free_port VAR: sets VAR to a TCP port nobody listens on, not handed out earlier in this run
# (not a command substitution: USED_PORTS must survive the call).
free_port() {
  local try p
  for ((try = 0; try < 200; try++)); do
    p=$((PORT_MIN + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % PORT_SPAN))
    [[ " ${USED_PORTS:-} " == *" $p "* ]] && continue
    port_is_free "$p" || continue
    USED_PORTS="${USED_PORTS:-} $p"
    printf -v "$1" '%s' "$p"
    return 0
  done
  die "no free TCP port found"
}

# launch NAME LOG BIN ARGS...: starts a daemon in a session of its own (it must outlive the
# CTest fixture process and must not hold its stdout/stderr, or CTest waits for EOF) and
# records its PID as state <NAME>_PID.
launch() {
  local name=$1 logf=$2
  shift 2
  setsid "$@" </dev/null >>"$logf" 2>&1 &
  state_set "${name}_PID" "$!"
  LAUNCHED_PID=$!
}

# await NAME PID LOG TIMEOUT_S CHECK...: polls CHECK until it succeeds. Returns 75 when the
# daemon exited because its port was taken (the caller picks another), dies otherwise.
await() {
  local name=$1 pid=$2 logf=$3 timeout=$4 i
  shift 4
  for ((i = 0; i < timeout * 10; i++)); do
    if ! kill -0 "$pid" 2>/dev/null || [[ "$(ps -o stat= -p "$pid" 2>/dev/null)" == Z* ]]; then
      if grep -q 'address already in use' "$logf" 2>/dev/null; then
        log "$name lost a race for its port; retrying on another"
        return 75
      fi
      tail -n 30 "$logf" >&2 || true
      die "$name exited during startup (log: $logf)"
    fi
    if "$@" >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.1
  done
  tail -n 30 "$logf" >&2 || true
  die "$name was not ready within ${timeout}s (log: $logf)"
}

# split_args VAR: the words of extra-args variable VAR into array EXTRA.
split_args() {
  EXTRA=()
  read -r -a EXTRA <<<"${!1:-}" || true
}

etcd_healthy() { curl -fsS --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" | grep -q '"health":"true"'; }

# etcd_flags: etcd's command line (without the binary) into ETCD_FLAGS, for ETCD_PORT,
# ETCD_PEER_PORT, DIR and the words of KUBELET_CP_ETCD_ARGS in EXTRA.
etcd_flags() {
  # Peer URLs too: etcd's default peer listener is *:2380, shared by every run.
  ETCD_FLAGS=(--name e2e --data-dir "$DIR/etcd/data"
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT"
    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT"
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT"
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT"
    --initial-cluster "e2e=http://127.0.0.1:$ETCD_PEER_PORT"
    --initial-cluster-state new --initial-cluster-token "e2e-$$"
    --logger zap --log-level warn "${EXTRA[@]}")
}

# launch_etcd: etcd on fresh free ports (not waited for: the PKI is made meanwhile).
launch_etcd() {
  split_args KUBELET_CP_ETCD_ARGS
  free_port ETCD_PORT
  free_port ETCD_PEER_PORT
  rm -rf "$DIR/etcd"
  mkdir -p "$DIR/etcd"
  chmod 700 "$DIR/etcd"
  log "starting etcd on 127.0.0.1:$ETCD_PORT (peer $ETCD_PEER_PORT; log: $LOG_DIR/etcd.log)"
  etcd_flags
  launch ETCD "$LOG_DIR/etcd.log" "$ETCD_BIN" "${ETCD_FLAGS[@]}"
  ETCD_LAUNCHED=$LAUNCHED_PID
}

# await_etcd: waits for the launched etcd; a lost port race relaunches it on other ports.
await_etcd() {
  local try rc
  for ((try = 0; try < 5; try++)); do
    rc=0
    await etcd "$ETCD_LAUNCHED" "$LOG_DIR/etcd.log" 30 etcd_healthy || rc=$?
    if ((rc == 75)); then
      launch_etcd
      continue
    fi
    state_set ETCD_PORT "$ETCD_PORT"
    state_set ETCD_PEER_PORT "$ETCD_PEER_PORT"
    return 0
  done
  die "etcd could not bind a port after 5 tries"
}

apiserver_ready() {
  [[ "$(curl -sS --max-time 3 --cacert "$DIR/pki/ca.crt" --cert "$DIR/pki/admin.crt" \
    --key "$DIR/pki/admin.key" "https://127.0.0.1:$APISERVER_PORT/readyz")" == ok ]]
}

# apiserver_flags: the kube-apiserver command line (without the binary) into APISERVER_FLAGS,
# for APISERVER_PORT, ETCD_PORT, DIR, KUBELET_CA and KUBELET_CP_APISERVER_ARGS.
apiserver_flags() {
  local kubelet_ca_args=()
  split_args KUBELET_CP_APISERVER_ARGS
  [[ -z "$KUBELET_CA" ]] || kubelet_ca_args=(--kubelet-certificate-authority="$KUBELET_CA")
  # --advertise-address: without it the apiserver advertises the host's primary address.
  # Endpoints may not hold a loopback address, so the `kubernetes` Service gets none
  # (--endpoint-reconciler-type=none; pods cannot reach the host's loopback anyway).
  # --cert-dir: its default is /var/run/kubernetes.
  # SidecarContainers (alpha in v1.28): the API keeps restartPolicy on init containers.
  # InPlacePodVerticalScaling (alpha in v1.28): container resources are mutable, resizePolicy is
  # kept and defaulted, status.resize is Proposed on a change (for the in-place resize suite; a
  # kubelet without the gate sees no difference unless a pod's resources change).
  APISERVER_FLAGS=(
    --etcd-servers="http://127.0.0.1:$ETCD_PORT"
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --endpoint-reconciler-type=none
    --secure-port="$APISERVER_PORT" --cert-dir="$DIR/apiserver-certs"
    --tls-cert-file="$DIR/pki/apiserver.crt" --tls-private-key-file="$DIR/pki/apiserver.key"
    --client-ca-file="$DIR/pki/ca.crt"
    --service-account-issuer="$SA_ISSUER"
    --service-account-key-file="$DIR/pki/sa.pub"
    --service-account-signing-key-file="$DIR/pki/sa.key"
    --service-cluster-ip-range="$SERVICE_CIDR"
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction
    --enable-bootstrap-token-auth=true
    --allow-privileged=true
    --feature-gates=SidecarContainers=true,InPlacePodVerticalScaling=true
    --kubelet-client-certificate="$DIR/pki/apiserver-kubelet-client.crt"
    --kubelet-client-key="$DIR/pki/apiserver-kubelet-client.key"
    --kubelet-preferred-address-types="${KUBELET_CP_ADDRESS_TYPES:-Hostname,InternalIP}"
    "${kubelet_ca_args[@]}" --profiling=false "${EXTRA[@]}")
}

# start_apiserver [PORT]: on a free port (retried when it loses a race for it), or on PORT
# (retried on it for a while: a port a restart needs is only taken for a moment, say by a
# client's outgoing connection).
start_apiserver() {
  local try rc fixed_port=${1:-}
  for ((try = 0; try < 5; try++)); do
    if [[ -n "$fixed_port" ]]; then
      ((try == 0)) || sleep 3
      APISERVER_PORT=$fixed_port
    else
      free_port APISERVER_PORT
    fi
    log "starting kube-apiserver on 127.0.0.1:$APISERVER_PORT (log: $LOG_DIR/kube-apiserver.log)"
    apiserver_flags
    launch APISERVER "$LOG_DIR/kube-apiserver.log" "$ASSETS/kube-apiserver" "${APISERVER_FLAGS[@]}"
    rc=0
    await kube-apiserver "$LAUNCHED_PID" "$LOG_DIR/kube-apiserver.log" 90 apiserver_ready || rc=$?
    ((rc == 75)) && continue
    state_set APISERVER_PORT "$APISERVER_PORT"
    return 0
  done
  die "kube-apiserver could not bind ${fixed_port:-a port} after 5 tries"
}

# healthz PORT: the component's /healthz on PORT answers ok over TLS checked against the CA.
healthz() {
  [[ "$(curl -sS --max-time 3 --cacert "$DIR/pki/ca.crt" "https://127.0.0.1:$1/healthz")" == ok ]]
}

# component_flags NAME PORT CERT_NAME EXTRA_VAR ARGS...: the controller manager's or the
# scheduler's command line (without the binary) into COMPONENT_FLAGS: ARGS, then its kubeconfig
# and a CA-signed serving cert on secure port PORT.
component_flags() {
  local name=$1 port=$2 cert=$3 extra_var=$4
  shift 4
  split_args "$extra_var"
  # --authentication/authorization-kubeconfig: delegated auth of its own endpoints (/healthz
  # stays open through --authorization-always-allow-paths' default).
  COMPONENT_FLAGS=("$@"
    --kubeconfig="$DIR/$name.kubeconfig"
    --authentication-kubeconfig="$DIR/$name.kubeconfig"
    --authorization-kubeconfig="$DIR/$name.kubeconfig"
    --bind-address=127.0.0.1 --secure-port="$port"
    --tls-cert-file="$DIR/pki/$cert.crt" --tls-private-key-file="$DIR/pki/$cert.key"
    --leader-elect=false --profiling=false "${EXTRA[@]}")
}

# start_component NAME STATE_KEY BIN CERT_NAME EXTRA_VAR ARGS...: the controller manager or the
# scheduler on a free secure port with a CA-signed serving cert; sets <STATE_KEY>_PORT. Does
# not wait (both start side by side); await_component does.
start_component() {
  local name=$1 key=$2 bin=$3 cert=$4 extra_var=$5 port
  shift 5
  free_port "${key}_PORT"
  port=${key}_PORT
  port=${!port}
  log "starting $name on 127.0.0.1:$port (log: $LOG_DIR/$name.log)"
  component_flags "$name" "$port" "$cert" "$extra_var" "$@"
  launch "$key" "$LOG_DIR/$name.log" "$bin" "${COMPONENT_FLAGS[@]}"
  printf -v "${key}_LAUNCHED" '%s' "$LAUNCHED_PID"
}

# await_component NAME STATE_KEY: waits for /healthz; returns 75 on a lost port race.
await_component() {
  local name=$1 key=$2 port pid rc=0
  port=${key}_PORT
  port=${!port}
  pid=${key}_LAUNCHED
  pid=${!pid}
  await "$name" "$pid" "$LOG_DIR/$name.log" 60 healthz "$port" || rc=$?
  ((rc == 0)) && state_set "${key}_PORT" "$port"
  return "$rc"
}

# The controller manager's and the scheduler's own flags. Cloud controllers are left out: the
# binaries are built providerless. InPlacePodVerticalScaling as on the API server: the scheduler
# then counts a pod's allocatedResources, as upstream's does with the gate.
controller_manager_args() {
  CM_ARGS=(--use-service-account-credentials=true
    --feature-gates=InPlacePodVerticalScaling=true
    --service-account-private-key-file="$DIR/pki/sa.key"
    --root-ca-file="$DIR/pki/ca.crt"
    --cluster-signing-cert-file="$DIR/pki/ca.crt" --cluster-signing-key-file="$DIR/pki/ca.key"
    --controllers='*,-cloud-node-lifecycle-controller,-service-lb-controller,-node-route-controller'
    --cert-dir="$DIR/controller-manager-certs")
}

start_controller_manager() {
  controller_manager_args
  start_component kube-controller-manager CONTROLLER_MANAGER "$ASSETS/kube-controller-manager" \
    controller-manager-serving KUBELET_CP_CONTROLLER_MANAGER_ARGS "${CM_ARGS[@]}"
}

start_scheduler() {
  start_component kube-scheduler SCHEDULER "$ASSETS/kube-scheduler" scheduler-serving \
    KUBELET_CP_SCHEDULER_ARGS --cert-dir="$DIR/scheduler-certs" \
    --feature-gates=InPlacePodVerticalScaling=true
}

# kubectl_admin ARGS...: the assets' kubectl as cluster-admin.
kubectl_admin() { "$ASSETS/kubectl" --kubeconfig "$DIR/admin.kubeconfig" --request-timeout=5s "$@"; }

# The default namespace is usable: its ServiceAccount exists (the controller manager made it)
# and kube-node-lease exists (a kubelet's Lease goes there).
cluster_usable() {
  kubectl_admin get --raw /api/v1/namespaces/default/serviceaccounts/default &&
    kubectl_admin get --raw /api/v1/namespaces/kube-node-lease
}

# ---------------------------------------------------------------------------
# /etc/hosts: node names resolve to 127.0.0.1 for the apiserver (a Go resolver reads the file).
# Lines carry a tag naming DIR; edits hold a lock (concurrent node-cert calls and runs) and
# rewrite the file in place (in a container it is often a bind mount that cannot be replaced).
# ---------------------------------------------------------------------------

readonly HOSTS_FILE=${KUBELET_CP_HOSTS_FILE:-/etc/hosts}
readonly HOSTS_LOCK=/run/lock/kubelet-e2e-controlplane-hosts.lock

hosts_tag() { echo "# kubelet-e2e-controlplane $DIR"; }

# hosts_add NAME: `127.0.0.1 NAME <tag>` unless NAME already has a line of this run.
hosts_add() {
  local name=$1 tag
  tag=$(hosts_tag)
  [[ -w "$HOSTS_FILE" ]] || {
    log "warning: $HOSTS_FILE is not writable; the apiserver cannot resolve node $name"
    return 0
  }
  mkdir -p "${HOSTS_LOCK%/*}"
  (
    flock -w 30 9 || die "cannot lock $HOSTS_LOCK"
    grep -qxF "127.0.0.1 $name $tag" "$HOSTS_FILE" || printf '127.0.0.1 %s %s\n' "$name" "$tag" >>"$HOSTS_FILE"
  ) 9>"$HOSTS_LOCK"
}

# hosts_remove: drops every line of this run.
hosts_remove() {
  local tag tmp
  tag=$(hosts_tag)
  [[ -f "$HOSTS_FILE" ]] && grep -qF -- "$tag" "$HOSTS_FILE" || return 0
  mkdir -p "${HOSTS_LOCK%/*}"
  (
    flock -w 30 9 || die "cannot lock $HOSTS_LOCK"
    tmp=$(mktemp)
    awk -v t="$tag" '!(length($0) >= length(t) && substr($0, length($0) - length(t) + 1) == t)' \
      "$HOSTS_FILE" >"$tmp"
    cat "$tmp" >"$HOSTS_FILE"
    rm -f "$tmp"
  ) 9>"$HOSTS_LOCK"
  log "removed this run's node names from $HOSTS_FILE"
}

# ---------------------------------------------------------------------------
# up / down / node-cert
# ---------------------------------------------------------------------------

# healthy: DIR describes a running control plane that answers.
healthy() {
  [[ -f "$DIR/env" && -f "$DIR/.state" ]] || return 1
  grep -q '^KUBELET_CP_SKIPPED=' "$DIR/env" && return 1
  state_load
  local k pid
  for k in ETCD APISERVER CONTROLLER_MANAGER SCHEDULER; do
    pid=S_${k}_PID
    pid_alive "${!pid:-}" "$DIR/" || return 1
  done
  APISERVER_PORT=${S_APISERVER_PORT:-}
  [[ -n "$APISERVER_PORT" ]] && apiserver_ready
}

# write_env KEY=VALUE...: DIR/env, replaced atomically (a test never reads half a file).
write_env() {
  printf '%s\n' "$@" >"$DIR/env.tmp"
  mv -f "$DIR/env.tmp" "$DIR/env"
}

# skip REASON: the fixture cannot run here. Exit 0 with a one-line SKIPPED notice (CTest marks
# the setup test skipped; tests skip with the reason), or fail under KUBELET_CP_REQUIRED=1.
skip() {
  local reason=${1//\'/}
  if [[ "${KUBELET_CP_REQUIRED:-0}" == 1 ]]; then
    die "KUBELET_CP_REQUIRED=1 but the control plane cannot start: $reason"
  fi
  mkdir -p "$DIR"
  : >"$DIR/$MARKER"
  write_env "KUBELET_CP_SKIPPED='$reason'" "KUBELET_CP_DIR=$DIR"
  echo "SKIPPED: $reason"
  exit 0
}

# env_get KEY: KUBELET_CP_<KEY> from DIR/env.
env_get() { sed -n "s/^KUBELET_CP_$1=//p" "$DIR/env" | tail -n1; }

# apiserver-stop / apiserver-start: an outage of the API server alone (etcd, the controller
# manager and the scheduler keep running), restarted with the flags and the port `up` used.
cmd_apiserver_stop() {
  [[ -f "$DIR/$MARKER" ]] || die "$DIR is not a control plane of this harness"
  state_load
  stop_pid "${S_APISERVER_PID:-}" kube-apiserver
}

cmd_apiserver_start() {
  [[ -f "$DIR/$MARKER" && -f "$DIR/env" ]] || die "$DIR is not a running control plane"
  state_load
  if pid_alive "${S_APISERVER_PID:-}" "$DIR/"; then
    log "kube-apiserver already runs (pid $S_APISERVER_PID)"
    return 0
  fi
  ASSETS=$(env_get ASSETS)
  LOG_DIR=$(env_get LOG_DIR)
  KUBELET_CA=$(env_get KUBELET_CA)
  ETCD_PORT=$(env_get ETCD_PORT)
  [[ -n "$ASSETS" && -n "$LOG_DIR" && -n "$ETCD_PORT" && -n "${S_APISERVER_PORT:-}" ]] ||
    die "$DIR/env lacks what a restart needs"
  local t0
  t0=$(now)
  start_apiserver "$S_APISERVER_PORT"
  log "kube-apiserver back on 127.0.0.1:$APISERVER_PORT in $(since "$t0")s"
}

cmd_up() {
  local t0 t_etcd t_api t_rest v
  t0=$(now)
  if ((!FRESH)) && healthy; then
    log "control plane in $DIR is already up (apiserver https://127.0.0.1:$APISERVER_PORT)"
    return 0
  fi
  # Whatever is there (a stale or half-made run, a skipped one) goes first.
  if [[ -e "$DIR" ]]; then
    cmd_down
    rm -rf "$DIR/logs"
  fi
  find_assets
  [[ -z "$SKIP_REASON" ]] || skip "$SKIP_REASON"
  KUBELET_CA=${KUBELET_CA_OPT:-${KUBELET_CP_KUBELET_CA:-}}

  mkdir -p "$DIR"
  : >"$DIR/$MARKER"
  : >"$DIR/.state"
  LOG_DIR=$DIR/logs
  mkdir -p "$LOG_DIR"
  log "assets: $ASSETS, etcd: $ETCD_BIN"

  # etcd needs no certificates: it starts while the PKI is made.
  launch_etcd
  make_pki
  if [[ "$KUBELET_CA" == cluster ]]; then
    KUBELET_CA=$DIR/pki/ca.crt
  elif [[ -n "$KUBELET_CA" ]]; then
    KUBELET_CA=$(realpath -- "$KUBELET_CA") || die "--kubelet-ca: no such file"
  fi
  log "PKI made in $DIR/pki ($(since "$t0")s)"
  await_etcd
  t_etcd=$(now)
  log "etcd is up (pid $S_ETCD_PID) after $(since "$t0")s"
  start_apiserver
  t_api=$(now)
  log "kube-apiserver is ready (pid $S_APISERVER_PID) $(since "$t_etcd")s after etcd"

  write_kubeconfig "$DIR/admin.kubeconfig" "$DIR/pki/admin.crt" "$DIR/pki/admin.key" admin
  write_kubeconfig "$DIR/kube-controller-manager.kubeconfig" "$DIR/pki/controller-manager.crt" \
    "$DIR/pki/controller-manager.key" system:kube-controller-manager
  write_kubeconfig "$DIR/kube-scheduler.kubeconfig" "$DIR/pki/scheduler.crt" \
    "$DIR/pki/scheduler.key" system:kube-scheduler

  # A lost port race (rare) restarts just that component.
  local try rc
  start_controller_manager
  start_scheduler
  for ((try = 0; ; try++)); do
    rc=0
    await_component kube-controller-manager CONTROLLER_MANAGER || rc=$?
    ((rc == 0)) && break
    ((try < 4)) || die "kube-controller-manager could not bind a port"
    start_controller_manager
  done
  for ((try = 0; ; try++)); do
    rc=0
    await_component kube-scheduler SCHEDULER || rc=$?
    ((rc == 0)) && break
    ((try < 4)) || die "kube-scheduler could not bind a port"
    start_scheduler
  done
  log "kube-controller-manager (pid $S_CONTROLLER_MANAGER_PID) and kube-scheduler (pid $S_SCHEDULER_PID) are healthy"

  await "default ServiceAccount" "$S_APISERVER_PID" "$LOG_DIR/kube-apiserver.log" 60 cluster_usable
  t_rest=$(since "$t_api")
  v=$(kubectl_admin version -o json | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p' | tail -n1)

  local up_s
  up_s=$(since "$t0")
  write_env \
    "KUBELET_CP_SERVER=https://127.0.0.1:$S_APISERVER_PORT" \
    "KUBELET_CP_CA=$DIR/pki/ca.crt" \
    "KUBELET_CP_CA_KEY=$DIR/pki/ca.key" \
    "KUBELET_CP_ADMIN_KUBECONFIG=$DIR/admin.kubeconfig" \
    "KUBELET_CP_KUBECTL=$ASSETS/kubectl" \
    "KUBELET_CP_KUBELET_CLIENT_CERT=$DIR/pki/apiserver-kubelet-client.crt" \
    "KUBELET_CP_KUBELET_CLIENT_KEY=$DIR/pki/apiserver-kubelet-client.key" \
    "KUBELET_CP_KUBELET_CA=$KUBELET_CA" \
    "KUBELET_CP_SERVICE_CIDR=$SERVICE_CIDR" \
    "KUBELET_CP_SERVICE_IP=$SERVICE_IP" \
    "KUBELET_CP_SA_ISSUER=$SA_ISSUER" \
    "KUBELET_CP_VERSION=$v" \
    "KUBELET_CP_ETCD_PORT=$S_ETCD_PORT" \
    "KUBELET_CP_ETCD_PEER_PORT=$S_ETCD_PEER_PORT" \
    "KUBELET_CP_APISERVER_PORT=$S_APISERVER_PORT" \
    "KUBELET_CP_CONTROLLER_MANAGER_PORT=$S_CONTROLLER_MANAGER_PORT" \
    "KUBELET_CP_SCHEDULER_PORT=$S_SCHEDULER_PORT" \
    "KUBELET_CP_ETCD_PID=$S_ETCD_PID" \
    "KUBELET_CP_APISERVER_PID=$S_APISERVER_PID" \
    "KUBELET_CP_CONTROLLER_MANAGER_PID=$S_CONTROLLER_MANAGER_PID" \
    "KUBELET_CP_SCHEDULER_PID=$S_SCHEDULER_PID" \
    "KUBELET_CP_DIR=$DIR" \
    "KUBELET_CP_LOG_DIR=$LOG_DIR" \
    "KUBELET_CP_ASSETS=$ASSETS" \
    "KUBELET_CP_SCRIPT=$SCRIPT" \
    "KUBELET_CP_UP_SECONDS=$up_s"
  echo "controlplane $v up in ${up_s}s (etcd $(awk -v a="$t0" -v b="$t_etcd" 'BEGIN{printf "%.1f", b-a}')s, apiserver ready $(awk -v a="$t_etcd" -v b="$t_api" 'BEGIN{printf "%.1f", b-a}')s later, controller manager + scheduler + default ServiceAccount ${t_rest}s more): https://127.0.0.1:$S_APISERVER_PORT, env $DIR/env"
}

cmd_down() {
  if [[ ! -d "$DIR" ]]; then
    log "$DIR does not exist; nothing to tear down"
    return 0
  fi
  if [[ ! -e "$DIR/$MARKER" ]]; then
    [[ -z "$(ls -A "$DIR")" ]] || die "$DIR was not made by this script (no $MARKER); refusing to delete it"
    rmdir "$DIR"
    return 0
  fi
  unset "${!S_@}"
  state_load
  log "tearing down $DIR"
  # Clients first, etcd last: the apiserver then shuts down against a live store.
  stop_pid "${S_SCHEDULER_PID:-}" kube-scheduler
  stop_pid "${S_CONTROLLER_MANAGER_PID:-}" kube-controller-manager
  stop_pid "${S_APISERVER_PID:-}" kube-apiserver
  stop_pid "${S_ETCD_PID:-}" etcd
  sweep
  hosts_remove
  # Runtime state goes; logs stay for a post-mortem (the next `up` clears them).
  local e
  for e in "$DIR"/* "$DIR"/.[!.]*; do
    [[ -e "$e" ]] || continue
    case ${e##*/} in
      logs | "$MARKER") ;;
      *) rm -rf -- "$e" ;;
    esac
  done
  if [[ -d "$DIR/logs" ]]; then
    log "down done: runtime state removed; logs kept in $DIR/logs"
  else
    rm -f "$DIR/$MARKER"
    rmdir "$DIR" 2>/dev/null || true
    log "down done: $DIR removed"
  fi
}

cmd_node_cert() {
  local name=$1 node_dir
  [[ "$name" =~ ^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$ ]] ||
    die "node name '$name' is not a DNS subdomain"
  [[ -f "$DIR/env" && -f "$DIR/pki/ca.key" ]] || die "no control plane in $DIR (run up first)"
  APISERVER_PORT=$(sed -n 's/^KUBELET_CP_APISERVER_PORT=//p' "$DIR/env")
  [[ -n "$APISERVER_PORT" ]] || die "$DIR/env names no apiserver port"
  node_dir=$DIR/nodes/$name
  mkdir -p "$node_dir"
  # Made under a temporary name inside pki/ (sign writes there) and then moved, so concurrent
  # calls for different nodes do not clash.
  local tmp=node-$name-$$
  sign "$tmp" "/O=system:nodes/CN=system:node:$name" "$(client_ext)"
  mv -f "$DIR/pki/$tmp.key" "$node_dir/client.key"
  mv -f "$DIR/pki/$tmp.crt" "$node_dir/client.crt"
  # Its kubelet serving cert, signed by the cluster CA (so `up --kubelet-ca cluster` verifies
  # it), for the name and loopback.
  sign "$tmp" "/O=system:nodes/CN=system:node:$name" "$(server_ext "DNS:$name,DNS:localhost,IP:127.0.0.1")"
  mv -f "$DIR/pki/$tmp.key" "$node_dir/serving.key"
  mv -f "$DIR/pki/$tmp.crt" "$node_dir/serving.crt"
  write_kubeconfig "$node_dir/kubeconfig.tmp" "$node_dir/client.crt" "$node_dir/client.key" \
    "system:node:$name"
  mv -f "$node_dir/kubeconfig.tmp" "$node_dir/kubeconfig"
  hosts_add "$name"
  echo "$node_dir/kubeconfig"
}

# ---------------------------------------------------------------------------
# static-pods: the same control plane as static pods of a kubelet (self-hosted, as kubeadm and
# OpenShift run it). Nothing is started here: the PKI, the kubeconfigs, the node's identity and
# DIR/env are made, and one manifest per component is written to MANIFEST_DIR. Each pod runs
# the component's binary from the host (hostPath mounts of the binary, of a dynamically linked
# etcd's libraries and of DIR, at the same paths, so the flags are those `up` uses) in IMAGE on
# the host network; the ports are picked free as for `up`.
# ---------------------------------------------------------------------------

# yaml_str S: S as a double-quoted YAML scalar.
yaml_str() {
  local v=${1//\\/\\\\}
  printf '"%s"' "${v//\"/\\\"}"
}

# write_static_pod FILE NAME BIN EXTRA_YAML FLAGS...: a static pod manifest for a component.
# Mounts DIR, the binary and (when it is dynamically linked) the libraries `ldd` names; MOUNTS
# (pairs of host path and container path) collects them.
write_static_pod() {
  local file=$1 name=$2 bin=$3 extra=$4 f i lib real
  shift 4
  local mounts=("$DIR" "$DIR" "$(realpath -- "$bin")" "$bin")
  # A dynamically linked binary (Debian's etcd) finds its libraries at the paths ldd reports.
  while read -r lib; do
    [[ -n "$lib" ]] || continue
    real=$(realpath -- "$lib") || continue
    mounts+=("$real" "$lib")
  done < <({ ldd "$bin" 2>/dev/null || true; } | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p')
  {
    printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: kube-system\n' "$name"
    printf '  labels:\n    component: %s\n    tier: control-plane\n' "$name"
    printf 'spec:\n  hostNetwork: true\n  priorityClassName: system-node-critical\n'
    printf '  terminationGracePeriodSeconds: 15\n  containers:\n  - name: %s\n' "$name"
    printf '    image: %s\n    command:\n    - %s\n' "$(yaml_str "$IMAGE")" "$(yaml_str "$bin")"
    for f in "$@"; do printf '    - %s\n' "$(yaml_str "$f")"; done
    [[ -z "$extra" ]] || printf '%s\n' "$extra"
    printf '    volumeMounts:\n'
    for ((i = 0; i < ${#mounts[@]}; i += 2)); do
      printf '    - name: m%d\n      mountPath: %s\n' "$((i / 2))" "$(yaml_str "${mounts[i + 1]}")"
      ((i == 0)) || printf '      readOnly: true\n'
    done
    printf '  volumes:\n'
    for ((i = 0; i < ${#mounts[@]}; i += 2)); do
      printf '  - name: m%d\n    hostPath:\n      path: %s\n' "$((i / 2))" "$(yaml_str "${mounts[i]}")"
      if ((i == 0)); then printf '      type: Directory\n'; else printf '      type: File\n'; fi
    done
  } >"$DIR/.$name.yaml.tmp"
  mv -f "$DIR/.$name.yaml.tmp" "$file"
}

cmd_static_pods() {
  local manifests=$1 node=$2 t0
  t0=$(now)
  [[ -d "$manifests" ]] || die "no manifest directory $manifests"
  manifests=$(realpath -- "$manifests")
  if [[ -e "$DIR" ]]; then
    cmd_down
    rm -rf "$DIR/logs"
  fi
  find_assets
  [[ -z "$SKIP_REASON" ]] || skip "$SKIP_REASON"
  KUBELET_CA=''
  mkdir -p "$DIR"
  : >"$DIR/$MARKER"
  : >"$DIR/.state"
  LOG_DIR=$DIR/logs
  mkdir -p "$LOG_DIR" "$DIR/etcd"
  chmod 700 "$DIR/etcd"
  make_pki
  free_port ETCD_PORT
  free_port ETCD_PEER_PORT
  free_port APISERVER_PORT
  free_port CONTROLLER_MANAGER_PORT
  free_port SCHEDULER_PORT
  write_kubeconfig "$DIR/admin.kubeconfig" "$DIR/pki/admin.crt" "$DIR/pki/admin.key" admin
  write_kubeconfig "$DIR/kube-controller-manager.kubeconfig" "$DIR/pki/controller-manager.crt" \
    "$DIR/pki/controller-manager.key" system:kube-controller-manager
  write_kubeconfig "$DIR/kube-scheduler.kubeconfig" "$DIR/pki/scheduler.crt" \
    "$DIR/pki/scheduler.key" system:kube-scheduler
  write_env \
    "KUBELET_CP_SERVER=https://127.0.0.1:$APISERVER_PORT" \
    "KUBELET_CP_CA=$DIR/pki/ca.crt" \
    "KUBELET_CP_CA_KEY=$DIR/pki/ca.key" \
    "KUBELET_CP_ADMIN_KUBECONFIG=$DIR/admin.kubeconfig" \
    "KUBELET_CP_KUBECTL=$ASSETS/kubectl" \
    "KUBELET_CP_KUBELET_CLIENT_CERT=$DIR/pki/apiserver-kubelet-client.crt" \
    "KUBELET_CP_KUBELET_CLIENT_KEY=$DIR/pki/apiserver-kubelet-client.key" \
    "KUBELET_CP_KUBELET_CA=" \
    "KUBELET_CP_SERVICE_CIDR=$SERVICE_CIDR" \
    "KUBELET_CP_SERVICE_IP=$SERVICE_IP" \
    "KUBELET_CP_SA_ISSUER=$SA_ISSUER" \
    "KUBELET_CP_ETCD_PORT=$ETCD_PORT" \
    "KUBELET_CP_ETCD_PEER_PORT=$ETCD_PEER_PORT" \
    "KUBELET_CP_APISERVER_PORT=$APISERVER_PORT" \
    "KUBELET_CP_CONTROLLER_MANAGER_PORT=$CONTROLLER_MANAGER_PORT" \
    "KUBELET_CP_SCHEDULER_PORT=$SCHEDULER_PORT" \
    "KUBELET_CP_DIR=$DIR" \
    "KUBELET_CP_LOG_DIR=$LOG_DIR" \
    "KUBELET_CP_ASSETS=$ASSETS" \
    "KUBELET_CP_ETCD=$ETCD_BIN" \
    "KUBELET_CP_MANIFESTS=$manifests" \
    "KUBELET_CP_SCRIPT=$SCRIPT"
  cmd_node_cert "$node" >/dev/null

  split_args KUBELET_CP_ETCD_ARGS
  etcd_flags
  write_static_pod "$manifests/etcd.yaml" etcd "$ETCD_BIN" '' "${ETCD_FLAGS[@]}"
  apiserver_flags
  # Ready once /readyz answers (anonymous may read it); the mirror pod shows it.
  write_static_pod "$manifests/kube-apiserver.yaml" kube-apiserver "$ASSETS/kube-apiserver" \
    "$(printf '    readinessProbe:\n      httpGet:\n        host: 127.0.0.1\n        port: %s\n        path: /readyz\n        scheme: HTTPS\n      periodSeconds: 1\n      failureThreshold: 3\n    resources:\n      requests:\n        cpu: 100m\n' "$APISERVER_PORT")" \
    "${APISERVER_FLAGS[@]}"
  controller_manager_args
  component_flags kube-controller-manager "$CONTROLLER_MANAGER_PORT" controller-manager-serving \
    KUBELET_CP_CONTROLLER_MANAGER_ARGS "${CM_ARGS[@]}"
  write_static_pod "$manifests/kube-controller-manager.yaml" kube-controller-manager \
    "$ASSETS/kube-controller-manager" '' "${COMPONENT_FLAGS[@]}"
  component_flags kube-scheduler "$SCHEDULER_PORT" scheduler-serving KUBELET_CP_SCHEDULER_ARGS \
    --cert-dir="$DIR/scheduler-certs"
  write_static_pod "$manifests/kube-scheduler.yaml" kube-scheduler "$ASSETS/kube-scheduler" '' \
    "${COMPONENT_FLAGS[@]}"
  log "static pod manifests for https://127.0.0.1:$APISERVER_PORT written to $manifests in $(since "$t0")s"
  echo "$DIR/nodes/$node/kubeconfig"
}

main() {
  (($# >= 2)) || usage
  local cmd=$1 node_name='' manifest_dir=''
  DIR=$2
  shift 2
  FRESH=0
  KUBELET_CA_OPT=''
  SCRIPT=$(realpath -- "${BASH_SOURCE[0]}")
  if [[ "$cmd" == node-cert ]]; then
    (($# == 1)) || usage
    node_name=$1
    shift
  elif [[ "$cmd" == static-pods ]]; then
    (($# == 3)) || usage
    manifest_dir=$1
    node_name=$2
    IMAGE=$3
    shift 3
  fi
  while (($# > 0)); do
    case $1 in
      --fresh) FRESH=1 ;;
      --kubelet-ca)
        (($# >= 2)) || usage
        KUBELET_CA_OPT=$2
        shift
        ;;
      *) usage ;;
    esac
    shift
  done
  [[ -n "$DIR" && "$DIR" != *[[:space:]]* ]] || die "DIR must be non-empty and without whitespace"
  DIR=$(realpath -m -- "$DIR")
  [[ "$DIR" != / && "$DIR" != /root && "$DIR" != /tmp && "$DIR" != /home ]] || die "refusing DIR=$DIR"
  case $cmd in
    up)
      set -E
      trap 'die "command failed (exit $?) at line $LINENO: $BASH_COMMAND"' ERR
      cmd_up
      ;;
    down) cmd_down ;;
    apiserver-stop) cmd_apiserver_stop ;;
    apiserver-start) cmd_apiserver_start ;;
    node-cert) cmd_node_cert "$node_name" ;;
    static-pods)
      set -E
      trap 'die "command failed (exit $?) at line $LINENO: $BASH_COMMAND"' ERR
      cmd_static_pods "$manifest_dir" "$node_name"
      ;;
    *) usage ;;
  esac
}

main "$@"
