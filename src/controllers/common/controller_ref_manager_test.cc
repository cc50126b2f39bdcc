#include "controllers/common/controller_ref_manager.h"

#include <gtest/gtest.h>

#include "client/api_errors.h"
#include "controllers/common/test_objects.h"

namespace converge::controllers {
namespace {

using testing::MakeOwner;
using testing::MakePod;

const api::GroupVersionKind kRsKind{"apps", "v1", "ReplicaSet"};

TEST(ClaimTest, DecideClaimTable) {
  api::Object rs = MakeOwner("ReplicaSet", "web", "rs-uid");
  api::Object deleting = rs;
  deleting.mutable_metadata()["deletionTimestamp"] = "2025-01-01T00:00:00Z";
  OwnerRef mine = NewControllerRef(rs, kRsKind);
  OwnerRef theirs = mine;
  theirs.uid = "other";
  struct Case {
    std::string name;
    const api::Object* controller;
    api::ObjectPtr pod;
    bool matches;
    ClaimAction want;
  };
  std::vector<Case> cases = {
      {"someone else's", &rs, MakePod({.name = "p", .owner = theirs}), true, ClaimAction::kIgnore},
      {"ours, matching", &rs, MakePod({.name = "p", .owner = mine}), true, ClaimAction::kOwned},
      {"ours, matching, we are deleted", &deleting, MakePod({.name = "p", .owner = mine}), true,
       ClaimAction::kOwned},
      {"ours, not matching", &rs, MakePod({.name = "p", .owner = mine}), false,
       ClaimAction::kRelease},
      {"ours, not matching, we are deleted", &deleting, MakePod({.name = "p", .owner = mine}),
       false, ClaimAction::kIgnore},
      {"orphan, matching", &rs, MakePod({.name = "p"}), true, ClaimAction::kAdopt},
      {"orphan, not matching", &rs, MakePod({.name = "p"}), false, ClaimAction::kIgnore},
      {"orphan, we are deleted", &deleting, MakePod({.name = "p"}), true, ClaimAction::kIgnore},
      {"orphan being deleted", &rs, MakePod({.name = "p", .deleting = true}), true,
       ClaimAction::kIgnore},
      {"orphan in another namespace", &rs, MakePod({.name = "p", .ns = "other"}), true,
       ClaimAction::kIgnore},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(DecideClaim(*c.controller, *c.pod, c.matches), c.want) << c.name;
  }
}

TEST(ClaimTest, ClaimAdoptsReleasesAndIgnores) {
  api::Object rs = MakeOwner("ReplicaSet", "web", "rs-uid");
  OwnerRef mine = NewControllerRef(rs, kRsKind);
  std::vector<api::ObjectPtr> pods = {
      MakePod({.name = "owned", .owner = mine}),
      MakePod({.name = "orphan"}),
      MakePod({.name = "stray", .labels = {{"app", "other"}}, .owner = mine}),
      MakePod({.name = "unrelated", .labels = {{"app", "other"}}}),
  };
  std::vector<std::pair<std::string, std::string>> patches;
  int can_adopt_calls = 0;
  ClaimOptions o;
  o.controller = &rs;
  o.controller_gvk = kRsKind;
  o.selector = api::LabelSelector::FromMap({{"app", "web"}});
  o.can_adopt = [&] {
    ++can_adopt_calls;
    return util::Status();
  };
  o.patch = [&](const api::Object& obj, const std::string& patch) {
    patches.emplace_back(std::string(obj.name()), patch);
    return util::Status();
  };
  ClaimResult r = ClaimObjects(o, pods);
  ASSERT_TRUE(r.error.ok()) << r.error.ToString();
  ASSERT_EQ(r.claimed.size(), 2u);
  EXPECT_EQ(r.claimed[0]->name(), "owned");
  EXPECT_EQ(r.claimed[1]->name(), "orphan");
  EXPECT_EQ(can_adopt_calls, 1);
  ASSERT_EQ(patches.size(), 2u);
  EXPECT_EQ(patches[0].first, "orphan");
  EXPECT_EQ(boost::json::parse(patches[0].second),
            boost::json::parse(R"({"metadata":{"ownerReferences":[{"apiVersion":"apps/v1",
              "kind":"ReplicaSet","name":"web","uid":"rs-uid","controller":true,
              "blockOwnerDeletion":true}],"uid":"uid-orphan"}})"));
  EXPECT_EQ(patches[1].first, "stray");
  EXPECT_EQ(boost::json::parse(patches[1].second),
            boost::json::parse(R"({"metadata":{"ownerReferences":[{"$patch":"delete",
              "uid":"rs-uid"}],"uid":"uid-stray"}})"));
}

