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

}  // namespace
}  // namespace converge::scheduler
