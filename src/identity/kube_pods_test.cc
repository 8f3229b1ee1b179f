#include "identity/kube_pods.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

namespace cgov {
namespace {

using ::testing::HasSubstr;

// A v1 Pod as the API server serves it (the fields cgov reads, and some it does not).
std::string Pod(const std::string& uid, const std::string& ns, const std::string& name,
                const std::string& labels, const std::string& container_id,
                const std::string& version = "100") {
  return fmt::format(R"({{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"{}","namespace":"{}",
      "uid":"{}","resourceVersion":"{}","creationTimestamp":"2026-11-24T10:00:00Z",
      "labels":{{{}}}}},"spec":{{"nodeName":"gpu-node-1","containers":[{{"name":"trainer",
      "resources":{{"limits":{{"nvidia.com/gpu":"1"}}}}}}]}},"status":{{"phase":"Running",
      "containerStatuses":[{{"name":"trainer","ready":true,"restartCount":0,
      "image":"nvcr.io/nvidia/pytorch:24.01-py3","containerID":"containerd://{}"}}]}}}})",
                     name, ns, uid, version, labels, container_id);
}

std::string List(const std::vector<std::string>& pods, const std::string& version,
                 const std::string& next = "") {
  std::string items;
  for (const std::string& p : pods) items += (items.empty() ? "" : ",") + p;
  return fmt::format(
      R"({{"kind":"PodList","apiVersion":"v1","metadata":{{"resourceVersion":"{}"{}}},
      "items":[{}]}})",
      version, next.empty() ? "" : ",\"continue\":\"" + next + "\"", items);
}

