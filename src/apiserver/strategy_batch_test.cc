#include <gtest/gtest.h>

#include <functional>

#include "apiserver/strategy.h"
#include "apiserver/strategy_test_util.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;
using testing::Create;
using testing::Info;
using testing::Json;
using testing::Obj;
using testing::Update;
using Lines = std::vector<std::string>;

std::shared_ptr<const Strategy> Jobs() {
  return MakeStrategy(Info("batch", "v1", "jobs", "Job", true, {"status"}));
}

// What the storage layer does before PrepareForCreate: the uid is assigned.
api::Object NewJob(std::string_view spec_json = "") {
  api::Object job =
      Obj(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"pi","namespace":"default"},
    "spec":{"template":{"spec":{"restartPolicy":"Never",
      "containers":[{"name":"pi","image":"perl:5.34"}]}}}})");
  job.set_uid("3a0d1f5e-0000-4000-8000-000000000001");
  if (!spec_json.empty()) {
    json::object extra = json::parse(spec_json).as_object();
    for (auto& [k, v] : extra) job.mutable_doc()["spec"].get_object()[k] = v;
  }
  return job;
}

constexpr std::string_view kUid = "3a0d1f5e-0000-4000-8000-000000000001";

TEST(JobStrategyTest, CreateDefaultsAndGeneratedSelector) {
  auto s = Jobs();
  EXPECT_EQ(s->DefaultPropagationPolicy(), "Orphan");
  api::Object job = NewJob();
  EXPECT_EQ(Create(*s, job), Lines{});
  EXPECT_EQ(Json(job, {"spec", "parallelism"}), "1");
  EXPECT_EQ(Json(job, {"spec", "completions"}), "1");
  EXPECT_EQ(Json(job, {"spec", "backoffLimit"}), "6");
  EXPECT_EQ(Json(job, {"spec", "completionMode"}), R"("NonIndexed")");
  EXPECT_EQ(Json(job, {"spec", "suspend"}), "false");
  EXPECT_EQ(Json(job, {"spec", "podReplacementPolicy"}), R"("TerminatingOrFailed")");
  EXPECT_EQ(Json(job, {"spec", "manualSelector"}), "<absent>");
  const std::string uid(kUid);
  EXPECT_EQ(Json(job, {"spec", "selector"}),
            R"({"matchLabels":{"batch.kubernetes.io/controller-uid":")" + uid + R"("}})");
  const std::string labels = R"({"job-name":"pi","batch.kubernetes.io/job-name":"pi",)"
                             R"("controller-uid":")" +
                             uid + R"(","batch.kubernetes.io/controller-uid":")" + uid + R"("})";
  EXPECT_EQ(Json(job, {"spec", "template", "metadata", "labels"}), labels);
  // The Job itself takes the template's labels.
  EXPECT_EQ(Json(job, {"metadata", "labels"}), labels);
  EXPECT_EQ(Json(job, {"spec", "template", "spec", "terminationGracePeriodSeconds"}), "30");
  EXPECT_EQ(job.generation(), 1);
}

TEST(JobStrategyTest, CompletionsParallelismDefaults) {
  struct Case {
    const char* name;
    const char* spec;
    const char* parallelism;
    const char* completions;
  };
  const Case cases[] = {
      {"neither", "", "1", "1"},
      {"parallelism only", R"({"parallelism":3})", "3", "<absent>"},
      {"completions only", R"({"completions":5})", "1", "5"},
  };
  auto s = Jobs();
  for (const Case& c : cases) {
    api::Object job = NewJob(c.spec);
    EXPECT_EQ(Create(*s, job), Lines{}) << c.name;
    EXPECT_EQ(Json(job, {"spec", "parallelism"}), c.parallelism) << c.name;
    EXPECT_EQ(Json(job, {"spec", "completions"}), c.completions) << c.name;
  }
  api::Object per_index =
      NewJob(R"({"completionMode":"Indexed","completions":3,"backoffLimitPerIndex":1})");
  EXPECT_EQ(Create(*s, per_index), Lines{});
  EXPECT_EQ(Json(per_index, {"spec", "backoffLimit"}), "2147483647");
  api::Object pfp = NewJob(
      R"({"podFailurePolicy":{"rules":[{"action":"Ignore","onPodConditions":[{"type":"DisruptionTarget"}]}]}})");
  EXPECT_EQ(Create(*s, pfp), Lines{});
  EXPECT_EQ(Json(pfp, {"spec", "podReplacementPolicy"}), R"("Failed")");
  EXPECT_EQ(
      Json(pfp, {"spec", "podFailurePolicy"}),
      R"({"rules":[{"action":"Ignore","onPodConditions":[{"type":"DisruptionTarget","status":"True"}]}]})");
}

