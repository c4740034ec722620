#include "kubelet/credentialprovider/plugin.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/strings.h"
#include "common/testing/eventually.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/metrics.h"

namespace kubelet::credentialprovider {
namespace {

using ::kubelet::testing::Eventually;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kApiV1[] = "credentialprovider.kubelet.k8s.io/v1";
constexpr char kUser[] = "plugin-user-7f3a";
constexpr char kPassword[] = "plugin-pass-9c1e";

std::string Msg(const absl::Status& s) { return std::string(s.message()); }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& path) {
  std::vector<std::string> out;
  for (absl::string_view l : absl::StrSplit(ReadAll(path), '\n', absl::SkipEmpty())) {
    out.emplace_back(l);
  }
  return out;
}

// A plugin as a shell script, driven by its environment (set through the provider's env):
// appends its request to $RECORD, then per $MODE answers, hangs, fails or writes garbage.
constexpr char kScript[] = R"(#!/bin/sh
req=$(cat)
printf '%s\n' "$req" >> "$RECORD"
printf '%s\n' "$*" > "$RECORD.args"
printf '%s|%s\n' "$FROM_KUBELET" "$OVERRIDDEN" > "$RECORD.env"
case "$MODE" in
  hang)
    sleep 1000 &
    echo "$$ $!" > "$RECORD.pids"
    wait
    ;;
  garbage) echo "this is not json $PASS"; exit 0 ;;
  fail) echo "plugin failed on purpose" >&2; exit 3 ;;
  killself) kill -9 $$ ;;
  big) i=0; while [ $i -lt 2000 ]; do printf '0123456789012345678901234567890123456789'; i=$((i+1)); done; exit 0 ;;
  gate) while [ ! -e "$GATE" ]; do sleep 0.01; done ;;
  spam) touch "$RECORD.spam"; exec yes spam >&2 ;;
esac
printf '{"kind":"%s","apiVersion":"%s","cacheKeyType":"%s"%s,"auth":{"%s":{"username":"%s","password":"%s"}}}\n' \
  "${KIND:-CredentialProviderResponse}" "${API:-credentialprovider.kubelet.k8s.io/v1}" \
  "${KEYTYPE:-Image}" "$DURATION_JSON" "${REGISTRY:-reg.io}" "$USER_NAME" "$PASS"
)";

class PluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("credprov-", ::getpid(), "-", counter_++);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ + "/bin");
    record_ = dir_ + "/record";
    log::Options opts;
    opts.verbosity = 10;
    opts.sink = [this](std::string_view line) {
      absl::MutexLock l(&log_mu_);
      log_.append(line);
    };
    log::Configure(opts);
  }
  void TearDown() override {
    log::Configure(log::Options{});
    std::filesystem::remove_all(dir_);
  }

  void WritePlugin(const std::string& name, const std::string& text = kScript) {
    const std::string path = dir_ + "/bin/" + name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), 0755);
  }

  CredentialProvider Provider(const std::string& name, std::vector<ExecEnvVar> env = {}) {
    CredentialProvider p;
    p.name = name;
    p.match_images = {"reg.io", "*.reg.io", "docker.io"};
    p.default_cache_duration = absl::Minutes(5);
    p.api_version = kApiV1;
    p.env = {{"RECORD", record_}, {"USER_NAME", kUser}, {"PASS", kPassword}};
    p.env.insert(p.env.end(), env.begin(), env.end());
    return p;
  }

  std::unique_ptr<PluginProvider> MakeProvider(const CredentialProvider& p,
                                               ExecOptions options = {}) {
    WritePlugin(p.name);
    return std::make_unique<PluginProvider>(p, NewExecPlugin(dir_ + "/bin", p, clock_, options),
                                            clock_);
  }

  int Runs() { return static_cast<int>(Lines(record_).size()); }

  std::string Log() {
    absl::MutexLock l(&log_mu_);
    return log_;
  }

  static inline int counter_ = 0;
  std::string dir_;
  std::string record_;
  FakeClock clock_;
  absl::Mutex log_mu_;
  std::string log_ ABSL_GUARDED_BY(log_mu_);
};

