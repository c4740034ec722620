#include "kubelet/volume/content_plugins.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "api/testing/pod_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/events/testing/fake_recorder.h"
#include "kubelet/volume/mount_utils.h"
#include "kubelet/volume/volume_manager.h"

namespace kubelet::volume {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// ObjectSource from maps; records registrations.
class FakeObjects final : public ObjectSource {
 public:
  void RegisterPod(const api::Pod& pod) override {
    absl::MutexLock l(&mu);
    registered[pod.metadata.uid]++;
  }
  void UnregisterPod(const std::string& uid) override {
    absl::MutexLock l(&mu);
    unregistered.push_back(uid);
  }
  absl::StatusOr<api::ConfigMap> GetConfigMap(const std::string& ns,
                                              const std::string& name) override {
    absl::MutexLock l(&mu);
    auto it = config_maps.find(ns + "/" + name);
    if (it == config_maps.end()) {
      return absl::NotFoundError(absl::StrCat("configmap \"", name, "\" not found"));
    }
    return it->second;
  }
  absl::StatusOr<api::Secret> GetSecret(const std::string& ns, const std::string& name) override {
    absl::MutexLock l(&mu);
    auto it = secrets.find(ns + "/" + name);
    if (it == secrets.end()) {
      return absl::NotFoundError(absl::StrCat("secret \"", name, "\" not found"));
    }
    return it->second;
  }
  absl::Mutex mu;
  std::map<std::string, api::ConfigMap> config_maps;
  std::map<std::string, api::Secret> secrets;
  std::map<std::string, int> registered;
  std::vector<std::string> unregistered;
};

class FakeTokenClient final : public TokenClient {
 public:
  explicit FakeTokenClient(const Clock& clock) : clock_(clock) {}
  absl::StatusOr<api::TokenRequest> CreateToken(const std::string& ns, const std::string& name,
                                                const api::TokenRequest& request) override {
    ++calls;
    last = request;
    last_sa = ns + "/" + name;
    if (!fail.ok()) return fail;
    api::TokenRequest out = request;
    out.status.token = absl::StrCat("jwt-", calls);
    out.status.expiration_timestamp = api::Time::FromUnix(
        absl::ToUnixSeconds(clock_.Now()) + request.spec.expiration_seconds.value_or(3600));
    return out;
  }
  const Clock& clock_;
  int calls = 0;
  absl::Status fail;
  api::TokenRequest last;
  std::string last_sa;
};

api::Pod MakePod() {
  return api::testing::PodBuilder("web").Namespace("ns1").Uid("uid-1").ServiceAccount("default");
}

api::ConfigMap CM(std::map<std::string, std::string> data,
                  std::map<std::string, std::string> binary = {}) {
  api::ConfigMap cm;
  cm.metadata.name = "cfg";
  cm.metadata.namespace_ = "ns1";
  for (auto& [k, v] : data) cm.data[k] = v;
  cm.binary_data = std::move(binary);
  return cm;
}

TEST(ConfigMapPayloadTest, AllKeysWithDefaultMode) {
  absl::StatusOr<Payload> p =
      MakeConfigMapPayload({}, CM({{"a", "1"}}, {{"bin", std::string("\0\1", 2)}}), 0600, false);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(*p, ElementsAre(Pair("a", FileProjection{"1", 0600}),
                              Pair("bin", FileProjection{std::string("\0\1", 2), 0600})));
}

TEST(ConfigMapPayloadTest, ItemsPathsAndModes) {
  std::vector<api::KeyToPath> items = {{"a", "dir/x.conf", 0400}, {"bin", "b", std::nullopt}};
  absl::StatusOr<Payload> p =
      MakeConfigMapPayload(items, CM({{"a", "1"}, {"z", "2"}}, {{"bin", "B"}}), 0644, false);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(*p, ElementsAre(Pair("b", FileProjection{"B", 0644}),
                              Pair("dir/x.conf", FileProjection{"1", 0400})));
}

TEST(ConfigMapPayloadTest, MissingKeyFailsUnlessOptional) {
  std::vector<api::KeyToPath> items = {{"nope", "n", std::nullopt}, {"a", "a", std::nullopt}};
  absl::StatusOr<Payload> p = MakeConfigMapPayload(items, CM({{"a", "1"}}), 0644, false);
  EXPECT_EQ(p.status().message(), "configmap references non-existent config key: nope");
  p = MakeConfigMapPayload(items, CM({{"a", "1"}}), 0644, true);
  ASSERT_TRUE(p.ok());
  EXPECT_THAT(*p, ElementsAre(Pair("a", FileProjection{"1", 0644})));
}

TEST(SecretPayloadTest, KeysItemsAndMissingKey) {
  api::Secret s;
  s.data = {{"user", "admin"}, {"pass", "hunter2"}};
  absl::StatusOr<Payload> p = MakeSecretPayload({}, s, 0440, false);
  ASSERT_TRUE(p.ok());
  EXPECT_THAT(*p, ElementsAre(Pair("pass", FileProjection{"hunter2", 0440}),
                              Pair("user", FileProjection{"admin", 0440})));
  p = MakeSecretPayload({{"pass", "p/w", 0400}}, s, 0644, false);
  ASSERT_TRUE(p.ok());
  EXPECT_THAT(*p, ElementsAre(Pair("p/w", FileProjection{"hunter2", 0400})));
  p = MakeSecretPayload({{"x", "x", std::nullopt}}, s, 0644, false);
  EXPECT_EQ(p.status().message(), "references non-existent secret key: x");
}

TEST(VolumePayloadTest, MissingObjectRequiredOrOptional) {
  FakeObjects objects;
  api::Pod pod = MakePod();
  api::ConfigMapVolumeSource src;
  src.name = "cfg";
  absl::StatusOr<Payload> p = ConfigMapVolumePayload(pod, src, &objects);
  EXPECT_TRUE(absl::IsNotFound(p.status()));
  EXPECT_EQ(p.status().message(), "configmap \"cfg\" not found");
  src.optional = true;
  p = ConfigMapVolumePayload(pod, src, &objects);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->empty());