TEST(JobStrategyTest, ValidationTable) {
  struct Case {
    const char* name;
    std::function<void(api::Object&)> mutate;
    Lines want;
  };
  auto tmpl_spec = [](api::Object& j) -> json::object& {
    return j.mutable_doc()["spec"].get_object()["template"].get_object()["spec"].get_object();
  };
  auto spec = [](api::Object& j) -> json::object& { return j.mutable_doc()["spec"].get_object(); };
  const Case cases[] = {
      {"valid", [](api::Object&) {}, {}},
      {"restartPolicy defaulted to Always",
       [&](api::Object& j) { tmpl_spec(j).erase("restartPolicy"); },
       {R"(spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never")"}},
      {"restartPolicy enum",
       [&](api::Object& j) { tmpl_spec(j)["restartPolicy"] = "Sometimes"; },
       {R"(spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never")",
        R"(spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "OnFailure", "Never")"}},
      {"negative counts",
       [&](api::Object& j) {
         spec(j)["parallelism"] = -1;
         spec(j)["completions"] = -2;
         spec(j)["backoffLimit"] = -3;
         spec(j)["activeDeadlineSeconds"] = -4;
       },
       {"spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
        "spec.completions: Invalid value: -2: must be greater than or equal to 0",
        "spec.activeDeadlineSeconds: Invalid value: -4: must be greater than or equal to 0",
        "spec.backoffLimit: Invalid value: -3: must be greater than or equal to 0"}},
      {"indexed needs completions",
       [&](api::Object& j) {
         spec(j)["completionMode"] = "Indexed";
         spec(j)["parallelism"] = 2;
       },
       {"spec.completions: Required value: when completion mode is Indexed"}},
      {"completionMode enum",
       [&](api::Object& j) { spec(j)["completionMode"] = "Random"; },
       {R"(spec.completionMode: Unsupported value: "Random": supported values: "NonIndexed", "Indexed")"}},
      {"backoffLimitPerIndex needs Indexed",
       [&](api::Object& j) { spec(j)["backoffLimitPerIndex"] = 1; },
       {"spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode"}},
      {"podFailurePolicy needs restartPolicy Never and podReplacementPolicy Failed",
       [&](api::Object& j) {
         spec(j)["podFailurePolicy"] = json::parse(R"({"rules":[]})");
         spec(j)["podReplacementPolicy"] = "TerminatingOrFailed";
         tmpl_spec(j)["restartPolicy"] = "OnFailure";
       },
       {R"(spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed")",
        R"(spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified)"}},
      {"manual selector must match the template",
       [&](api::Object& j) {
         spec(j)["manualSelector"] = true;
         spec(j)["selector"] = json::parse(R"({"matchLabels":{"app":"batch"}})");
       },
       {R"(spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` does not match template `labels`)"}},
      {"a user selector without manualSelector is not the generated one",
       [&](api::Object& j) {
         spec(j)["selector"] = json::parse(R"({"matchLabels":{"app":"batch"}})");
       },
       {"spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"
        "\"app\":\"batch\", \"batch.kubernetes.io/controller-uid\":\"" +
            std::string(kUid) +
            "\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` not "
            "auto-generated",
        "spec.template.metadata.labels: Invalid value: map[string]string{\"batch.kubernetes.io/"
        "controller-uid\":\"" +
            std::string(kUid) +
            "\", \"batch.kubernetes.io/job-name\":\"pi\", \"controller-uid\":\"" +
            std::string(kUid) +
            "\", \"job-name\":\"pi\"}: `selector` does not match template `labels`"}},
      {"conflicting template label",
       [&](api::Object& j) {
         j.mutable_doc()["spec"].get_object()["template"].get_object()["metadata"] =
             json::parse(R"({"labels":{"job-name":"other"}})");
       },
       {"spec.template.metadata.labels[job-name]: Invalid value: map[string]string{"
        "\"batch.kubernetes.io/controller-uid\":\"" +
        std::string(kUid) + "\", \"batch.kubernetes.io/job-name\":\"pi\", \"controller-uid\":\"" +
        std::string(kUid) + "\", \"job-name\":\"other\"}: must be 'pi'"}},
  };
  auto s = Jobs();
  for (const Case& c : cases) {
    api::Object job = NewJob();
    c.mutate(job);
    EXPECT_EQ(Create(*s, job), c.want) << c.name;
  }
}