std::vector<std::string> Users(const std::vector<AuthConfig>& creds) {
  std::vector<std::string> out;
  for (const AuthConfig& c : creds) out.push_back(c.username);
  return out;
}

// --- the response ---

TEST(DecodeCredentialProviderResponseTest, Reads) {
  auto r = DecodeCredentialProviderResponse(
      R"({"kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1",
          "cacheKeyType":"Registry","cacheDuration":"1h","extra":1,
          "auth":{"reg.io":{"username":"u","password":"p"},"*.reg.io":null,
                  "other.io":{"Username":"ignored","password":null}}})",
      kApiV1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->cache_key_type, "Registry");
  EXPECT_EQ(r->cache_duration, absl::Hours(1));
  ASSERT_EQ(r->auth.size(), 3u);
  EXPECT_EQ(r->auth[0].first, "reg.io");
  EXPECT_EQ(r->auth[0].second.username, "u");
  EXPECT_EQ(r->auth[0].second.password, "p");
  EXPECT_EQ(r->auth[2].second.username, "");

  r = DecodeCredentialProviderResponse(
      R"({"kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1beta1","cacheKeyType":"Image"})",
      "credentialprovider.kubelet.k8s.io/v1beta1");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->cache_duration.has_value());
  EXPECT_THAT(r->auth, IsEmpty());
}

TEST(DecodeCredentialProviderResponseTest, ErrorsNeverQuoteTheOutput) {
  const std::string secret = "s3cr3t-pa55";
  auto msg = [](std::string_view out, std::string_view want_version = kApiV1) {
    return Msg(DecodeCredentialProviderResponse(out, want_version).status());
  };
  EXPECT_EQ(msg(""),
            "error reading GVK from response: couldn't get version/kind; json parse "
            "error: unexpected end of JSON input");
  EXPECT_THAT(msg("user " + secret), StartsWith("error reading GVK from response: couldn't get "
                                                "version/kind; json parse error: invalid JSON"));
  EXPECT_EQ(
      msg(R"({"kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1beta1"})"),
      "apiVersion from credential plugin response did not match expected "
      "apiVersion:credentialprovider.kubelet.k8s.io/v1, actual "
      "apiVersion:credentialprovider.kubelet.k8s.io/v1beta1");
  EXPECT_EQ(msg(R"({"kind":"CredentialProviderResponse","apiVersion":"u:)" + secret + R"("})"),
            "apiVersion from credential plugin response did not match expected "
            "apiVersion:credentialprovider.kubelet.k8s.io/v1, actual apiVersion:(not shown)");
  const std::string decode_error = "error decoding credential provider plugin response from stdout";
  EXPECT_EQ(
      msg(R"({"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1"})"),
      decode_error);
  EXPECT_EQ(msg(R"({"apiVersion":"credentialprovider.kubelet.k8s.io/v1"})"), decode_error);
  EXPECT_EQ(
      msg(R"({"kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1","cacheDuration":")" +
          secret + R"("})"),
      decode_error);
  EXPECT_EQ(
      msg(R"({"kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1","auth":{"r":{"username":1}}})"),
      decode_error);
  EXPECT_EQ(
      msg(R"({"kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1","auth":[]})"),
      decode_error);
}

// --- exec ---

