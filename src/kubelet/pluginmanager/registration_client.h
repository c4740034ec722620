// The gRPC RegistrationClient: one short-lived connection per call to a plugin's registration
// socket (unix), as upstream's operation generator dials for each registration. Errors carry
// upstream's texts ("RegisterPlugin error -- dial failed at socket S, err: E", "... failed to get
// plugin info using RPC GetInfo at socket S, err: E"). Thread-safe (no state).
#ifndef KUBELET_KUBELET_PLUGINMANAGER_REGISTRATION_CLIENT_H_
#define KUBELET_KUBELET_PLUGINMANAGER_REGISTRATION_CLIENT_H_

#include <memory>

#include "kubelet/pluginmanager/plugin_manager.h"

namespace kubelet::pluginmanager {

std::unique_ptr<RegistrationClient> NewGrpcRegistrationClient();

}  // namespace kubelet::pluginmanager

#endif  // KUBELET_KUBELET_PLUGINMANAGER_REGISTRATION_CLIENT_H_
