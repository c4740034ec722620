// Internal helpers shared by the pod validation translation units (pod_validation_*.cc), which
// together implement api/pod_validation.h. Private to those files; not part of the API.
#ifndef KUBELET_API_POD_VALIDATION_INTERNAL_H_
#define KUBELET_API_POD_VALIDATION_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/pod.h"
#include "api/pod_validation.h"

namespace kubelet::api::validation_internal {

using Errs = FieldErrorList;
using Strs = std::vector<std::string>;

inline constexpr char kIsNegativeErrorMsg[] = "must be greater than or equal to 0";
inline constexpr int64_t kMaxInt32 = 2147483647;

// ---------------------------------------------------------------------------------------------
// pod_validation_util.cc: paths and error constructors
// (k8s.io/apimachinery/pkg/util/validation/field).

std::string Child(const std::string& p, std::string_view c);
std::string Idx(const std::string& p, size_t i);
std::string Key(const std::string& p, std::string_view k);

std::string Q(std::string_view s);

FieldError Required(std::string f, std::string detail = "");
FieldError Forbidden(std::string f, std::string detail);
FieldError Invalid(std::string f, std::string rendered, std::string detail);
FieldError InvalidS(std::string f, std::string_view v, std::string detail);
FieldError InvalidI(std::string f, int64_t v, std::string detail);
FieldError Duplicate(std::string f, std::string rendered);
FieldError NotFound(std::string f, std::string rendered);
FieldError NotSupported(std::string f, std::string rendered, const Strs& valid);
FieldError TooLong(std::string f, int64_t max);

void Append(Errs* e, Errs more);
void Append(Strs* e, Strs more);

// ---------------------------------------------------------------------------------------------
// pod_validation_util.cc: string format checks (k8s.io/apimachinery/pkg/util/validation).

// apimachinery NameIsDNSSubdomain / NameIsDNSLabel with the prefix (generateName) masking.
Strs NameIsDNSSubdomain(std::string_view name, bool prefix);
Strs NameIsDNSLabel(std::string_view name, bool prefix);

Errs ValidateDNS1123Label(std::string_view v, const std::string& path);
Errs ValidateDNS1123Subdomain(std::string_view v, const std::string& path);
Errs ValidateQualifiedName(std::string_view v, const std::string& path);
// A "name" check (ValidateNameFunc style) reported as Invalid(path, value, msg).
Errs NameErrs(const Strs& msgs, const std::string& path, std::string_view value);

Strs IsValidUserID(int64_t id);
Strs IsHTTPHeaderName(std::string_view v);
bool IsAbsPath(std::string_view p);

// ---------------------------------------------------------------------------------------------
// pod_validation_resources.cc: resource names, quantities and requirements.

Errs ValidateResourceRequirements(const ResourceRequirements& r,
                                  const std::set<std::string>& pod_claim_names,
                                  const std::string& path);

// ---------------------------------------------------------------------------------------------
// pod_validation_meta.cc: metadata.

Errs ValidateLabels(const StringMap& labels, const std::string& path);

// ---------------------------------------------------------------------------------------------
// pod_validation_volumes.cc: volumes, local paths and downward API selectors.

Errs ValidatePathNoBacksteps(std::string_view target, const std::string& path);
Errs ValidateLocalDescendingPath(std::string_view target, const std::string& path);

Errs ValidateObjectFieldSelector(const ObjectFieldSelector& fs, const Strs& expressions,
                                 const std::string& path);
Errs ValidateContainerResourceFieldSelector(const ResourceFieldSelector& fs,
                                            const std::string& path, bool volume);

// Returns the valid volumes by name.
std::map<std::string, const Volume*> ValidateVolumes(const std::vector<Volume>& volumes,
                                                     const std::string& path, Errs* e);

// ---------------------------------------------------------------------------------------------
// pod_validation_containers.cc: containers, init containers and ephemeral containers.

Errs ValidateContainers(const std::vector<Container>& containers,
                        const std::map<std::string, const Volume*>& vols,
                        const std::set<std::string>& claim_names, const std::string& path);
Errs ValidateInitContainers(const std::vector<Container>& containers,
                            const std::vector<Container>& regular,
                            const std::map<std::string, const Volume*>& vols,
                            const std::set<std::string>& claim_names, const std::string& path);
Errs ValidateEphemeralContainers(const PodSpec& spec,
                                 const std::map<std::string, const Volume*>& vols,
                                 const std::set<std::string>& claim_names, const std::string& path);

// ---------------------------------------------------------------------------------------------
// pod_validation_spec.cc: security contexts and the pod spec.

Errs ValidateSecurityContext(const Box<SecurityContext>& sc, const std::string& path);
Errs ValidatePodSpec(const PodSpec& spec, const ObjectMeta& meta, const std::string& path);

}  // namespace kubelet::api::validation_internal

#endif  // KUBELET_API_POD_VALIDATION_INTERNAL_H_