TEST_F(PluginTest, ExecSendsTheRequestWithArgsAndEnvironment) {
  ::setenv("FROM_KUBELET", "kubelet-value", 1);
  ::setenv("OVERRIDDEN", "kubelet", 1);
  CredentialProvider p = Provider("plug", {{"OVERRIDDEN", "provider"}});
  p.args = {"get-credentials", "--flag=1"};
  WritePlugin("plug");
  auto plugin = NewExecPlugin(dir_ + "/bin", p, clock_);
  auto r = plugin->Exec("reg.io/team/app");
  ::unsetenv("FROM_KUBELET");
  ::unsetenv("OVERRIDDEN");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->cache_key_type, "Image");
  ASSERT_EQ(r->auth.size(), 1u);
  EXPECT_EQ(r->auth[0].second.username, kUser);
  EXPECT_EQ(r->auth[0].second.password, kPassword);
  EXPECT_THAT(Lines(record_), ElementsAre(R"({"kind":"CredentialProviderRequest",)"
                                          R"("apiVersion":"credentialprovider.kubelet.k8s.io/v1",)"
                                          R"("image":"reg.io/team/app"})"));
  EXPECT_EQ(ReadAll(record_ + ".args"), "get-credentials --flag=1\n");
  EXPECT_EQ(ReadAll(record_ + ".env"), "kubelet-value|provider\n");
}

TEST_F(PluginTest, NonZeroExitIsAnErrorWithStderr) {
  CredentialProvider p = Provider("failing", {{"MODE", "fail"}});
  WritePlugin("failing");
  auto r = NewExecPlugin(dir_ + "/bin", p, clock_)->Exec("reg.io/app");
  EXPECT_EQ(Msg(r.status()),
            "error execing credential provider plugin failing for image reg.io/app: exit status "
            "3: plugin failed on purpose\n");

  p = Provider("killself", {{"MODE", "killself"}});
  WritePlugin("killself");
  r = NewExecPlugin(dir_ + "/bin", p, clock_)->Exec("reg.io/app");
  EXPECT_EQ(Msg(r.status()),
            "error execing credential provider plugin killself for image reg.io/app: signal: "
            "killed: ");
}

TEST_F(PluginTest, MissingOrBadExecutable) {
  CredentialProvider p = Provider("absent");
  auto r = NewExecPlugin(dir_ + "/bin", p, clock_)->Exec("reg.io/app");
  EXPECT_EQ(Msg(r.status()),
            absl::StrCat("error execing credential provider plugin absent for image reg.io/app: "
                         "fork/exec ",
                         dir_, "/bin/absent: no such file or directory: "));
  WritePlugin("notexec");
  ::chmod((dir_ + "/bin/notexec").c_str(), 0644);
  r = NewExecPlugin(dir_ + "/bin", Provider("notexec"), clock_)->Exec("reg.io/app");
  EXPECT_THAT(Msg(r.status()), HasSubstr("/bin/notexec: permission denied: "));
}

TEST_F(PluginTest, HangIsKilledAtTheTimeoutWithItsProcessGroup) {
  CredentialProvider p = Provider("hang", {{"MODE", "hang"}});
  WritePlugin("hang");
  auto plugin = NewExecPlugin(dir_ + "/bin", p, clock_);
  absl::StatusOr<CredentialProviderResponse> r;
  std::thread t([&] { r = plugin->Exec("reg.io/app"); });
  std::vector<std::string> pids;
  ASSERT_TRUE(Eventually([&] {
    const std::string text = ReadAll(record_ + ".pids");
    if (text.empty() || text.back() != '\n') return false;
    pids = absl::StrSplit(text, absl::ByAnyChar(" \n"), absl::SkipEmpty());
    return true;
  }));
  ASSERT_TRUE(Eventually([&] { return clock_.Waiters() > 0; }));
  clock_.Advance(absl::Seconds(59));
  EXPECT_GT(clock_.Waiters(), 0);  // the upstream timeout is one minute: still armed
  clock_.Advance(absl::Seconds(1));
  t.join();
  EXPECT_EQ(Msg(r.status()),
            "error execing credential provider plugin hang for image reg.io/app: context "
            "deadline exceeded: ");
  ASSERT_EQ(pids.size(), 2u);
  // The shell was reaped (no zombie); its sleep child was killed with it.
  EXPECT_FALSE(std::filesystem::exists("/proc/" + pids[0]));
  EXPECT_TRUE(Eventually([&] {
    const std::string stat = ReadAll("/proc/" + pids[1] + "/stat");
    return stat.empty() || stat.find(") Z ") != std::string::npos;
  }));
}