  api::SecretVolumeSource ss;
  ss.secret_name = "s";
  EXPECT_EQ(SecretVolumePayload(pod, ss, &objects).status().message(), "secret \"s\" not found");
  ss.optional = true;
  EXPECT_TRUE(SecretVolumePayload(pod, ss, &objects).ok());
}

TEST(VolumePayloadTest, StandaloneErrors) {
  api::Pod pod = MakePod();
  api::ConfigMapVolumeSource src;
  src.name = "cfg";
  src.optional = true;  // not a NotFound: optional does not help
  EXPECT_EQ(ConfigMapVolumePayload(pod, src, nullptr).status().message(),
            "not supported due to running kubelet in standalone mode");
  api::ProjectedVolumeSource proj;
  proj.sources.push_back({});
  proj.sources.back().service_account_token = api::ServiceAccountTokenProjection{"", 3607, "t"};
  EXPECT_EQ(ProjectedVolumePayload(pod, proj, nullptr, nullptr, {}).status().message(),
            "failed to fetch token: cannot use TokenManager when kubelet is in standalone mode");
}

// The volume the API server's ServiceAccount admission adds.
api::ProjectedVolumeSource KubeApiAccess() {
  api::ProjectedVolumeSource proj;
  proj.default_mode = 0644;
  api::VolumeProjection token;
  token.service_account_token = api::ServiceAccountTokenProjection{"", 3607, "token"};
  api::VolumeProjection ca;
  ca.config_map = api::ConfigMapProjection{"kube-root-ca.crt", {{"ca.crt", "ca.crt", {}}}, {}};
  api::VolumeProjection ns;
  ns.downward_api = api::DownwardAPIProjection{};
  api::DownwardAPIVolumeFile f;
  f.path = "namespace";
  f.field_ref = api::ObjectFieldSelector{"v1", "metadata.namespace"};
  ns.downward_api->items.push_back(f);
  proj.sources = {token, ca, ns};
  return proj;
}

TEST(ProjectedPayloadTest, KubeApiAccess) {
  FakeClock clock;
  FakeObjects objects;
  objects.config_maps["ns1/kube-root-ca.crt"] = CM({{"ca.crt", "CA PEM"}});
  FakeTokenClient client(clock);
  TokenManager tokens(&client, clock, [] { return 0.0; });
  api::Pod pod = MakePod();
  absl::StatusOr<Payload> p = ProjectedVolumePayload(pod, KubeApiAccess(), &objects, &tokens, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(*p, ElementsAre(Pair("ca.crt", FileProjection{"CA PEM", 0644}),
                              Pair("namespace", FileProjection{"ns1", 0644}),
                              Pair("token", FileProjection{"jwt-1", 0644})));
  EXPECT_EQ(client.last_sa, "ns1/default");
  EXPECT_TRUE(client.last.spec.audiences.empty());
  EXPECT_EQ(client.last.spec.expiration_seconds, 3607);
  ASSERT_TRUE(client.last.spec.bound_object_ref.has_value());
  EXPECT_EQ(*client.last.spec.bound_object_ref,
            (api::BoundObjectReference{"Pod", "v1", "web", "uid-1"}));
  // Cached: no second request.
  ASSERT_TRUE(ProjectedVolumePayload(pod, KubeApiAccess(), &objects, &tokens, {}).ok());
  EXPECT_EQ(client.calls, 1);

  // fsGroup: the token is 0600 (SetVolumeOwnership widens it to 0640).
  pod.spec.security_context = api::PodSecurityContext{};
  pod.spec.security_context->fs_group = 1234;
  p = ProjectedVolumePayload(pod, KubeApiAccess(), &objects, &tokens, {});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->at("token").mode, 0600u);
}

