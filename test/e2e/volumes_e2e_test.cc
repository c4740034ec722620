// End-to-end: emptyDir, hostPath and downwardAPI volumes of static pods through the kubelet
// binary on the harness's real containerd, with subPaths (bind-mounted below the pod dir, symlinks
// out of the volume refused), readOnly mounts and the kubelet-managed /etc/hosts. What the
// containers see is read with ExecSync; what the kubelet did on the host is read below its
// --root-dir.
#include <sys/mount.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "test/e2e/static_pod_fixture.h"

namespace kubelet::e2e {
namespace {

namespace fs = std::filesystem;

// Mount points below `dir` in this (the host's) mount namespace, deepest first.
std::vector<std::string> MountsUnder(const std::string& dir) {
  std::vector<std::string> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string id, parent, dev, root, mount_point;
    if (!(f >> id >> parent >> dev >> root >> mount_point)) continue;
    if (mount_point == dir || absl::StartsWith(mount_point, dir + "/")) {
      out.push_back(mount_point);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return out;
}

// The kubelet's bind mounts of subPaths below a pod dir.
std::vector<std::string> SubPathMounts(const std::string& pod_dir) {
  return MountsUnder(pod_dir + "/volume-subpaths");
}

std::string ReadHostFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class VolumesTest : public StaticPodTest {
 protected:
  void TearDown() override {
    StaticPodTest::TearDown();
    if (dir_.empty()) return;
    // A failed test may leave volumes mounted: never delete across them.
    for (const std::string& m : MountsUnder(dir_)) ::umount2(m.c_str(), MNT_DETACH);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // stdout of `cmd` in container `id`, or nullopt when it failed.
  std::optional<std::string> Exec(const std::string& id, const std::vector<std::string>& cmd) {
    auto r = cri_->ExecSync(id, cmd, absl::Seconds(20));
    if (!r.ok() || r->exit_code() != 0) return std::nullopt;
    return r->stdout();
  }

  std::string PodUID(const std::string& base) {
    auto sb = Sandboxes(base);
    return sb.empty() ? "" : sb[0].metadata().uid();
  }
};

TEST_F(VolumesTest, EmptyDirHostPathAndDownwardAPI) {
  StartKubelet();
  const std::string host_dir = dir_ + "/hostdata";
  const std::string busybox = "docker.io/library/busybox:1.36";
  WriteManifest(
      "vols.yaml",
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: vols\n"
      "  labels:\n    app: vols\n    tier: front\n"
      "  annotations:\n    note: 'say \"hi\"'\n"
      "spec:\n"
      "  terminationGracePeriodSeconds: 5\n"
      "  initContainers:\n"
      "  - name: init\n    image: " +
          busybox +
          "\n"
          "    command: [\"sh\", \"-c\", \"echo from-init > /shared/init.txt\"]\n"
          "    volumeMounts:\n    - {name: shared, mountPath: /shared}\n"
          "  containers:\n"
          "  - name: main\n    image: " +
          busybox +
          "\n"
          "    command: [\"sh\", \"-c\", \"echo from-main > /host/out.txt; echo sub > "
          "/sub/file; trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
          "    env:\n"
          "    - name: POD_NAME\n      valueFrom: {fieldRef: {fieldPath: metadata.name}}\n"
          "    - name: POD_NS\n      valueFrom: {fieldRef: {fieldPath: metadata.namespace}}\n"
          "    resources:\n      limits: {memory: 64Mi}\n"
          "    volumeMounts:\n"
          "    - {name: shared, mountPath: /shared}\n"
          "    - {name: mem, mountPath: /mem}\n"
          "    - {name: info, mountPath: /etc/podinfo}\n"
          "    - {name: host, mountPath: /host}\n"
          "    - {name: shared, mountPath: /sub, subPathExpr: \"$(POD_NAME)\"}\n"
          "  volumes:\n"
          "  - name: shared\n    emptyDir: {}\n"
          "  - name: mem\n    emptyDir: {medium: Memory, sizeLimit: 8Mi}\n"
          "  - name: info\n    downwardAPI:\n      items:\n"
          "      - path: name\n        fieldRef: {fieldPath: metadata.name}\n"
          "      - path: labels\n        fieldRef: {fieldPath: metadata.labels}\n"
          "      - path: annotations\n        fieldRef: {fieldPath: metadata.annotations}\n"
          "      - path: limits/memory\n        mode: 0400\n"
          "        resourceFieldRef: {containerName: main, resource: limits.memory, divisor: "
          "1Mi}\n"
          "  - name: host\n    hostPath: {path: " +
          host_dir + ", type: DirectoryOrCreate}\n");
  ASSERT_TRUE(WaitUntil([&] { return !Running("vols", "main").empty(); }, absl::Seconds(90)))
      << kubelet_->Log();
  const std::string id = Running("vols", "main")[0].id();
  const std::string pod_name = PodName("vols");

  // The init container's file in the emptyDir is seen by the app container.
  EXPECT_EQ(Exec(id, {"cat", "/shared/init.txt"}), std::optional<std::string>("from-init\n"));
  // The memory-medium emptyDir is a tmpfs of sizeLimit.
  std::optional<std::string> mounts = Exec(id, {"cat", "/proc/mounts"});
  ASSERT_TRUE(mounts.has_value());
  std::string mem_line;
  for (absl::string_view l : absl::StrSplit(*mounts, '\n')) {
    if (absl::StrContains(l, " /mem ")) mem_line = std::string(l);
  }
  EXPECT_TRUE(absl::StartsWith(mem_line, "tmpfs /mem tmpfs ")) << *mounts;
  EXPECT_TRUE(absl::StrContains(mem_line, "size=8192k")) << mem_line;
  // downwardAPI files and env fieldRefs.
  EXPECT_EQ(Exec(id, {"cat", "/etc/podinfo/name"}), std::optional<std::string>(pod_name));
  EXPECT_EQ(Exec(id, {"cat", "/etc/podinfo/labels"}),
            std::optional<std::string>("app=\"vols\"\ntier=\"front\""));
  std::optional<std::string> annotations = Exec(id, {"cat", "/etc/podinfo/annotations"});
  ASSERT_TRUE(annotations.has_value());
  EXPECT_TRUE(absl::StrContains(*annotations, "kubernetes.io/config.source=\"file\""))
      << *annotations;
  EXPECT_TRUE(absl::StrContains(*annotations, "note=\"say \\\"hi\\\"\"")) << *annotations;
  EXPECT_EQ(Exec(id, {"cat", "/etc/podinfo/limits/memory"}), std::optional<std::string>("64"));
  EXPECT_EQ(Exec(id, {"stat", "-L", "-c", "%a", "/etc/podinfo/limits/memory"}),
            std::optional<std::string>("400\n"));
  EXPECT_EQ(Exec(id, {"readlink", "/etc/podinfo/..data"}).value_or("").rfind("..", 0), 0u);
  // The downwardAPI volume is read-only in the container.
  EXPECT_FALSE(Exec(id, {"touch", "/etc/podinfo/x"}).has_value());
  EXPECT_EQ(Exec(id, {"sh", "-c", "echo -n $POD_NAME/$POD_NS"}),
            std::optional<std::string>(pod_name + "/default"));

  // On the host: hostPath writes, emptyDir layout, the subPathExpr directory, the tmpfs mounts.
  ASSERT_TRUE(WaitUntil([&] { return fs::exists(host_dir + "/out.txt"); }, absl::Seconds(20)));
  EXPECT_EQ(ReadHostFile(host_dir + "/out.txt"), "from-main\n");
  const std::string uid = PodUID("vols");
  ASSERT_FALSE(uid.empty());
  const std::string pod_dir = dir_ + "/root/pods/" + uid;
  const std::string empty_dir = pod_dir + "/volumes/kubernetes.io~empty-dir";
  EXPECT_EQ(ReadHostFile(empty_dir + "/shared/init.txt"), "from-init\n");
  ASSERT_TRUE(WaitUntil([&] { return fs::exists(empty_dir + "/shared/" + pod_name + "/file"); },
                        absl::Seconds(20)));
  EXPECT_FALSE(fs::exists(pod_dir + "/volumes/kubernetes.io~host-path"));
  std::vector<std::string> pod_mounts = MountsUnder(pod_dir);
  EXPECT_NE(std::find(pod_mounts.begin(), pod_mounts.end(), empty_dir + "/mem"), pod_mounts.end());
  EXPECT_NE(std::find(pod_mounts.begin(), pod_mounts.end(),
                      pod_dir + "/volumes/kubernetes.io~downward-api/info"),
            pod_mounts.end());

  // Removing the manifest stops the pod, tears its volumes down and removes the pod dir; the
  // hostPath content stays.
  fs::remove(manifests_ + "/vols.yaml");
  ASSERT_TRUE(WaitUntil([&] { return Running("vols").empty() && ReadySandboxes("vols").empty(); },
                        absl::Seconds(60)))
      << kubelet_->Log();
  EXPECT_TRUE(WaitUntil([&] { return !fs::exists(pod_dir); }, absl::Seconds(60)))
      << kubelet_->Log();
  EXPECT_TRUE(MountsUnder(dir_ + "/root").empty());
  EXPECT_EQ(ReadHostFile(host_dir + "/out.txt"), "from-main\n");
}

TEST_F(VolumesTest, WrongHostPathTypeKeepsPodFromStarting) {
  verbosity_ = 3;  // events are logged at --v=3
  StartKubelet();
  const std::string path = dir_ + "/not-a-socket";
  WriteFile(path, "plain file\n");
  WriteManifest(
      "badhp.yaml",
      BusyboxPod("badhp", kSleepForever,
                 "  volumes:\n  - name: sock\n    hostPath: {path: " + path + ", type: Socket}\n") +
          "    volumeMounts:\n    - {name: sock, mountPath: /sock}\n");
  ASSERT_TRUE(kubelet_->WaitForLog("hostPath type check failed: " + path + " is not a socket file",
                                   absl::Seconds(60)))
      << kubelet_->Log();
  EXPECT_TRUE(
      absl::StrContains(kubelet_->Log(), "MountVolume.SetUp failed for volume \\\"sock\\\""))
      << kubelet_->Log();
  // The reason reaches the pod's events (what `kubectl describe pod` lists).
  EXPECT_TRUE(kubelet_->WaitForLog(
      "\"Event occurred\" object=\"default/" + PodName("badhp") +
          "\" fieldPath=\"\" kind=\"Pod\" apiVersion=\"v1\" type=\"Warning\" "
          "reason=\"FailedMount\" message=\"MountVolume.SetUp failed for volume \\\"sock\\\" : "
          "hostPath type check failed: " +
          path + " is not a socket file\"",
      absl::Seconds(30)))
      << kubelet_->Log();
  // A few sync attempts later, still nothing was created for the pod.
  absl::SleepFor(absl::Seconds(3));
  EXPECT_TRUE(Containers("badhp").empty());
  EXPECT_TRUE(ReadySandboxes("badhp").empty());

  // The pod goes away without waiting out the mount timeout.
  fs::remove(manifests_ + "/badhp.yaml");
  EXPECT_TRUE(kubelet_->WaitForLog("pod is no longer desired", absl::Seconds(60)))
      << kubelet_->Log();
  EXPECT_TRUE(WaitUntil(
      [&] {
        std::error_code ec;
        return fs::directory_iterator(dir_ + "/root/pods", ec) == fs::directory_iterator();
      },
      absl::Seconds(60)))
      << kubelet_->Log();
}

TEST_F(VolumesTest, OrphanedVolumesAreTornDownAfterKubeletRestart) {
  StartKubelet();
  WriteManifest("orphan.yaml",
                BusyboxPod("orphan", kSleepForever,
                           "  volumes:\n  - name: mem\n    emptyDir: {medium: Memory}\n"
                           "  - name: disk\n    emptyDir: {}\n") +
                    "    volumeMounts:\n    - {name: mem, mountPath: /mem}\n"
                    "    - {name: disk, mountPath: /disk}\n"
                    "    - {name: mem, mountPath: /sub, subPath: s}\n");
  ASSERT_TRUE(WaitUntil([&] { return !Running("orphan", "main").empty(); }, absl::Seconds(90)))
      << kubelet_->Log();
  const std::string uid = PodUID("orphan");
  const std::string pod_dir = dir_ + "/root/pods/" + uid;
  const std::string mem = pod_dir + "/volumes/kubernetes.io~empty-dir/mem";
  ASSERT_EQ(MountsUnder(mem).size(), 1u);
  ASSERT_EQ(SubPathMounts(pod_dir),
            std::vector<std::string>{pod_dir + "/volume-subpaths/mem/main/2"});
  kubelet_->Signal(SIGTERM);
  ASSERT_EQ(kubelet_->Wait(absl::Seconds(30)), std::optional<int>(0));
  // Stopping the kubelet unmounts nothing.
  EXPECT_EQ(MountsUnder(mem).size(), 1u);
  EXPECT_EQ(SubPathMounts(pod_dir).size(), 1u);
  fs::remove(manifests_ + "/orphan.yaml");

  StartKubelet();
  ASSERT_TRUE(WaitUntil([&] { return ReadySandboxes("orphan").empty(); }, absl::Seconds(60)))
      << kubelet_->Log();
  EXPECT_TRUE(WaitUntil([&] { return !fs::exists(pod_dir); }, absl::Seconds(60)))
      << kubelet_->Log();
  EXPECT_TRUE(MountsUnder(dir_ + "/root").empty());
}

TEST_F(VolumesTest, SubPathIsBindMountedAndCleanedUp) {
  StartKubelet();
  const std::string host_dir = dir_ + "/subpath-host";
  fs::create_directories(host_dir + "/conf");
  WriteFile(host_dir + "/conf/app.conf", "level=debug\n");
  // The first run writes its files and exits 1; the restarted container (same mounts, made
  // again through the kubelet) writes a second file and stays.
  WriteManifest(
      "sub.yaml",
      BusyboxPod("sub",
                 "\"cat /etc/app.conf > /out/conf-seen; echo from-subpath > /out/hello.txt; "
                 "echo cache > /cache/c.txt; if [ ! -f /out/first-run ]; then touch "
                 "/out/first-run; exit 1; fi; echo again > /out/second.txt; trap 'exit 0' TERM; "
                 "while true; do sleep 1; done\"",
                 "  volumes:\n  - name: host\n    hostPath: {path: " + host_dir +
                     ", type: Directory}\n  - name: scratch\n    emptyDir: {}\n") +
          "    volumeMounts:\n"
          "    - {name: host, mountPath: /out, subPath: logs/app}\n"
          "    - {name: host, mountPath: /etc/app.conf, subPath: conf/app.conf}\n"
          "    - {name: scratch, mountPath: /cache, subPath: c}\n");
  ASSERT_TRUE(WaitUntil(
      [&] {
        return !Running("sub", "main").empty() && fs::exists(host_dir + "/logs/app/second.txt");
      },
      absl::Seconds(120)))
      << kubelet_->Log();
  const std::string id = Running("sub", "main")[0].id();
  // The container was restarted once: its mounts were prepared a second time.
  EXPECT_EQ(Running("sub", "main")[0].metadata().attempt(), 1u);

  // Files the container wrote through the subPath are in the volume, at <volume>/<subPath>.
  EXPECT_EQ(ReadHostFile(host_dir + "/logs/app/hello.txt"), "from-subpath\n");
  EXPECT_EQ(ReadHostFile(host_dir + "/logs/app/second.txt"), "again\n");
  EXPECT_EQ(ReadHostFile(host_dir + "/logs/app/conf-seen"), "level=debug\n");
  EXPECT_FALSE(fs::exists(host_dir + "/hello.txt"));
  EXPECT_EQ(Exec(id, {"cat", "/etc/app.conf"}), std::optional<std::string>("level=debug\n"));
  EXPECT_EQ(Exec(id, {"ls", "/out"}),
            std::optional<std::string>("conf-seen\nfirst-run\nhello.txt\nsecond.txt\n"));

  // On the host the runtime got the kubelet's bind mounts, one per subPath mount, reused (not
  // stacked) by the restart.
  const std::string uid = PodUID("sub");
  ASSERT_FALSE(uid.empty());
  const std::string pod_dir = dir_ + "/root/pods/" + uid;
  std::vector<std::string> binds = SubPathMounts(pod_dir);
  std::sort(binds.begin(), binds.end());
  EXPECT_EQ(binds, (std::vector<std::string>{pod_dir + "/volume-subpaths/host/main/0",
                                             pod_dir + "/volume-subpaths/host/main/1",
                                             pod_dir + "/volume-subpaths/scratch/main/2"}));
  EXPECT_EQ(ReadHostFile(pod_dir + "/volume-subpaths/host/main/1"), "level=debug\n");
  EXPECT_EQ(ReadHostFile(pod_dir + "/volumes/kubernetes.io~empty-dir/scratch/c/c.txt"), "cache\n");

  // Removing the pod unmounts and removes the bind mounts and the pod dir; the hostPath content
  // (which the bind mounts pointed into) stays.
  fs::remove(manifests_ + "/sub.yaml");
  ASSERT_TRUE(WaitUntil([&] { return Running("sub").empty() && ReadySandboxes("sub").empty(); },
                        absl::Seconds(60)))
      << kubelet_->Log();
  EXPECT_TRUE(WaitUntil([&] { return !fs::exists(pod_dir); }, absl::Seconds(60)))
      << kubelet_->Log();
  EXPECT_TRUE(MountsUnder(dir_ + "/root").empty());
  EXPECT_EQ(ReadHostFile(host_dir + "/logs/app/hello.txt"), "from-subpath\n");
  EXPECT_EQ(ReadHostFile(host_dir + "/conf/app.conf"), "level=debug\n");
}

TEST_F(VolumesTest, SubPathSymlinkOutOfTheVolumeIsRefused) {
  StartKubelet();
  const std::string host_dir = dir_ + "/evil-host";
  const std::string outside = dir_ + "/outside";
  fs::create_directories(host_dir);
  fs::create_directories(outside);
  WriteFile(outside + "/secret", "host secret\n");
  // What a container that can write the volume would plant: an absolute symlink out of it.
  fs::create_directory_symlink(outside, host_dir + "/escape");
  WriteManifest("evil.yaml",
                BusyboxPod("evil", kSleepForever,
                           "  volumes:\n  - name: data\n    hostPath: {path: " + host_dir + "}\n") +
                    "    volumeMounts:\n    - {name: data, mountPath: /data, subPath: escape}\n");
  ASSERT_TRUE(kubelet_->WaitForLog("Failed to prepare subPath for volumeMount of the container",
                                   absl::Seconds(90)))
      << kubelet_->Log();
  // The log names the reason (the host paths) and the pod gets the generic message.
  const std::string log = kubelet_->Log();
  EXPECT_TRUE(absl::StrContains(
      log,
      absl::StrCat("subpath \\\"", outside, "\\\" not within volume path \\\"", host_dir, "\\\"")))
      << log;
  EXPECT_TRUE(absl::StrContains(log, "volumeMountName=\"data\"")) << log;
  ASSERT_TRUE(kubelet_->WaitForLog(
      "failed to prepare subPath for volumeMount \\\"data\\\" of container \\\"main\\\"",
      absl::Seconds(30)))
      << log;
  // A few sync attempts later the container still does not exist, nothing is mounted.
  absl::SleepFor(absl::Seconds(3));
  EXPECT_TRUE(Containers("evil").empty());
  const std::string uid = PodUID("evil");
  ASSERT_FALSE(uid.empty());
  EXPECT_TRUE(SubPathMounts(dir_ + "/root/pods/" + uid).empty());
  EXPECT_EQ(ReadHostFile(outside + "/secret"), "host secret\n");

  fs::remove(manifests_ + "/evil.yaml");
  EXPECT_TRUE(WaitUntil([&] { return ReadySandboxes("evil").empty(); }, absl::Seconds(60)))
      << kubelet_->Log();
  EXPECT_TRUE(WaitUntil([&] { return !fs::exists(dir_ + "/root/pods/" + uid); }, absl::Seconds(60)))
      << kubelet_->Log();
}

TEST_F(VolumesTest, EtcHostsIsKubeletManaged) {
  StartKubelet();
  WriteManifest("hosts.yaml", BusyboxPod("hosts", kSleepForever,
                                         "  hostAliases:\n"
                                         "  - ip: 10.1.2.3\n"
                                         "    hostnames: [foo.local, bar.local]\n"
                                         "  - ip: fd00::7\n"
                                         "    hostnames: [v6.local]\n"));
  ASSERT_TRUE(WaitUntil([&] { return !Running("hosts", "main").empty(); }, absl::Seconds(90)))
      << kubelet_->Log();
  const std::string id = Running("hosts", "main")[0].id();
  std::vector<PodSandbox> sb = ReadySandboxes("hosts");
  ASSERT_EQ(sb.size(), 1u);
  auto sst = cri_->PodSandboxStatus(sb[0].id(), false);
  ASSERT_TRUE(sst.ok()) << sst.status();
  const std::string ip = sst->status().network().ip();
  ASSERT_FALSE(ip.empty());
  const std::string hostname = PodName("hosts");
  const std::string want = absl::StrCat(
      "# Kubernetes-managed hosts file.\n"
      "127.0.0.1\tlocalhost\n"
      "::1\tlocalhost ip6-localhost ip6-loopback\n"
      "fe00::0\tip6-localnet\n"
      "fe00::0\tip6-mcastprefix\n"
      "fe00::1\tip6-allnodes\n"
      "fe00::2\tip6-allrouters\n",
      ip, "\t", hostname,
      "\n"
      "\n"
      "# Entries added by HostAliases.\n"
      "10.1.2.3\tfoo.local\tbar.local\n"
      "fd00::7\tv6.local\n");
  EXPECT_EQ(Exec(id, {"cat", "/etc/hosts"}), std::optional<std::string>(want));
  EXPECT_EQ(Exec(id, {"hostname"}), std::optional<std::string>(hostname + "\n"));
  // It is the file the kubelet wrote below the pod dir, bind-mounted over the image's.
  const std::string uid = PodUID("hosts");
  EXPECT_EQ(ReadHostFile(dir_ + "/root/pods/" + uid + "/etc-hosts"), want);
  std::optional<std::string> mounts = Exec(id, {"cat", "/proc/mounts"});
  ASSERT_TRUE(mounts.has_value());
  EXPECT_TRUE(absl::StrContains(*mounts, " /etc/hosts ")) << *mounts;
}

TEST_F(VolumesTest, ReadOnlyVolumeMountRefusesWrites) {
  StartKubelet();
  const std::string host_dir = dir_ + "/ro-host";
  fs::create_directories(host_dir + "/sub");
  WriteFile(host_dir + "/sub/existing", "keep me\n");
  WriteManifest("ro.yaml",
                BusyboxPod("ro", kSleepForever,
                           "  volumes:\n  - name: scratch\n    emptyDir: {}\n"
                           "  - name: host\n    hostPath: {path: " +
                               host_dir + "}\n") +
                    "    volumeMounts:\n"
                    "    - {name: scratch, mountPath: /rw}\n"
                    "    - {name: scratch, mountPath: /ro, readOnly: true}\n"
                    "    - {name: host, mountPath: /host-ro, readOnly: true}\n"
                    "    - {name: host, mountPath: /sub-ro, subPath: sub, readOnly: true}\n");
  ASSERT_TRUE(WaitUntil([&] { return !Running("ro", "main").empty(); }, absl::Seconds(90)))
      << kubelet_->Log();
  const std::string id = Running("ro", "main")[0].id();

  // Writes through the read-only mounts fail with EROFS.
  for (const char* path : {"/ro/x", "/host-ro/x", "/sub-ro/x", "/sub-ro/existing"}) {
    auto r =
        cri_->ExecSync(id, {"sh", "-c", absl::StrCat("echo data > ", path)}, absl::Seconds(20));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_NE(r->exit_code(), 0) << path;
    EXPECT_TRUE(absl::StrContains(r->stderr(), "Read-only file system"))
        << path << ": " << r->stderr();
  }
  EXPECT_FALSE(fs::exists(host_dir + "/x"));
  EXPECT_FALSE(fs::exists(host_dir + "/sub/x"));
  EXPECT_EQ(ReadHostFile(host_dir + "/sub/existing"), "keep me\n");
  // Reads work, and the same volume stays writable through its read-write mount.
  EXPECT_EQ(Exec(id, {"cat", "/sub-ro/existing"}), std::optional<std::string>("keep me\n"));
  EXPECT_EQ(Exec(id, {"sh", "-c", "echo rw > /rw/f && cat /ro/f"}),
            std::optional<std::string>("rw\n"));
  std::optional<std::string> mounts = Exec(id, {"cat", "/proc/mounts"});
  ASSERT_TRUE(mounts.has_value());
  for (absl::string_view l : absl::StrSplit(*mounts, '\n')) {
    std::vector<absl::string_view> f = absl::StrSplit(l, ' ');
    if (f.size() < 4) continue;
    if (f[1] == "/ro" || f[1] == "/host-ro" || f[1] == "/sub-ro") {
      EXPECT_TRUE(absl::StartsWith(f[3], "ro,") || f[3] == "ro") << l;
    } else if (f[1] == "/rw") {
      EXPECT_TRUE(absl::StartsWith(f[3], "rw")) << l;
    }
  }
}

}  // namespace
}  // namespace kubelet::e2e