TEST(KubePods, ListThenWatchEventsGiveNamesContainersAndLabels) {
  KubePodDirectory d(DefaultKubeLabelMap());
  const std::string a = Pod("uid-a", "ml", "train-0",
                            R"("project-id":"llm","team-id":"research","user-id":"alice")", "aaa");
  const std::string b =
      Pod("uid-b", "notebooks", "nb-bob", R"("app.kubernetes.io/part-of":"jupyter")", "bbb");
  auto next = d.ApplyListPage(List({a}, "500", "page-2"), true, 0);
  ASSERT_TRUE(next.ok()) << next.status().message();
  EXPECT_EQ(*next, "page-2");
  next = d.ApplyListPage(List({b}, "500"), false, 0);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, "");
  EXPECT_EQ(d.resource_version(), "500");
  auto pod = d.Find("uid-a");
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->namespace_name, "ml");
  EXPECT_EQ(pod->name, "train-0");
  EXPECT_EQ(pod->project, "llm");
  EXPECT_EQ(pod->team, "research");
  EXPECT_EQ(pod->user, "alice");
  EXPECT_EQ(pod->containers.at("aaa"), "trainer");
  EXPECT_EQ(d.Find("uid-b")->project, "jupyter") << "the app.kubernetes.io fallback";
  EXPECT_EQ(d.Find("uid-b")->team, "") << "unlabelled";

  const uint64_t before = d.generation();
  ASSERT_TRUE(
      d.ApplyEvent(R"({"type":"MODIFIED","object":)" +
                       Pod("uid-b", "notebooks", "nb-bob", R"("project-id":"nb")", "bbb", "501") +
                       "}",
                   1000)
          .ok());
  EXPECT_GT(d.generation(), before);
  EXPECT_EQ(d.Find("uid-b")->project, "nb");
  EXPECT_EQ(d.resource_version(), "501");
  ASSERT_TRUE(d.ApplyEvent(R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1",
      "metadata":{"resourceVersion":"600","annotations":{"k8s.io/initial-events-end":"true"}}}})",
                           1000)
                  .ok());
  EXPECT_EQ(d.resource_version(), "600");
  // Deleted: kept for the grace period (its processes may linger), then forgotten.
  ASSERT_TRUE(d.ApplyEvent(R"({"type":"DELETED","object":)" + a + "}", 2000).ok());
  ASSERT_TRUE(d.Find("uid-a"));
  EXPECT_EQ(d.Find("uid-a")->deleted_ms, 2000);
  d.Expire(2000 + 600'000);
  EXPECT_TRUE(d.Find("uid-a"));
  d.Expire(2000 + 600'001);
  EXPECT_FALSE(d.Find("uid-a"));
}

TEST(KubePods, ARelistMarksThePodsItNoLongerHasDeleted) {
  KubePodDirectory d(DefaultKubeLabelMap());
  ASSERT_TRUE(
      d.ApplyListPage(List({Pod("u1", "a", "p1", "", "c1"), Pod("u2", "a", "p2", "", "c2")}, "10"),
                      true, 0)
          .ok());
  ASSERT_TRUE(d.ApplyListPage(List({Pod("u2", "a", "p2", "", "c2")}, "20"), true, 5000).ok());
  EXPECT_EQ(d.Find("u1")->deleted_ms, 5000) << "gone while nobody watched";
  EXPECT_EQ(d.Find("u2")->deleted_ms, 0);
}

// The pod-resources API names pods by namespace and name: a pod replaced under the same name
// (a StatefulSet's) is found as the live one.
TEST(KubePods, FindByNamePrefersTheLivePod) {
  KubePodDirectory d(DefaultKubeLabelMap());
  ASSERT_TRUE(
      d.ApplyListPage(
           List({Pod("old", "ml", "db-0", "", "c1"), Pod("x", "other", "db-0", "", "c3")}, "10"),
           true, 0)
          .ok());
  ASSERT_TRUE(
      d.ApplyEvent(R"({"type":"DELETED","object":)" + Pod("old", "ml", "db-0", "", "c1") + "}",
                   1000)
          .ok());
  EXPECT_EQ(d.FindByName("ml", "db-0")->uid, "old") << "deleted, but the only one";
  ASSERT_TRUE(
      d.ApplyEvent(R"({"type":"ADDED","object":)" + Pod("new", "ml", "db-0", "", "c2") + "}", 2000)
          .ok());
  EXPECT_EQ(d.FindByName("ml", "db-0")->uid, "new");
  EXPECT_EQ(d.FindByName("other", "db-0")->uid, "x");
  EXPECT_FALSE(d.FindByName("ml", "db-1"));
}

TEST(KubePods, ErrorsAndGone) {
  KubePodDirectory d(DefaultKubeLabelMap());
  Status gone = d.ApplyEvent(R"j({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1",
      "metadata":{},"status":"Failure","message":"too old resource version: 123 (456)",
      "reason":"Expired","code":410}})j",
                             0);
  EXPECT_EQ(gone.code(), StatusCode::kNotFound);
  EXPECT_THAT(gone.message(), HasSubstr("too old resource version"));
  Status other = d.ApplyEvent(R"({"type":"ERROR","object":{"kind":"Status","code":500,
      "message":"etcd"}})",
                              0);
  EXPECT_EQ(other.code(), StatusCode::kUnavailable);
  EXPECT_FALSE(d.ApplyEvent("not json", 0).ok());
  EXPECT_FALSE(d.ApplyEvent(R"({"type":"SOMETHING","object":{}})", 0).ok());
  EXPECT_FALSE(d.ApplyEvent(R"({"type":"ADDED","object":{"metadata":{}}})", 0).ok());
  EXPECT_FALSE(d.ApplyListPage(R"({"kind":"Status","code":403})", true, 0).ok());
}

TEST(KubePods, BoundedAndEscaped) {
  KubePodDirectory d(DefaultKubeLabelMap(), /*max_pods=*/2);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(d.ApplyEvent(R"({"type":"ADDED","object":)" +
                                 Pod("u" + std::to_string(i), "ns", "p", "", "c") + "}",
                             0)
                    .ok());
  }
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(d.dropped(), 1u);
  KubePodDirectory e(DefaultKubeLabelMap());
  ASSERT_TRUE(e.ApplyEvent(R"({"type":"ADDED","object":)" +
                               Pod("u", "ns", "p\\u001b[31m", R"("project-id":"x\u0007")", "c") +
                               "}",
                           0)
                  .ok());
  EXPECT_EQ(e.Find("u")->name, "p\\x1b[31m");
  EXPECT_EQ(e.Find("u")->project, "x\\x07");
}

TEST(KubeLabelMap, ParsesAndKeepsDefaultsForWhatItDoesNotName) {
  auto m = ParseKubeLabelMap("project=cost-center,example.com/project;user=owner");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->project, (std::vector<std::string>{"cost-center", "example.com/project"}));
  EXPECT_EQ(m->team, std::vector<std::string>{"team-id"});
  EXPECT_EQ(m->user, std::vector<std::string>{"owner"});
  for (const char* bad : {"", "project", "group=x", "project=", "project=-x", "project=a b",
                          "project=a;project=b", "project=Example.com/x"}) {
    EXPECT_FALSE(ParseKubeLabelMap(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace cgov
