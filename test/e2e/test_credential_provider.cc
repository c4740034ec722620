// An image credential provider plugin of the tests' own (--image-credential-provider-bin-dir):
// reads a CredentialProviderRequest on stdin and answers with the credentials it is told to,
// or misbehaves on request. Its behaviour comes from the environment (the provider's `env` in
// the CredentialProviderConfig), each variable overridable by an argument (`args`):
//
//   TEST_CRED_USERNAME / --username=      username to return
//   TEST_CRED_PASSWORD / --password=      password to return
//   TEST_CRED_REGISTRY / --registry=      the auth key (default: the image's registry, i.e. the
//                                         request's image up to its first '/')
//   TEST_CRED_CACHE_KEY_TYPE / --cache-key-type=   Image (default), Registry or Global
//   TEST_CRED_CACHE_DURATION / --cache-duration=   e.g. "30s"; absent: not in the response
//   TEST_CRED_API_VERSION / --api-version=         the response's apiVersion (default: the
//                                                  request's)
//   TEST_CRED_MODE / --mode=              "" (answer), "hang" (never answer), "garbage" (write
//                                         text that is not JSON), "fail" (exit 1 with a message
//                                         on stderr)
//   TEST_CRED_RECORD_FILE / --record-file=   each request's image is appended there, one per
//                                            line, before anything else (tests count calls)
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <iterator>
#include <map>
#include <string>

#include "nlohmann/json.hpp"

namespace {

std::string Setting(const std::map<std::string, std::string>& args, const std::string& flag,
                    const char* env) {
  if (auto it = args.find(flag); it != args.end()) return it->second;
  const char* v = std::getenv(env);
  return v != nullptr ? v : "";
}

void Record(const std::string& path, const std::string& image) {
  if (path.empty()) return;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const std::string line = image + "\n";
  // One write with O_APPEND: concurrent plugins never interleave their lines.
  (void)!::write(fd, line.data(), line.size());
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos)
      args[a.substr(2, eq - 2)] = a.substr(eq + 1);
  }
  const std::string input{std::istreambuf_iterator<char>(std::cin),
                          std::istreambuf_iterator<char>()};
  nlohmann::json request = nlohmann::json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (!request.is_object() || request.value("kind", "") != "CredentialProviderRequest" ||
      !request.contains("image") || !request["image"].is_string()) {
    std::cerr << "test_credential_provider: not a CredentialProviderRequest" << std::endl;
    return 2;
  }
  const std::string image = request["image"].get<std::string>();
  const std::string request_version = request.value("apiVersion", "");
  Record(Setting(args, "record-file", "TEST_CRED_RECORD_FILE"), image);

  const std::string mode = Setting(args, "mode", "TEST_CRED_MODE");
  if (mode == "hang") {
    for (;;) ::pause();
  }
  if (mode == "garbage") {
    std::cout << "this is not a CredentialProviderResponse" << std::endl;
    return 0;
  }
  if (mode == "fail") {
    std::cerr << "test_credential_provider: failing on purpose" << std::endl;
    return 1;
  }

  std::string registry = Setting(args, "registry", "TEST_CRED_REGISTRY");
  if (registry.empty()) registry = image.substr(0, image.find('/'));
  std::string key_type = Setting(args, "cache-key-type", "TEST_CRED_CACHE_KEY_TYPE");
  if (key_type.empty()) key_type = "Image";
  std::string api_version = Setting(args, "api-version", "TEST_CRED_API_VERSION");
  if (api_version.empty()) api_version = request_version;

  nlohmann::ordered_json response;
  response["kind"] = "CredentialProviderResponse";
  response["apiVersion"] = api_version;
  response["cacheKeyType"] = key_type;
  const std::string duration = Setting(args, "cache-duration", "TEST_CRED_CACHE_DURATION");
  if (!duration.empty()) response["cacheDuration"] = duration;
  response["auth"][registry] = {{"username", Setting(args, "username", "TEST_CRED_USERNAME")},
                                {"password", Setting(args, "password", "TEST_CRED_PASSWORD")}};
  std::cout << response.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  return 0;
}