TEST(ProjectedPayloadTest, ErrorsAreAggregated) {
  FakeClock clock;
  FakeObjects objects;
  api::Pod pod = MakePod();
  api::ProjectedVolumeSource proj;
  api::VolumeProjection a, b, c;
  a.config_map = api::ConfigMapProjection{"missing", {}, {}};
  b.secret = api::SecretProjection{"gone", {}, {}};
  c.secret = api::SecretProjection{"opt", {}, true};
  proj.sources = {a, b, c};
  absl::StatusOr<Payload> p = ProjectedVolumePayload(pod, proj, &objects, nullptr, {});
  EXPECT_EQ(p.status().message(), "[configmap \"missing\" not found, secret \"gone\" not found]");
  proj.sources = {c};
  p = ProjectedVolumePayload(pod, proj, &objects, nullptr, {});
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->empty());
}

// ---- TokenManager ---------------------------------------------------------------------------

api::TokenRequest Req(int64_t exp, const std::string& uid = "uid-1",
                      std::vector<std::string> aud = {}) {
  api::TokenRequest tr;
  tr.spec.audiences = std::move(aud);
  tr.spec.expiration_seconds = exp;
  tr.spec.bound_object_ref = api::BoundObjectReference{"Pod", "v1", "web", uid};
  return tr;
}

TEST(TokenManagerTest, RefreshAtEightyPercentOfTTL) {
  FakeClock clock;
  FakeTokenClient client(clock);
  TokenManager m(&client, clock, [] { return 0.0; });
  ASSERT_EQ(m.GetServiceAccountToken("ns", "sa", Req(3600))->status.token, "jwt-1");
  clock.Advance(absl::Seconds(2880));  // exactly 80%: not yet
  EXPECT_EQ(m.GetServiceAccountToken("ns", "sa", Req(3600))->status.token, "jwt-1");
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(m.GetServiceAccountToken("ns", "sa", Req(3600))->status.token, "jwt-2");
  EXPECT_EQ(client.calls, 2);
}

TEST(TokenManagerTest, RefreshAfterTwentyFourHours) {
  FakeClock clock;
  FakeTokenClient client(clock);
  TokenManager m(&client, clock, [] { return 0.0; });
  const int64_t week = 7 * 24 * 3600;
  ASSERT_TRUE(m.GetServiceAccountToken("ns", "sa", Req(week)).ok());
  clock.Advance(absl::Hours(24));
  EXPECT_FALSE(m.RequiresRefresh(*m.GetServiceAccountToken("ns", "sa", Req(week))));
  EXPECT_EQ(client.calls, 1);
  clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(m.GetServiceAccountToken("ns", "sa", Req(week)).ok());
  EXPECT_EQ(client.calls, 2);
}

TEST(TokenManagerTest, JitterRefreshesUpToTenSecondsEarly) {
  FakeClock clock;
  FakeTokenClient client(clock);
  TokenManager m(&client, clock, [] { return 0.999; });  // 9 s of jitter
  ASSERT_TRUE(m.GetServiceAccountToken("ns", "sa", Req(3600)).ok());
  clock.Advance(absl::Seconds(2880 - 9));
  EXPECT_FALSE(m.RequiresRefresh(*m.GetServiceAccountToken("ns", "sa", Req(3600))));
  clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(m.GetServiceAccountToken("ns", "sa", Req(3600)).ok());
  EXPECT_EQ(client.calls, 2);
}

