// Pod defaulting, a port of upstream v1.28 pkg/apis/core/v1 defaulting as generated into
// SetObjectDefaults_Pod (SetDefaults_Pod, SetDefaults_PodSpec, SetDefaults_Container, +default
// markers, volume/probe/handler/field-selector defaults, ResourceList milli rounding):
//   spec: restartPolicy Always, dnsPolicy ClusterFirst, securityContext {},
//     terminationGracePeriodSeconds 30, schedulerName default-scheduler, enableServiceLinks true;
//     hostNetwork: every container port with hostPort 0 gets hostPort = containerPort.
//   containers (init, regular, ephemeral): terminationMessagePath /dev/termination-log,
//     terminationMessagePolicy File, imagePullPolicy Always for ":latest" or untagged images,
//     else IfNotPresent (digest-only references -> IfNotPresent); ports protocol TCP; env
//     fieldRef apiVersion v1; resources rounded up to milli precision; regular and init
//     containers: requests default to limits for every resource that has a limit but no request.
//   probes: timeoutSeconds 1, periodSeconds 10, successThreshold 1, failureThreshold 3; httpGet
//     (probes and lifecycle handlers) path "/" and scheme HTTP; grpc service "".
//   volumes: no source -> emptyDir {}; hostPath type ""; secret/configMap/downwardAPI/projected
//     defaultMode 0644; downward API fieldRef apiVersion v1; serviceAccountToken
//     expirationSeconds 3600.
// Not ported: defaults inside opaque volume sources (iscsi, rbd, azureDisk, scaleIO, ephemeral
// claim templates), and the InPlacePodVerticalScaling resizePolicy default (alpha, off in 1.28).
// Idempotent. Pure functions; thread-safe.
#ifndef KUBELET_API_POD_DEFAULTS_H_
#define KUBELET_API_POD_DEFAULTS_H_

#include <string>
#include <string_view>

#include "api/pod.h"

namespace kubelet::api {

void SetDefaultsPod(Pod* pod);

// The imagePullPolicy SetDefaults_Container picks for `image` (Always or IfNotPresent).
std::string DefaultImagePullPolicy(std::string_view image);

// Parses a container image reference like docker's reference.ParseNormalizedNamed and returns
// its tag and digest ("" when absent). False when the reference is invalid.
bool ParseImageReference(std::string_view image, std::string* tag, std::string* digest);

}  // namespace kubelet::api

#endif  // KUBELET_API_POD_DEFAULTS_H_