TEST_F(PluginTest, EndlessStderrStillTimesOut) {
  WritePlugin("spam");
  auto plugin = NewExecPlugin(dir_ + "/bin", Provider("spam", {{"MODE", "spam"}}), clock_);
  absl::StatusOr<CredentialProviderResponse> r;
  std::thread t([&] { r = plugin->Exec("reg.io/app"); });
  ASSERT_TRUE(Eventually([&] { return std::filesystem::exists(record_ + ".spam"); }));
  ASSERT_TRUE(Eventually([&] { return clock_.Waiters() > 0; }));
  clock_.Advance(absl::Minutes(1));
  t.join();
  EXPECT_THAT(Msg(r.status()),
              StartsWith("error execing credential provider plugin spam for image reg.io/app: "
                         "context deadline exceeded: "));
  EXPECT_LT(Msg(r.status()).size(), 4096u + 200u);  // stderr kept up to max_stderr_bytes
}

TEST_F(PluginTest, OutputOverTheBoundIsAnError) {
  CredentialProvider p = Provider("big", {{"MODE", "big"}});
  WritePlugin("big");
  ExecOptions o;
  o.max_stdout_bytes = 1000;
  auto r = NewExecPlugin(dir_ + "/bin", p, clock_, o)->Exec("reg.io/app");
  EXPECT_EQ(Msg(r.status()),
            "error execing credential provider plugin big for image reg.io/app: output exceeds "
            "1000 bytes: ");
}

TEST_F(PluginTest, GarbageAndMismatchedApiVersion) {
  auto r = NewExecPlugin(dir_ + "/bin", Provider("garbage", {{"MODE", "garbage"}}), clock_);
  WritePlugin("garbage");
  auto res = r->Exec("reg.io/app");
  EXPECT_THAT(Msg(res.status()),
              StartsWith("error reading GVK from response: couldn't get version/kind; json "
                         "parse error: invalid JSON"));
  EXPECT_THAT(Msg(res.status()), Not(HasSubstr(kPassword)));

  WritePlugin("v1beta1");
  res = NewExecPlugin(dir_ + "/bin",
                      Provider("v1beta1", {{"API", "credentialprovider.kubelet.k8s.io/v1beta1"}}),
                      clock_)
            ->Exec("reg.io/app");
  EXPECT_EQ(Msg(res.status()),
            "apiVersion from credential plugin response did not match expected "
            "apiVersion:credentialprovider.kubelet.k8s.io/v1, actual "
            "apiVersion:credentialprovider.kubelet.k8s.io/v1beta1");
}

TEST_F(PluginTest, MetricsCountRunsAndErrors) {
  // Names of this run's own (the registry is the process's).
  const std::string ok = absl::StrCat("metrics-ok-", counter_);
  const std::string bad = absl::StrCat("metrics-bad-", counter_);
  WritePlugin(ok);
  WritePlugin(bad);
  ASSERT_TRUE(NewExecPlugin(dir_ + "/bin", Provider(ok), clock_)->Exec("reg.io/a").ok());
  ASSERT_FALSE(NewExecPlugin(dir_ + "/bin", Provider(bad, {{"MODE", "fail"}}), clock_)
                   ->Exec("reg.io/a")
                   .ok());
  const std::string text = metrics::Serialize(metrics::KubeletRegistry());
  EXPECT_THAT(text, HasSubstr(absl::StrCat(
                        "kubelet_credential_provider_plugin_errors{plugin_name=\"", bad, "\"} 1")));
  EXPECT_THAT(text, Not(HasSubstr(absl::StrCat(
                        "kubelet_credential_provider_plugin_errors{plugin_name=\"", ok, "\"}"))));
  for (const std::string& name : {ok, bad}) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat(
                          "kubelet_credential_provider_plugin_duration_count{plugin_name=\"", name,
                          "\"} 1")));
  }
}

