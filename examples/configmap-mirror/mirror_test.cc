// Decide is a pure function: a table of snapshots and the plans they must produce.
#include <gtest/gtest.h>

#include "mirror.h"

namespace mirror {
namespace {

api::ObjectPtr ConfigMap(const std::string& ns, const std::string& name,
                         const std::string& data_value, bool labeled = false,
                         const std::string& rv = "1") {
  api::Object o;
  o.SetGvk({"", "v1", "ConfigMap"});
  o.set_namespace(ns);
  o.set_name(name);
  o.set_resource_version(rv);
  o.set_uid("uid-" + ns + "-" + name);
  if (labeled) o.SetLabel(kSourceLabel, "src");
  o.mutable_doc()["data"] = boost::json::object{{"key", data_value}};
  return std::make_shared<const api::Object>(std::move(o));
}

TEST(DecideTest, Table) {
  struct Case {
    const char* name;
    api::ObjectPtr source;
    api::ObjectPtr copy;
    Plan::Action want;
  };
  const Case cases[] = {
      {"new source: create the copy", ConfigMap("src", "a", "1"), nullptr, Plan::Action::kCreate},
      {"copy up to date: nothing", ConfigMap("src", "a", "1"), ConfigMap("dst", "a", "1", true),
       Plan::Action::kNothing},
      {"source changed: update", ConfigMap("src", "a", "2"), ConfigMap("dst", "a", "1", true),
       Plan::Action::kUpdate},
      {"foreign ConfigMap in the way: leave it", ConfigMap("src", "a", "2"),
       ConfigMap("dst", "a", "1", false), Plan::Action::kNothing},
      {"source gone: delete our copy", nullptr, ConfigMap("dst", "a", "1", true),
       Plan::Action::kDelete},
      {"source gone, foreign ConfigMap: keep it", nullptr, ConfigMap("dst", "a", "1", false),
       Plan::Action::kNothing},
      {"nothing anywhere", nullptr, nullptr, Plan::Action::kNothing},
  };
  for (const Case& c : cases) {
    Plan p = Decide(c.source, c.copy, "src", "dst");
    EXPECT_EQ(p.action, c.want) << c.name;
  }
}

TEST(DecideTest, TheCopyIsLabeledAndUpdatesAreConditional) {
  Plan create = Decide(ConfigMap("src", "a", "1"), nullptr, "src", "dst");
  EXPECT_EQ(create.desired.namespace_(), "dst");
  EXPECT_EQ(create.desired.label(kSourceLabel), "src");
  EXPECT_EQ(api::FindString(create.desired.doc(), {"data", "key"}), "1");
  EXPECT_EQ(create.desired.resource_version(), "");
  Plan update =
      Decide(ConfigMap("src", "a", "2"), ConfigMap("dst", "a", "1", true, "77"), "src", "dst");
  EXPECT_EQ(update.desired.resource_version(), "77");
}

}  // namespace
}  // namespace mirror