TEST(JobStrategyTest, UpdateRules) {
  auto s = Jobs();
  api::Object old = NewJob(R"({"suspend":true})");
  ASSERT_EQ(Create(*s, old), Lines{});
  const std::string sel =
      "v1.LabelSelector{MatchLabels:map[string]string{\"batch.kubernetes.io/"
      "controller-uid\":\"other\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}";
  struct Case {
    const char* name;
    std::function<void(json::object& spec)> mutate;
    Lines want;
  };
  const Case cases[] = {
      {"resume", [](json::object& s) { s["suspend"] = false; }, {}},
      {"parallelism", [](json::object& s) { s["parallelism"] = 4; }, {}},
      {"completions are immutable",
       [](json::object& s) { s["completions"] = 3; },
       {"spec.completions: Invalid value: 3: field is immutable"}},
      {"suspended and not started: node selector may change",
       [](json::object& s) {
         s["template"].get_object()["spec"].get_object()["nodeSelector"] =
             json::parse(R"({"disk":"ssd"})");
       },
       {}},
      {"the containers may not",
       [](json::object& s) {
         s["template"]
             .get_object()["spec"]
             .get_object()["containers"]
             .get_array()[0]
             .get_object()["image"] = "perl:5.36";
       },
       {"<template immutable>"}},
      {"completionMode is immutable",
       [](json::object& s) { s["completionMode"] = "Indexed"; },
       {R"(spec.completionMode: Invalid value: "Indexed": field is immutable)"}},
  };
  for (const Case& c : cases) {
    api::Object job = old;
    c.mutate(job.mutable_doc()["spec"].get_object());
    Lines got = Update(*s, job, old);
    if (c.want == Lines{"<template immutable>"}) {
      ASSERT_EQ(got.size(), 1u) << c.name;
      EXPECT_EQ(got[0].substr(0, 30), "spec.template: Invalid value: ") << c.name;
      EXPECT_EQ(got[0].substr(got[0].size() - 20), ": field is immutable") << c.name;
      continue;
    }
    EXPECT_EQ(got, c.want) << c.name;
  }

  // Selector changes are immutable (and here also break the generated-selector rules).
  api::Object moved = old;
  moved.mutable_doc()["spec"].get_object()["selector"] =
      json::parse(R"({"matchLabels":{"batch.kubernetes.io/controller-uid":"other"}})");
  Lines got = Update(*s, moved, old);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back(), "spec.selector: Invalid value: " + sel + ": field is immutable");

  // A started Job's template is fully immutable.
  api::Object started = old;
  started.mutable_doc()["status"] = json::parse(R"({"startTime":"2026-01-01T00:00:00Z"})");
  api::Object upd = started;
  upd.mutable_doc()["spec"]
      .get_object()["template"]
      .get_object()["spec"]
      .get_object()["nodeSelector"] = json::parse(R"({"disk":"ssd"})");
  got = Update(*s, upd, started);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].substr(0, 30), "spec.template: Invalid value: ");

  // Elastic Indexed Jobs scale completions with parallelism.
  api::Object indexed = NewJob(R"({"completionMode":"Indexed","completions":3,"parallelism":3})");
  ASSERT_EQ(Create(*s, indexed), Lines{});
  api::Object scaled = indexed;
  scaled.mutable_doc()["spec"].get_object()["completions"] = 5;
  scaled.mutable_doc()["spec"].get_object()["parallelism"] = 5;
  EXPECT_EQ(Update(*s, scaled, indexed), Lines{});
  scaled.mutable_doc()["spec"].get_object()["parallelism"] = 4;
  EXPECT_EQ(Update(*s, scaled, indexed),
            Lines{"spec.completions: Invalid value: 5: can only be modified in tandem with "
                  "spec.parallelism"});
}