// --- the provider: matching, cache, singleflight ---

TEST_F(PluginTest, MatchImages) {
  auto provider = MakeProvider(Provider("match"));
  EXPECT_TRUE(provider->IsImageAllowed("reg.io/app"));
  EXPECT_TRUE(provider->IsImageAllowed("eu.reg.io/team/app"));
  EXPECT_FALSE(provider->IsImageAllowed("a.b.reg.io/app"));
  EXPECT_FALSE(provider->IsImageAllowed("reg.io:5000/app"));
  EXPECT_TRUE(provider->IsImageAllowed("docker.io/library/busybox"));
  EXPECT_FALSE(provider->IsImageAllowed("quay.io/app"));
  EXPECT_THAT(provider->Provide("quay.io/app"), IsEmpty());
  EXPECT_EQ(Runs(), 0);  // not asked about an image it does not match
}

TEST_F(PluginTest, ImageCacheKey) {
  auto provider = MakeProvider(Provider("img"));
  DockerConfig c = provider->Provide("reg.io/a");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].first, "reg.io");
  EXPECT_EQ(c[0].second.username, kUser);
  EXPECT_EQ(provider->Provide("reg.io/a").size(), 1u);
  EXPECT_EQ(Runs(), 1);  // cache hit
  provider->Provide("reg.io/b");
  EXPECT_EQ(Runs(), 2);  // another image, another key
  clock_.Advance(absl::Minutes(5));
  provider->Provide("reg.io/a");
  EXPECT_EQ(Runs(), 2);  // valid until now > stored + 5m (the provider's default)
  clock_.Advance(absl::Seconds(1));
  provider->Provide("reg.io/a");
  EXPECT_EQ(Runs(), 3);
}

TEST_F(PluginTest, RegistryCacheKeyAndResponseDuration) {
  auto provider = MakeProvider(Provider(
      "registry", {{"KEYTYPE", "Registry"}, {"DURATION_JSON", R"(,"cacheDuration":"1h")"}}));
  provider->Provide("reg.io/a");
  provider->Provide("reg.io/b/c");
  EXPECT_EQ(Runs(), 1);
  provider->Provide("eu.reg.io/a");
  EXPECT_EQ(Runs(), 2);
  clock_.Advance(absl::Minutes(30));
  provider->Provide("reg.io/d");
  EXPECT_EQ(Runs(), 2);  // the response's hour, not the default 5 minutes
  clock_.Advance(absl::Minutes(31));
  provider->Provide("reg.io/d");
  EXPECT_EQ(Runs(), 3);
}

TEST_F(PluginTest, GlobalCacheKey) {
  auto provider = MakeProvider(Provider("global", {{"KEYTYPE", "Global"}}));
  provider->Provide("reg.io/a");
  provider->Provide("eu.reg.io/b");
  provider->Provide("docker.io/library/busybox");
  EXPECT_EQ(Runs(), 1);
}

TEST_F(PluginTest, ZeroDurationIsNotCached) {
  auto explicit_zero =
      MakeProvider(Provider("zero", {{"DURATION_JSON", R"(,"cacheDuration":"0s")"}}));
  explicit_zero->Provide("reg.io/a");
  explicit_zero->Provide("reg.io/a");
  EXPECT_EQ(Runs(), 2);

  CredentialProvider p = Provider("defaultzero");
  p.default_cache_duration = absl::ZeroDuration();
  auto default_zero = MakeProvider(p);
  default_zero->Provide("reg.io/a");
  default_zero->Provide("reg.io/a");
  EXPECT_EQ(Runs(), 4);
}