TEST(TokenManagerTest, CacheKeys) {
  FakeClock clock;
  FakeTokenClient client(clock);
  TokenManager m(&client, clock, [] { return 0.0; });
  ASSERT_TRUE(m.GetServiceAccountToken("ns", "sa", Req(3600)).ok());
  ASSERT_TRUE(m.GetServiceAccountToken("ns", "sa", Req(3600)).ok());
  EXPECT_EQ(client.calls, 1);
  ASSERT_TRUE(m.GetServiceAccountToken("ns", "sa", Req(3607)).ok());           // expiry
  ASSERT_TRUE(m.GetServiceAccountToken("ns", "sa", Req(3600, "uid-2")).ok());  // bound pod
  ASSERT_TRUE(m.GetServiceAccountToken("ns", "sa", Req(3600, "uid-1", {"vault"})).ok());
  ASSERT_TRUE(m.GetServiceAccountToken("ns2", "sa", Req(3600)).ok());  // namespace
  ASSERT_TRUE(m.GetServiceAccountToken("ns", "sa2", Req(3600)).ok());  // service account
  EXPECT_EQ(client.calls, 6);
  EXPECT_EQ(m.size(), 6u);
  EXPECT_EQ(TokenManager::KeyFunc("sa", "ns", Req(3600, "u", {"a", "b"})),
            "\"sa\"/\"ns\"/[a,b]/3600/{Pod,v1,web,u}");
  m.DeleteServiceAccountToken("uid-2");
  EXPECT_EQ(m.size(), 5u);
  clock.Advance(absl::Seconds(3608));
  m.Cleanup();
  EXPECT_EQ(m.size(), 0u);
}

TEST(TokenManagerTest, FailedRefreshKeepsValidTokenThenFails) {
  FakeClock clock;
  FakeTokenClient client(clock);
  TokenManager m(&client, clock, [] { return 0.0; });
  client.fail = absl::PermissionDeniedError("403 Forbidden: no");
  EXPECT_EQ(m.GetServiceAccountToken("ns", "sa", Req(3600)).status().message(),
            "failed to fetch token: 403 Forbidden: no");
  client.fail = absl::OkStatus();
  ASSERT_TRUE(m.GetServiceAccountToken("ns", "sa", Req(3600)).ok());
  client.fail = absl::UnavailableError("down");
  clock.Advance(absl::Seconds(3000));  // refresh due, old one still valid
  EXPECT_EQ(m.GetServiceAccountToken("ns", "sa", Req(3600))->status.token, "jwt-2");
  clock.Advance(absl::Seconds(601));  // expired
  EXPECT_THAT(std::string(m.GetServiceAccountToken("ns", "sa", Req(3600)).status().message()),
              HasSubstr("expired and refresh failed: down"));
}

// ---- through the VolumeManager --------------------------------------------------------------