// ---- CronJobs ----

TEST(CronJobStrategyTest, DefaultsAndValidation) {
  auto s = MakeStrategy(Info("batch", "v1", "cronjobs", "CronJob", true, {"status"}));
  api::Object cj =
      Obj(R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"hello","namespace":"d"},
    "spec":{"schedule":"*/5 * * * *","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"OnFailure",
      "containers":[{"name":"c","image":"busybox:1.36"}]}}}}}})");
  EXPECT_EQ(Create(*s, cj), Lines{});
  EXPECT_EQ(Json(cj, {"spec", "concurrencyPolicy"}), R"("Allow")");
  EXPECT_EQ(Json(cj, {"spec", "suspend"}), "false");
  EXPECT_EQ(Json(cj, {"spec", "successfulJobsHistoryLimit"}), "3");
  EXPECT_EQ(Json(cj, {"spec", "failedJobsHistoryLimit"}), "1");
  EXPECT_EQ(Json(cj, {"spec", "jobTemplate", "spec", "template", "spec", "dnsPolicy"}),
            R"("ClusterFirst")");
  // Job defaults are not applied to the template (the Job gets them when it is created).
  EXPECT_EQ(Json(cj, {"spec", "jobTemplate", "spec", "backoffLimit"}), "<absent>");

  struct Case {
    const char* name;
    std::function<void(json::object& spec)> mutate;
    Lines want;
  };
  const Case cases[] = {
      {"descriptor", [](json::object& s) { s["schedule"] = "@hourly"; }, {}},
      {"schedule required",
       [](json::object& s) { s.erase("schedule"); },
       {"spec.schedule: Required value"}},
      {"schedule fields",
       [](json::object& s) { s["schedule"] = "every minute"; },
       {R"(spec.schedule: Invalid value: "every minute": Expected exactly 5 fields, found 2: every minute)"}},
      {"concurrency policy",
       [](json::object& s) { s["concurrencyPolicy"] = "Sometimes"; },
       {R"(spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace")"}},
      {"selector is generated",
       [](json::object& s) {
         s["jobTemplate"].get_object()["spec"].get_object()["selector"] =
             json::parse(R"({"matchLabels":{"a":"b"}})");
       },
       {"spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:"
        "map[string]string{\"a\":\"b\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: "
        "`selector` will be auto-generated"}},
      {"job template restartPolicy",
       [](json::object& s) {
         s["jobTemplate"]
             .get_object()["spec"]
             .get_object()["template"]
             .get_object()["spec"]
             .get_object()["restartPolicy"] = "Always";
       },
       {R"(spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never")"}},
  };
  for (const Case& c : cases) {
    api::Object obj = cj;
    c.mutate(obj.mutable_doc()["spec"].get_object());
    EXPECT_EQ(Create(*s, obj), c.want) << c.name;
  }
  api::Object long_name = cj;
  long_name.set_name(std::string(53, 'a'));
  EXPECT_EQ(Create(*s, long_name),
            Lines{R"(metadata.name: Invalid value: ")" + std::string(53, 'a') +
                  R"(": must be no more than 52 characters)"});
}

}  // namespace
}  // namespace converge::apiserver