TEST_F(PluginTest, InvalidCacheKeyTypeGivesNothing) {
  auto provider = MakeProvider(Provider("badkey", {{"KEYTYPE", "image"}}));
  EXPECT_THAT(provider->Provide("reg.io/a"), IsEmpty());
  EXPECT_THAT(Log(), HasSubstr("credential provider plugin did not return a valid cacheKeyType: "
                               "\\\"image\\\""));
  MakeProvider(Provider("badkey2", {{"KEYTYPE", "Forever"}}))->Provide("reg.io/a");
  EXPECT_THAT(Log(), HasSubstr("did not return a valid cacheKeyType: \\\"(not shown)\\\""));
  provider->Provide("reg.io/a");
  EXPECT_EQ(Runs(), 3);
}

TEST_F(PluginTest, FailuresAreLoggedAndNotCached) {
  auto provider = MakeProvider(Provider("flaky", {{"MODE", "fail"}}));
  EXPECT_THAT(provider->Provide("reg.io/a"), IsEmpty());
  EXPECT_THAT(provider->Provide("reg.io/a"), IsEmpty());
  EXPECT_EQ(Runs(), 2);
  EXPECT_THAT(Log(), HasSubstr("Failed getting credential from external registry credential "
                               "provider: error execing credential provider plugin flaky for "
                               "image reg.io/a: exit status 3"));
}

TEST_F(PluginTest, ExpiredEntriesArePurged) {
  // A fake plugin: every answer cached for a minute under the image.
  class Counting final : public CredentialPlugin {
   public:
    absl::StatusOr<CredentialProviderResponse> Exec(std::string_view) override {
      ++runs;
      CredentialProviderResponse r;
      r.cache_key_type = "Image";
      r.cache_duration = absl::Minutes(1);
      return r;
    }
    std::atomic<int> runs = 0;
  };
  auto counting = std::make_unique<Counting>();
  Counting* plugin = counting.get();
  PluginProvider provider(Provider("purge"), std::move(counting), clock_);
  for (int i = 0; i < 100; ++i) provider.Provide(absl::StrCat("reg.io/image", i));
  EXPECT_EQ(plugin->runs, 100);
  clock_.Advance(kCachePurgeInterval + absl::Seconds(1));
  provider.Provide("reg.io/fresh");  // purges the 100 expired entries, then runs
  EXPECT_EQ(plugin->runs, 101);
  provider.Provide("reg.io/fresh");
  EXPECT_EQ(plugin->runs, 101);
}

TEST_F(PluginTest, ConcurrentLookupsShareOneRun) {
  const std::string gate = dir_ + "/gate";
  auto provider = MakeProvider(Provider("gated", {{"MODE", "gate"}, {"GATE", gate}}));
  DockerConfig a, b;
  std::thread ta([&] { a = provider->Provide("reg.io/app"); });
  std::thread tb([&] { b = provider->Provide("reg.io/app"); });
  ASSERT_TRUE(Eventually([&] { return provider->InFlightCallers("reg.io/app") == 2; }));
  std::ofstream(gate) << "go";
  ta.join();
  tb.join();
  EXPECT_EQ(Runs(), 1);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(a[0].second.password, kPassword);
  EXPECT_EQ(b[0].second.password, kPassword);
  EXPECT_EQ(provider->InFlightCallers("reg.io/app"), 0);
}

TEST_F(PluginTest, ConcurrentLookupsShareOneFailure) {
  class Blocking final : public CredentialPlugin {
   public:
    absl::StatusOr<CredentialProviderResponse> Exec(std::string_view) override {
      ++runs;
      release.WaitForNotification();
      return absl::UnknownError("boom");
    }
    std::atomic<int> runs = 0;
    absl::Notification release;
  };
  auto blocking = std::make_unique<Blocking>();
  Blocking* plugin = blocking.get();
  PluginProvider provider(Provider("blocking"), std::move(blocking), clock_);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&] { provider.Provide("reg.io/x"); });
  ASSERT_TRUE(Eventually([&] { return provider.InFlightCallers("reg.io/x") == 4; }));
  plugin->release.Notify();
  for (auto& t : threads) t.join();
  EXPECT_EQ(plugin->runs, 1);
}

