#include "scheduler/taints.h"

#include <gtest/gtest.h>

namespace converge::scheduler {
namespace {

TEST(TaintsTest, ToleratesTaint) {
  const Taint taint{"dedicated", "gpu", "NoSchedule"};
  struct Case {
    const char* name;
    Toleration toleration;
    bool tolerates;
  };
  const Case cases[] = {
      {"equal key, value and effect", {"dedicated", "Equal", "gpu", "NoSchedule", {}}, true},
      {"empty operator means Equal", {"dedicated", "", "gpu", "NoSchedule", {}}, true},
      {"other value", {"dedicated", "Equal", "cpu", "NoSchedule", {}}, false},
      {"Exists ignores the value", {"dedicated", "Exists", "", "NoSchedule", {}}, true},
      {"empty effect matches every effect", {"dedicated", "Exists", "", "", {}}, true},
      {"other effect", {"dedicated", "Exists", "", "NoExecute", {}}, false},
      {"empty key with Exists tolerates everything", {"", "Exists", "", "", {}}, true},
      {"other key", {"team", "Exists", "", "", {}}, false},
      {"unknown operator", {"dedicated", "Gt", "gpu", "NoSchedule", {}}, false},
  };
  for (const Case& c : cases) EXPECT_EQ(c.toleration.ToleratesTaint(taint), c.tolerates) << c.name;
}

TEST(TaintsTest, FindUntoleratedScheduleTaintSkipsPreferNoScheduleAndReturnsTheFirst) {
  std::vector<Taint> taints = {
      {"soft", "", "PreferNoSchedule"}, {"a", "1", "NoExecute"}, {"b", "2", "NoSchedule"}};
  const Taint* t = FindUntoleratedScheduleTaint(taints, {});
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->key, "a");
  std::vector<Toleration> tolerate_a = {{"a", "Exists", "", "", {}}};
  t = FindUntoleratedScheduleTaint(taints, tolerate_a);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->key, "b");
  tolerate_a.push_back({"b", "Equal", "2", "NoSchedule", {}});
  EXPECT_EQ(FindUntoleratedScheduleTaint(taints, tolerate_a), nullptr);
}

TEST(TaintsTest, ParsesTolerationSeconds) {
  boost::json::array a{boost::json::object{{"key", "node.kubernetes.io/not-ready"},
                                           {"operator", "Exists"},
                                           {"effect", "NoExecute"},
                                           {"tolerationSeconds", 300}}};
  std::vector<Toleration> t = ParseTolerations(&a);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].toleration_seconds, 300);
  EXPECT_EQ(t[0].op, "Exists");
}

// Every pod carries the two default tolerations: they share one parsed list while any pod holds it.
TEST(TaintsTest, PodsWithTheSameTolerationsShareOneList) {
  auto defaults = [] {
    return boost::json::parse(
               R"([{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute",)"
               R"("tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable",)"
               R"("operator":"Exists","effect":"NoExecute","tolerationSeconds":300}])")
        .as_array();
  };
  const boost::json::array a = defaults(), b = defaults();
  TolerationsPtr first = SharedTolerations(&a);
  TolerationsPtr second = SharedTolerations(&b);
  EXPECT_EQ(first.get(), second.get());
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ((*first)[1].key, "node.kubernetes.io/unreachable");
  EXPECT_EQ((*first)[1].toleration_seconds, 300);
  // Other tolerations get a list of their own, with what ParseTolerations gives.
  boost::json::array other = defaults();
  other[0].as_object()["tolerationSeconds"] = 60;
  TolerationsPtr third = SharedTolerations(&other);
  EXPECT_NE(third.get(), first.get());
  EXPECT_EQ((*third)[0].toleration_seconds, 60);
  EXPECT_EQ((*third)[0].key, ParseTolerations(&other)[0].key);
  // None: an empty list, never null.
  boost::json::array none;
  ASSERT_NE(SharedTolerations(nullptr), nullptr);
  EXPECT_TRUE(SharedTolerations(&none)->empty());
  // Once nobody holds a list, a later pod parses it anew (nothing is kept for good).
  const std::weak_ptr<const std::vector<Toleration>> gone = third;
  third.reset();
  EXPECT_TRUE(gone.expired());
  EXPECT_EQ((*SharedTolerations(&other))[0].toleration_seconds, 60);
}

}  // namespace
}  // namespace converge::scheduler
