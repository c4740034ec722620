#include "apiclient/request_info.h"

#include "gtest/gtest.h"

namespace kubelet::apiclient {
namespace {

TEST(RequestInfo, NamespacedObjectWithSubresourceAndQuery) {
  auto i = ParseRequestPath("/api/v1/namespaces/ns/pods/p/status?fieldManager=a%20b&dryRun=All");
  ASSERT_TRUE(i.has_value());
  EXPECT_EQ(i->base, "/api/v1");
  EXPECT_EQ(i->namespace_, "ns");
  EXPECT_EQ(i->resource, "pods");
  EXPECT_EQ(i->name, "p");
  EXPECT_EQ(i->subresource, "status");
  EXPECT_EQ(i->Collection(), "/api/v1/pods");
  EXPECT_EQ(i->query.at("fieldManager"), "a b");
  EXPECT_EQ(i->query.at("dryRun"), "All");
  EXPECT_EQ(RequestVerb("PATCH", *i), "patch");
}

TEST(RequestInfo, GroupsClusterScopedAndNamespaces) {
  auto lease = ParseRequestPath("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n");
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->base, "/apis/coordination.k8s.io/v1");
  EXPECT_EQ(lease->resource, "leases");
  EXPECT_EQ(RequestVerb("PUT", *lease), "update");

  auto node = ParseRequestPath("/api/v1/nodes/n");
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->namespace_, "");
  EXPECT_EQ(RequestVerb("GET", *node), "get");

  // A namespace, and its own subresources.
  auto ns = ParseRequestPath("/api/v1/namespaces/ns");
  ASSERT_TRUE(ns.has_value());
  EXPECT_EQ(ns->resource, "namespaces");
  EXPECT_EQ(ns->name, "ns");
  EXPECT_EQ(ns->namespace_, "");
  auto fin = ParseRequestPath("/api/v1/namespaces/ns/finalize");
  ASSERT_TRUE(fin.has_value());
  EXPECT_EQ(fin->resource, "namespaces");
  EXPECT_EQ(fin->subresource, "finalize");
}

TEST(RequestInfo, VerbsOfCollections) {
  auto pods = ParseRequestPath("/api/v1/pods?fieldSelector=spec.nodeName%3Dn&watch=true");
  ASSERT_TRUE(pods.has_value());
  EXPECT_EQ(pods->query.at("fieldSelector"), "spec.nodeName=n");
  EXPECT_EQ(RequestVerb("GET", *pods), "watch");
  pods->query.erase("watch");
  EXPECT_EQ(RequestVerb("GET", *pods), "list");
  EXPECT_EQ(RequestVerb("POST", *pods), "create");
  EXPECT_EQ(RequestVerb("DELETE", *pods), "deletecollection");
  EXPECT_EQ(RequestVerb("OPTIONS", *pods), "");
}

TEST(RequestInfo, PathsWithoutAResource) {
  EXPECT_FALSE(ParseRequestPath("/healthz").has_value());
  EXPECT_FALSE(ParseRequestPath("/api").has_value());
  EXPECT_FALSE(ParseRequestPath("/api/v1").has_value());
  EXPECT_FALSE(ParseRequestPath("/apis/apps/v1?x=1").has_value());
  EXPECT_FALSE(ParseRequestPath("/api/v1/namespaces/ns/pods/p/log/extra").has_value());
  // A malformed escape is kept as written.
  auto i = ParseRequestPath("/api/v1/pods?labelSelector=a%zz");
  ASSERT_TRUE(i.has_value());
  EXPECT_EQ(i->query.at("labelSelector"), "a%zz");
}

}  // namespace
}  // namespace kubelet::apiclient