TEST(ClaimTest, RefusedAdoptionAndTolerableErrors) {
  api::Object rs = MakeOwner("ReplicaSet", "web", "rs-uid");
  OwnerRef mine = NewControllerRef(rs, kRsKind);
  ClaimOptions o;
  o.controller = &rs;
  o.controller_gvk = kRsKind;
  o.selector = api::LabelSelector::FromMap({{"app", "web"}});
  o.can_adopt = [] {
    return util::FailedPrecondition("ReplicaSet default/web has just been deleted");
  };
  int patches = 0;
  o.patch = [&](const api::Object&, const std::string&) {
    ++patches;
    return util::Status();
  };
  ClaimResult r = ClaimObjects(o, {MakePod({.name = "a"}), MakePod({.name = "b"})});
  EXPECT_TRUE(r.claimed.empty());
  EXPECT_EQ(r.error.code(), util::Code::kFailedPrecondition);
  EXPECT_EQ(patches, 0);

  // The pod vanished (NotFound) on adoption; the release is refused as Invalid: neither is an
  // error, neither pod is ours.
  o.can_adopt = nullptr;
  o.patch = [](const api::Object& obj, const std::string&) {
    return obj.name() == "gone" ? util::NotFound("gone").WithReason("NotFound")
                                : util::InvalidArgument("invalid").WithReason("Invalid");
  };
  r = ClaimObjects(o, {MakePod({.name = "gone"}),
                       MakePod({.name = "stray", .labels = {{"app", "x"}}, .owner = mine})});
  EXPECT_TRUE(r.error.ok()) << r.error.ToString();
  EXPECT_TRUE(r.claimed.empty());
}

TEST(ClaimTest, RecheckDeletionTimestamp) {
  api::Object fresh = MakeOwner("ReplicaSet", "web", "rs-uid");
  EXPECT_TRUE(
      RecheckDeletionTimestamp([&] { return util::StatusOr<api::Object>(fresh); }, "rs-uid")()
          .ok());
  EXPECT_EQ(
      RecheckDeletionTimestamp([&] { return util::StatusOr<api::Object>(fresh); }, "old-uid")()
          .code(),
      util::Code::kFailedPrecondition);
  api::Object deleting = fresh;
  deleting.mutable_metadata()["deletionTimestamp"] = "2025-01-01T00:00:00Z";
  EXPECT_EQ(
      RecheckDeletionTimestamp([&] { return util::StatusOr<api::Object>(deleting); }, "rs-uid")()
          .code(),
      util::Code::kFailedPrecondition);
}

TEST(OwnerRefsTest, ControllerOf) {
  api::Object rs = MakeOwner("ReplicaSet", "web", "rs-uid");
  OwnerRef ref = NewControllerRef(rs, kRsKind);
  EXPECT_EQ(ref.api_version, "apps/v1");
  EXPECT_TRUE(ref.controller);
  EXPECT_TRUE(ref.block_owner_deletion);
  api::ObjectPtr pod = MakePod({.name = "p", .owner = ref});
  ASSERT_TRUE(GetControllerOf(*pod).has_value());
  EXPECT_EQ(*GetControllerOf(*pod), ref);
  EXPECT_TRUE(IsControlledBy(*pod, rs));
  OwnerRef plain = ref;
  plain.controller = false;
  EXPECT_FALSE(GetControllerOf(*MakePod({.name = "q", .owner = plain})).has_value());
}

}  // namespace
}  // namespace converge::controllers