TEST_F(PluginTest, CredentialsNeverReachTheLog) {
  auto ok = MakeProvider(Provider("ok"));
  ASSERT_EQ(ok->Provide("reg.io/a").size(), 1u);
  MakeProvider(Provider("garbage", {{"MODE", "garbage"}}))->Provide("reg.io/a");
  MakeProvider(Provider("mismatch", {{"API", kPassword}}))->Provide("reg.io/a");
  MakeProvider(Provider("badkey", {{"KEYTYPE", kPassword}}))->Provide("reg.io/a");
  MakeProvider(Provider("baddur", {{"DURATION_JSON",
                                    absl::StrCat(R"(,"cacheDuration":")", kPassword, R"(")")}}))
      ->Provide("reg.io/a");
  const std::string log = Log();
  EXPECT_THAT(log, HasSubstr("Getting image reg.io/a credentials from external exec plugin ok"));
  EXPECT_THAT(log, HasSubstr("error decoding credential provider plugin response from stdout"));
  EXPECT_THAT(log, Not(HasSubstr(kPassword)));
  EXPECT_THAT(log, Not(HasSubstr(kUser)));
}

// --- the keyring ---

class FakePlugin final : public CredentialPlugin {
 public:
  explicit FakePlugin(DockerConfig auth) : auth_(std::move(auth)) {}
  absl::StatusOr<CredentialProviderResponse> Exec(std::string_view repository) override {
    seen.emplace_back(repository);
    CredentialProviderResponse r;
    r.cache_key_type = "Image";
    r.auth = auth_;
    return r;
  }
  std::vector<std::string> seen;

 private:
  DockerConfig auth_;
};

AuthConfig User(std::string name) {
  AuthConfig a;
  a.username = std::move(name);
  return a;
}

TEST_F(PluginTest, ProvidersKeyringOrder) {
  // The node's docker config (provider ".dockercfg") and two plugins, merged into one keyring:
  // most specific registry key first; for one key, providers in name order.
  const std::string home = dir_ + "/home";
  std::filesystem::create_directories(home);
  std::ofstream(home + "/config.json")
      << R"({"auths":{"reg.io":{"username":"node"},"docker.io":{"username":"node-hub"}}})";
  DockerConfigSearchPath sp;
  sp.config_json_dirs = {home};
  NodeDockerKeyring node(sp, clock_);

  auto zeta_plugin = std::make_unique<FakePlugin>(
      DockerConfig{{"reg.io", User("zeta")}, {"reg.io/team", User("zeta-team")}});
  FakePlugin* zeta_seen = zeta_plugin.get();
  auto alpha_plugin = std::make_unique<FakePlugin>(DockerConfig{{"reg.io", User("alpha")}});
  std::vector<std::unique_ptr<PluginProvider>> plugins;
  CredentialProvider zeta = Provider("zeta");
  plugins.push_back(std::make_unique<PluginProvider>(zeta, std::move(zeta_plugin), clock_));
  CredentialProvider alpha = Provider("alpha");
  plugins.push_back(std::make_unique<PluginProvider>(alpha, std::move(alpha_plugin), clock_));
  ProvidersKeyring keyring(std::move(plugins), &node);

  EXPECT_THAT(Users(keyring.Lookup("reg.io/team/app:1.0")),
              ElementsAre("zeta-team", "node", "alpha", "zeta"));
  EXPECT_THAT(zeta_seen->seen, ElementsAre("reg.io/team/app"));  // the normalized repository
  EXPECT_THAT(Users(keyring.Lookup("busybox")), ElementsAre("node-hub"));
  EXPECT_EQ(zeta_seen->seen.back(), "docker.io/library/busybox");
  EXPECT_THAT(Users(keyring.Lookup("quay.io/x")), IsEmpty());
  EXPECT_THAT(keyring.Lookup("Not A Valid Reference"), IsEmpty());

  // Pull secrets come first (MakeDockerKeyring), then the providers.
  PullSecret secret;
  secret.name = "pull";
  secret.type = "kubernetes.io/dockerconfigjson";
  secret.data[".dockerconfigjson"] = R"({"auths":{"reg.io":{"username":"secret"}}})";
  auto with_secrets = MakeDockerKeyring({secret}, &keyring);
  ASSERT_TRUE(with_secrets.ok());
  EXPECT_THAT(Users((*with_secrets)->Lookup("reg.io/app")),
              ElementsAre("secret", "node", "alpha", "zeta"));
}