std::string ReadFile(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

uint32_t ModeOfFile(const std::string& p) {
  struct stat st;
  if (::stat(p.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

class ContentVolumesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/content-volumes-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override {
    for (const std::string& m : MountPointsUnder(root_)) (void)Unmount(m);
    fs::remove_all(root_);
  }
  VolumeManagerOptions Options() {
    VolumeManagerOptions o;
    o.root_dir = root_;
    o.node_allocatable_memory = [] { return int64_t{64} << 20; };
    o.mount_timeout = absl::ZeroDuration();
    o.objects = &objects_;
    o.tokens = &tokens_;
    o.recorder = &recorder_;
    return o;
  }
  std::string Dir(const char* plugin, const char* name) {
    return absl::StrCat(root_, "/pods/uid-1/volumes/kubernetes.io~", plugin, "/", name);
  }

  std::string root_;
  FakeClock clock_;
  FakeObjects objects_;
  FakeTokenClient token_client_{clock_};
  TokenManager tokens_{&token_client_, clock_, [] { return 0.0; }};
  events::FakeRecorder recorder_;
};

TEST_F(ContentVolumesTest, SetUpUpdateAndTearDown) {
  if (::geteuid() != 0) GTEST_SKIP() << "secret and projected volumes mount a tmpfs";
  objects_.config_maps["ns1/cfg"] = CM({{"app.conf", "v1"}, {"other", "x"}});
  objects_.config_maps["ns1/kube-root-ca.crt"] = CM({{"ca.crt", "CA"}});
  api::Secret secret;
  secret.data = {{"password", "s3cret"}};
  objects_.secrets["ns1/creds"] = secret;
  api::Pod pod = MakePod();
  api::Volume cfg;
  cfg.name = "cfg";
  cfg.config_map = api::ConfigMapVolumeSource{"cfg", {{"app.conf", "conf/app.conf", 0600}}, {}, {}};
  api::Volume sec;
  sec.name = "sec";
  sec.secret = api::SecretVolumeSource{"creds", {}, 0400, {}};
  api::Volume kaa;
  kaa.name = "kube-api-access-abcde";
  kaa.projected = KubeApiAccess();
  pod.spec.volumes = {cfg, sec, kaa};

  VolumeManager vm(Options(), clock_);
  ASSERT_TRUE(vm.PrepareForSync(pod).ok());
  EXPECT_EQ(objects_.registered["uid-1"], 1);
  EXPECT_EQ(ReadFile(Dir("configmap", "cfg") + "/conf/app.conf"), "v1");
  EXPECT_EQ(ModeOfFile(Dir("configmap", "cfg") + "/conf/app.conf"), 0600u);
  EXPECT_FALSE(fs::exists(Dir("configmap", "cfg") + "/other"));
  EXPECT_TRUE(fs::is_symlink(Dir("configmap", "cfg") + "/..data"));
  EXPECT_EQ(ReadFile(Dir("secret", "sec") + "/password"), "s3cret");
  EXPECT_EQ(ModeOfFile(Dir("secret", "sec") + "/password"), 0400u);
  EXPECT_TRUE(IsMountPoint(Dir("secret", "sec")));
  EXPECT_FALSE(IsMountPoint(Dir("configmap", "cfg")));
  const std::string kaa_dir = Dir("projected", "kube-api-access-abcde");
  EXPECT_EQ(ReadFile(kaa_dir + "/token"), "jwt-1");
  EXPECT_EQ(ReadFile(kaa_dir + "/ca.crt"), "CA");
  EXPECT_EQ(ReadFile(kaa_dir + "/namespace"), "ns1");
  EXPECT_TRUE(IsMountPoint(kaa_dir));

  // A changed object reaches the files on the next sync.
  objects_.config_maps["ns1/cfg"] = CM({{"app.conf", "v2"}});
  ASSERT_TRUE(vm.PrepareForSync(pod).ok());
  EXPECT_EQ(ReadFile(Dir("configmap", "cfg") + "/conf/app.conf"), "v2");
  // The object going away keeps the last content (a remount failure is only reported).
  objects_.config_maps.erase("ns1/cfg");
  ASSERT_TRUE(vm.PrepareForSync(pod).ok());
  EXPECT_EQ(ReadFile(Dir("configmap", "cfg") + "/conf/app.conf"), "v2");

  ASSERT_TRUE(vm.CleanupTerminatedPod(pod).ok());
  EXPECT_FALSE(fs::exists(kaa_dir));
  EXPECT_FALSE(fs::exists(Dir("secret", "sec")));
  EXPECT_THAT(objects_.unregistered, ElementsAre("uid-1"));
  EXPECT_EQ(tokens_.size(), 0u);
}

TEST_F(ContentVolumesTest, MissingConfigMapFailsWithFailedMountUntilCreated) {
  api::Pod pod = MakePod();
  api::Volume cfg;
  cfg.name = "cfg";
  cfg.config_map = api::ConfigMapVolumeSource{"late", {}, {}, {}};
  pod.spec.volumes = {cfg};
  VolumeManager vm(Options(), clock_);
  absl::Status st = vm.PrepareForSync(pod);
  EXPECT_THAT(std::string(st.message()), HasSubstr("unmounted volumes=[cfg]"));
  bool found = false;
  for (const auto& e : recorder_.Events()) {
    if (e.message == "MountVolume.SetUp failed for volume \"cfg\" : configmap \"late\" not found") {
      found = e.reason == "FailedMount";
    }
  }
  EXPECT_TRUE(found);
  objects_.config_maps["ns1/late"] = CM({{"k", "v"}});
  ASSERT_TRUE(vm.PrepareForSync(pod).ok());
  EXPECT_EQ(ReadFile(Dir("configmap", "cfg") + "/k"), "v");
  EXPECT_EQ(ModeOfFile(Dir("configmap", "cfg") + "/k"), 0644u);
}

TEST_F(ContentVolumesTest, FsGroupOwnership) {
  if (::geteuid() != 0) GTEST_SKIP() << "chown needs root";
  objects_.config_maps["ns1/cfg"] = CM({{"k", "v"}});
  api::Pod pod = MakePod();
  pod.spec.security_context = api::PodSecurityContext{};
  pod.spec.security_context->fs_group = 4321;
  api::Volume cfg;
  cfg.name = "cfg";
  cfg.config_map = api::ConfigMapVolumeSource{"cfg", {}, 0600, {}};
  pod.spec.volumes = {cfg};
  VolumeManager vm(Options(), clock_);
  ASSERT_TRUE(vm.PrepareForSync(pod).ok());
  struct stat st;
  ASSERT_EQ(::stat((Dir("configmap", "cfg") + "/k").c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, 4321u);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

}  // namespace
}  // namespace kubelet::volume