// --- start-up ---

TEST_F(PluginTest, RegisterCredentialProviderPlugins) {
  const std::string config = dir_ + "/config.yaml";
  auto write_config = [&](const std::string& names) {
    std::ofstream out(config);
    out << "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n";
    for (absl::string_view name : absl::StrSplit(names, ',')) {
      out << "- name: " << name << "\n  matchImages: [\"*.reg.io\", reg.io]\n"
          << "  defaultCacheDuration: 10m\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n"
          << "  env:\n  - {name: RECORD, value: " << record_ << "}\n"
          << "  - {name: USER_NAME, value: " << kUser << "}\n";
    }
  };
  auto status = [&](const std::string& bin) {
    return RegisterCredentialProviderPlugins(config, bin, clock_, nullptr).status();
  };
  write_config("one");
  EXPECT_EQ(Msg(status(dir_ + "/nobin")),
            absl::StrCat("plugin binary directory ", dir_, "/nobin did not exist"));
  EXPECT_EQ(Msg(status(dir_ + "/bin")),
            absl::StrCat("plugin binary executable ", dir_, "/bin/one did not exist"));
  WritePlugin("one");
  ::chmod((dir_ + "/bin/one").c_str(), 0644);
  if (::geteuid() != 0) {
    EXPECT_EQ(Msg(status(dir_ + "/bin")),
              absl::StrCat("error inspecting binary executable ", dir_, "/bin/one: exec: \"", dir_,
                           "/bin/one\": permission denied"));
  }
  ::chmod((dir_ + "/bin/one").c_str(), 0755);
  std::filesystem::create_directories(dir_ + "/bin/dir");
  write_config("dir");
  EXPECT_EQ(Msg(status(dir_ + "/bin")),
            absl::StrCat("error inspecting binary executable ", dir_, "/bin/dir: exec: \"", dir_,
                         "/bin/dir\": is a directory"));
  write_config("one,one");
  EXPECT_EQ(Msg(status(dir_ + "/bin")),
            "failed to validate credential provider config: providers.name: Duplicate value: "
            "\"one\"");
  WritePlugin(".dockercfg");
  write_config(".dockercfg");
  EXPECT_EQ(Msg(status(dir_ + "/bin")), "Credential provider \".dockercfg\" was registered twice");
  EXPECT_THAT(
      Msg(RegisterCredentialProviderPlugins(dir_ + "/none.yaml", dir_ + "/bin", clock_, nullptr)
              .status()),
      StartsWith("unable to read external registry credential provider configuration"));

  write_config("one");
  auto keyring = RegisterCredentialProviderPlugins(config, dir_ + "/bin", clock_, nullptr);
  ASSERT_TRUE(keyring.ok()) << keyring.status();
  EXPECT_THAT(Users((*keyring)->Lookup("eu.reg.io/app")), IsEmpty());  // auth key "reg.io"
  EXPECT_THAT(Users((*keyring)->Lookup("reg.io/app:v1")), ElementsAre(kUser));
  EXPECT_THAT(Users((*keyring)->Lookup("reg.io/app@sha256:"
                                       "0123456789012345678901234567890123456789012345678901234567"
                                       "890123")),
              ElementsAre(kUser));
  EXPECT_EQ(Runs(), 2);  // eu.reg.io/app and reg.io/app; the digest lookup hit the cache
}

}  // namespace
}  // namespace kubelet::credentialprovider
