// Admission webhooks without a network: rule matching, AdmissionReview verification, upstream's
// error wording, and the plugin's decisions (failurePolicy, selectors, dry run, patches,
// warnings, reinvocation, parallel validating calls) through a recording fake client.
#include "apiserver/admission_webhook.h"

#include <gtest/gtest.h>

#include <mutex>

#include "apiserver/admission_review.h"
#include "apiserver/webhook_config.h"
#include "util/base64.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

api::ResourceInfo Resource(std::string group, std::string resource, std::string kind,
                           bool namespaced) {
  api::ResourceInfo info;
  info.gvr = {std::move(group), "v1", std::move(resource)};
  info.kind = std::move(kind);
  info.namespaced = namespaced;
  return info;
}

const api::ResourceInfo kPods = Resource("", "pods", "Pod", true);
const api::ResourceInfo kNamespaces = Resource("", "namespaces", "Namespace", false);
const api::ResourceInfo kNodes = Resource("", "nodes", "Node", false);
const api::ResourceInfo kDeployments = Resource("apps", "deployments", "Deployment", true);
const api::ResourceInfo kValidatingConfigs =
    Resource("admissionregistration.k8s.io", "validatingwebhookconfigurations",
             "ValidatingWebhookConfiguration", false);

Webhook Hook(std::string name, json::object rule_json, bool mutating = false) {
  json::object doc;
  doc["metadata"] = json::object{{"name", "config"}};
  json::object hook;
  hook["name"] = name;
  hook["rules"] = json::array{std::move(rule_json)};
  hook["sideEffects"] = "None";
  hook["clientConfig"] = json::object{{"url", "https://127.0.0.1:1/" + name}};
  doc["webhooks"] = json::array{std::move(hook)};
  return WebhooksFromConfiguration(doc, mutating).at(0);
}

json::object Rule(std::vector<std::string> resources, std::string scope = "*",
                  std::vector<std::string> ops = {"*"}, std::vector<std::string> groups = {"*"}) {
  auto arr = [](const std::vector<std::string>& v) {
    json::array a;
    for (const auto& s : v) a.emplace_back(s);
    return a;
  };
  return {{"operations", arr(ops)},
          {"apiGroups", arr(groups)},
          {"apiVersions", json::array{"*"}},
          {"resources", arr(resources)},
          {"scope", scope}};
}

api::Object Pod(std::string name, json::object labels = {}) {
  api::Object pod;
  pod.SetGvk({"", "v1", "Pod"});
  pod.set_name(name);
  pod.set_namespace("team");
  if (!labels.empty()) pod.mutable_metadata()["labels"] = std::move(labels);
  return pod;
}

AdmissionAttributes Attrs(const api::ResourceInfo& info, std::string op, api::Object* obj,
                          std::string ns = "team", std::string sub = "") {
  static const UserInfo kUser{"alice", "u-1", {"devs", "system:authenticated"}, true};
  AdmissionAttributes a;
  a.operation = std::move(op);
  a.resource = &info;
  a.subresource = std::move(sub);
  a.ns = std::move(ns);
  a.name = obj ? std::string(obj->name()) : "x";
  a.object = obj;
  a.user = &kUser;
  return a;
}

TEST(WebhookRulesTest, MatchLikeUpstream) {
  api::Object pod = Pod("p");
  struct Case {
    const char* name;
    json::object rule;
    const api::ResourceInfo* info;
    std::string op;
    std::string ns;
    std::string sub;
    bool want;
  };
  const Case cases[] = {
      {"exact resource", Rule({"pods"}), &kPods, "CREATE", "team", "", true},
      {"other resource", Rule({"services"}), &kPods, "CREATE", "team", "", false},
      {"star skips subresources", Rule({"*"}), &kPods, "UPDATE", "team", "status", false},
      {"named subresource", Rule({"pods/status"}), &kPods, "UPDATE", "team", "status", true},
      {"resource without its subresource", Rule({"pods"}), &kPods, "UPDATE", "team", "status",
       false},
      {"star slash star", Rule({"*/*"}), &kPods, "UPDATE", "team", "status", true},
      {"any subresource of pods", Rule({"pods/*"}), &kPods, "UPDATE", "team", "status", true},
      {"operation filtered", Rule({"pods"}, "*", {"UPDATE"}), &kPods, "CREATE", "team", "", false},
      {"operation listed", Rule({"pods"}, "*", {"DELETE", "CREATE"}), &kPods, "CREATE", "team", "",
       true},
      {"group filtered", Rule({"*"}, "*", {"*"}, {"apps"}), &kPods, "CREATE", "team", "", false},
      {"group listed", Rule({"*"}, "*", {"*"}, {"apps"}), &kDeployments, "CREATE", "team", "",
       true},
      {"namespaced scope, namespaced object", Rule({"*"}, "Namespaced"), &kPods, "CREATE", "team",
       "", true},
      {"namespaced scope, node", Rule({"*"}, "Namespaced"), &kNodes, "CREATE", "", "", false},
      {"namespaced scope, namespace itself", Rule({"*"}, "Namespaced"), &kNamespaces, "CREATE",
       "team", "", false},
      {"cluster scope, namespace itself", Rule({"*"}, "Cluster"), &kNamespaces, "CREATE", "team",
       "", true},
      {"cluster scope, pod", Rule({"*"}, "Cluster"), &kPods, "CREATE", "team", "", false},
  };
  for (const Case& c : cases) {
    Webhook hook = Hook("h.example.com", c.rule);
    AdmissionAttributes a = Attrs(*c.info, c.op, &pod, c.ns, c.sub);
    EXPECT_EQ(RulesMatch(hook, a), c.want) << c.name;
  }
}

TEST(WebhookRulesTest, ConfigurationsThemselvesAreExempt) {
  api::Object obj;
  EXPECT_TRUE(IsExemptFromWebhooks(Attrs(kValidatingConfigs, "CREATE", &obj, "")));
  EXPECT_FALSE(IsExemptFromWebhooks(Attrs(kPods, "CREATE", &obj)));
}

TEST(WebhookRulesTest, TimeoutDefaultsAndClamps) {
  json::object doc = {{"metadata", {{"name", "c"}}}};
  doc["webhooks"] = json::array{json::object{{"name", "a.b.c"}},
                                json::object{{"name", "d.e.f"}, {"timeoutSeconds", 90}}};
  auto hooks = WebhooksFromConfiguration(doc, false);
  ASSERT_EQ(hooks.size(), 2u);
  EXPECT_EQ(hooks[0].timeout, std::chrono::seconds(10));
  EXPECT_EQ(hooks[1].timeout, std::chrono::seconds(30));
}

std::string Review(std::string uid, bool allowed, json::object extra = {}) {
  json::object resp{{"uid", uid}, {"allowed", allowed}};
  for (auto& [k, v] : extra) resp[k] = v;
  return json::serialize(json::object{
      {"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"response", resp}});
}

TEST(AdmissionReviewTest, RequestCarriesWhatWebhooksRead) {
  api::Object pod = Pod("web");
  AdmissionAttributes a = Attrs(kPods, "CREATE", &pod);
  a.dry_run = true;
  json::value v = json::parse(BuildAdmissionReview(a, "uid-1"));
  const json::object& req = v.at("request").as_object();
  EXPECT_EQ(v.at("apiVersion"), "admission.k8s.io/v1");
  EXPECT_EQ(req.at("uid"), "uid-1");
  EXPECT_EQ(req.at("operation"), "CREATE");
  EXPECT_EQ(req.at("namespace"), "team");
  EXPECT_EQ(req.at("name"), "web");
  EXPECT_EQ(req.at("kind").at("kind"), "Pod");
  EXPECT_EQ(req.at("resource").at("resource"), "pods");
  EXPECT_EQ(req.at("userInfo").at("username"), "alice");
  EXPECT_EQ(req.at("userInfo").at("groups").as_array().size(), 2u);
  EXPECT_EQ(req.at("object").at("metadata").at("name"), "web");
  EXPECT_TRUE(req.at("oldObject").is_null());
  EXPECT_EQ(req.at("dryRun"), true);
  EXPECT_EQ(req.at("options").at("kind"), "CreateOptions");
}

TEST(AdmissionReviewTest, ResponsesAreVerified) {
  struct Case {
    const char* name;
    int status;
    std::string body;
    bool mutating;
    std::string want_error;  // empty = ok
  };
  std::string patch = util::Base64Encode("[]");
  const Case cases[] = {
      {"allowed", 200, Review("u", true), false, ""},
      {"uid mismatch", 200, Review("other", true), false,
       "received invalid webhook response: expected response.uid=\"u\", got \"other\""},
      {"absent response", 200, R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})",
       false, "received invalid webhook response: webhook response was absent"},
      {"wrong version", 200,
       R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","response":{"uid":"u","allowed":true}})",
       false,
       "received invalid webhook response: expected webhook response of admission.k8s.io/v1, "
       "Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview"},
      {"patch without type", 200, Review("u", true, {{"patch", patch}}), true,
       "received invalid webhook response: webhook returned response.patch but not "
       "response.patchType"},
      {"validating may not patch", 200,
       Review("u", true, {{"patch", patch}, {"patchType", "JSONPatch"}}), false,
       "received invalid webhook response: validating webhook may not return response.patch or "
       "response.patchType"},
      {"server error", 500, "boom", false,
       "failed to call webhook: an error on the server (\"boom\") has prevented the request from "
       "succeeding"},
  };
  for (const Case& c : cases) {
    auto r = ParseAdmissionResponse(c.status, c.body, "u", c.mutating);
    if (c.want_error.empty()) {
      EXPECT_TRUE(r.ok()) << c.name << ": " << r.status().ToString();
    } else {
      ASSERT_FALSE(r.ok()) << c.name;
      EXPECT_EQ(r.status().message(), c.want_error) << c.name;
    }
  }
}

TEST(AdmissionReviewTest, DenialsAndFailuresAreWordedLikeUpstream) {
  ApiError e = WebhookDenied("deny.example.com", json::object{{"message", "no pods today"}});
  EXPECT_EQ(e.code, 400);
  EXPECT_EQ(e.reason, "");
  EXPECT_EQ(e.message, "admission webhook \"deny.example.com\" denied the request: no pods today");

  e = WebhookDenied("deny.example.com",
                    json::object{{"code", 403}, {"reason", "Forbidden"}, {"message", ""}});
  EXPECT_EQ(e.code, 403);
  EXPECT_EQ(e.reason, "Forbidden");
  EXPECT_EQ(e.message, "admission webhook \"deny.example.com\" denied the request: Forbidden");

  e = WebhookDenied("deny.example.com", json::object{{"code", 200}});
  EXPECT_EQ(e.code, 400);
  EXPECT_EQ(e.message,
            "admission webhook \"deny.example.com\" denied the request without "
            "explanation");
  EXPECT_EQ(WebhookDenied("x.y.z", std::nullopt).message,
            "admission webhook \"x.y.z\" denied the request without explanation");

  e = WebhookCallFailed("slow.example.com",
                        "failed to call webhook: Post \"https://h/?timeout=1s\": "
                        "context deadline exceeded");
  EXPECT_EQ(e.code, 500);
  EXPECT_EQ(e.reason, "InternalError");
  EXPECT_EQ(e.message,
            "Internal error occurred: failed calling webhook \"slow.example.com\": failed to call "
            "webhook: Post \"https://h/?timeout=1s\": context deadline exceeded");

  e = WebhookNoDryRun("side.example.com");
  EXPECT_EQ(e.code, 400);
  EXPECT_EQ(e.message, "admission webhook \"side.example.com\" does not support dry run");
}

// A WebhookClient that answers per webhook name and records every review it was sent.
class FakeWebhookClient : public WebhookClient {
 public:
  using Answer = std::function<util::StatusOr<Reply>(const json::object& request)>;
  void Set(const std::string& hook, Answer a) { answers_[hook] = std::move(a); }

  util::StatusOr<Reply> Post(const Webhook& hook, const std::string& body) override {
    json::value v = json::parse(body);
    json::object req = v.at("request").as_object();
    {
      std::lock_guard lock(mu_);
      calls_.push_back(hook.name);
    }
    return answers_.at(hook.name)(req);
  }
  std::vector<std::string> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  std::map<std::string, Answer> answers_;  // set before use
  std::mutex mu_;
  std::vector<std::string> calls_;  // guarded by mu_
};

FakeWebhookClient::Answer Allow(json::object extra = {}) {
  return [extra](const json::object& req) -> util::StatusOr<WebhookClient::Reply> {
    return WebhookClient::Reply{200, Review(std::string(req.at("uid").as_string()), true, extra)};
  };
}

FakeWebhookClient::Answer Deny(std::string message) {
  return [message](const json::object& req) -> util::StatusOr<WebhookClient::Reply> {
    return WebhookClient::Reply{
        200, Review(std::string(req.at("uid").as_string()), false,
                    {{"status", json::object{{"message", message}, {"code", 403}}}})};
  };
}

FakeWebhookClient::Answer Patch(std::string json_patch) {
  return Allow({{"patch", util::Base64Encode(json_patch)}, {"patchType", "JSONPatch"}});
}

FakeWebhookClient::Answer TimeOut() {
  return [](const json::object&) -> util::StatusOr<WebhookClient::Reply> {
    return util::DeadlineExceeded(
        "failed to call webhook: Post \"https://127.0.0.1:1/slow?timeout=1s\": context deadline "
        "exceeded");
  };
}

class WebhookAdmissionTest : public ::testing::Test {
 protected:
  WebhookAdmission Plugin() {
    return WebhookAdmission(WebhookAdmissionOptions{
        .webhooks = [this] { return std::make_shared<const WebhookSet>(set_); },
        .namespace_labels = [this](const std::string& ns) -> std::optional<json::object> {
          auto it = namespaces_.find(ns);
          if (it == namespaces_.end()) return std::nullopt;
          return it->second;
        },
        .client = &client_,
    });
  }
  Webhook& AddValidating(std::string name, json::object extra = {}) {
    set_.validating.push_back(Make(std::move(name), std::move(extra), false));
    return set_.validating.back();
  }
  Webhook& AddMutating(std::string name, json::object extra = {}) {
    set_.mutating.push_back(Make(std::move(name), std::move(extra), true));
    return set_.mutating.back();
  }
  static Webhook Make(std::string name, json::object extra, bool mutating) {
    json::object hook{{"name", name},
                      {"rules", json::array{Rule({"pods"})}},
                      {"sideEffects", "None"},
                      {"clientConfig", json::object{{"url", "https://127.0.0.1:1/" + name}}}};
    for (auto& [k, v] : extra) hook[k] = v;
    json::object doc{{"metadata", json::object{{"name", "c"}}},
                     {"webhooks", json::array{std::move(hook)}}};
    return WebhooksFromConfiguration(doc, mutating).at(0);
  }

  WebhookSet set_;
  FakeWebhookClient client_;
  std::map<std::string, json::object> namespaces_ = {
      {"team", json::object{{"env", "prod"}}},
      {"other", json::object{}},
  };
};

TEST_F(WebhookAdmissionTest, NoWebhooksCallsNothing) {
  auto plugin = Plugin();
  api::Object pod = Pod("p");
  AdmissionAttributes a = Attrs(kPods, "CREATE", &pod);
  EXPECT_FALSE(plugin.Admit(a));
  EXPECT_FALSE(plugin.Validate(a));
  EXPECT_TRUE(client_.calls().empty());
}

TEST_F(WebhookAdmissionTest, AllowDenyAndWarnings) {
  AddValidating("allow.example.com");
  AddValidating("deny.example.com");
  client_.Set("allow.example.com", Allow({{"warnings", json::array{"be careful"}}}));
  client_.Set("deny.example.com", Deny("no pods today"));
  auto plugin = Plugin();
  api::Object pod = Pod("p");
  std::vector<std::string> warnings;
  AdmissionAttributes a = Attrs(kPods, "CREATE", &pod);
  a.warnings = &warnings;
  auto err = plugin.Validate(a);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, 403);
  EXPECT_EQ(err->message,
            "admission webhook \"deny.example.com\" denied the request: no pods today");
  EXPECT_EQ(warnings, std::vector<std::string>{"be careful"});
  auto calls = client_.calls();
  std::sort(calls.begin(), calls.end());
  EXPECT_EQ(calls, (std::vector<std::string>{"allow.example.com", "deny.example.com"}));
}

TEST_F(WebhookAdmissionTest, FirstDenialInOrderWinsAmongParallelCalls) {
  for (int i = 0; i < 6; ++i) {
    std::string name = "v" + std::to_string(i) + ".example.com";
    AddValidating(name);
    client_.Set(name, i >= 2 ? Deny("denied by " + std::to_string(i)) : Allow());
  }
  auto plugin = Plugin();
  api::Object pod = Pod("p");
  AdmissionAttributes a = Attrs(kPods, "CREATE", &pod);
  auto err = plugin.Validate(a);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->message, "admission webhook \"v2.example.com\" denied the request: denied by 2");
  EXPECT_EQ(client_.calls().size(), 6u);
}

TEST_F(WebhookAdmissionTest, TimeoutsFailClosedOrOpenPerFailurePolicy) {
  AddValidating("slow.example.com", {{"timeoutSeconds", 1}});
  client_.Set("slow.example.com", TimeOut());
  api::Object pod = Pod("p");
  {
    auto plugin = Plugin();
    AdmissionAttributes a = Attrs(kPods, "CREATE", &pod);
    auto err = plugin.Validate(a);
    ASSERT_TRUE(err);
    EXPECT_EQ(err->code, 500);
    EXPECT_EQ(err->message,
              "Internal error occurred: failed calling webhook \"slow.example.com\": failed to "
              "call webhook: Post \"https://127.0.0.1:1/slow?timeout=1s\": context deadline "
              "exceeded");
  }
  set_.validating[0].fail_open = true;
  auto plugin = Plugin();
  AdmissionAttributes a = Attrs(kPods, "CREATE", &pod);
  EXPECT_FALSE(plugin.Validate(a));
}

TEST_F(WebhookAdmissionTest, MalformedAnswersAreCallFailures) {
  AddMutating("bad.example.com");
  client_.Set("bad.example.com", [](const json::object&) -> util::StatusOr<WebhookClient::Reply> {
    return WebhookClient::Reply{200, Review("not-the-uid", true)};
  });
  auto plugin = Plugin();
  api::Object pod = Pod("p");
  AdmissionAttributes a = Attrs(kPods, "CREATE", &pod);
  auto err = plugin.Admit(a);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, 500);
  EXPECT_NE(err->message.find("failed calling webhook \"bad.example.com\": received invalid "
                              "webhook response: expected response.uid="),
            std::string::npos)
      << err->message;
}

TEST_F(WebhookAdmissionTest, DenialIgnoresFailurePolicy) {
  AddValidating("deny.example.com", {{"failurePolicy", "Ignore"}});
  client_.Set("deny.example.com", Deny("still no"));
  auto plugin = Plugin();
  api::Object pod = Pod("p");
  AdmissionAttributes a = Attrs(kPods, "CREATE", &pod);
  EXPECT_TRUE(plugin.Validate(a));
}

TEST_F(WebhookAdmissionTest, MutatingPatchIsAppliedAndAsksForRevalidation) {
  AddMutating("label.example.com");
  client_.Set("label.example.com",
              Patch(R"([{"op":"add","path":"/metadata/labels","value":{"mutated":"yes"}}])"));
  auto plugin = Plugin();
  api::Object pod = Pod("p");
  AdmissionAttributes a = Attrs(kPods, "CREATE", &pod);
  EXPECT_FALSE(plugin.Admit(a));
  EXPECT_EQ(pod.label("mutated"), "yes");
  EXPECT_TRUE(a.needs_revalidation);
}

TEST_F(WebhookAdmissionTest, PatchThatDoesNotApplyIsAnInternalError) {
  AddMutating("broken.example.com", {{"failurePolicy", "Ignore"}});
  client_.Set("broken.example.com", Patch(R"([{"op":"remove","path":"/spec/nothing"}])"));
  auto plugin = Plugin();
  api::Object pod = Pod("p");
  AdmissionAttributes a = Attrs(kPods, "CREATE", &pod);
  auto err = plugin.Admit(a);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, 500);
  EXPECT_FALSE(a.needs_revalidation);
}

TEST_F(WebhookAdmissionTest, ReinvocationIfNeeded) {
  AddMutating("first.example.com", {{"reinvocationPolicy", "IfNeeded"}});
  AddMutating("second.example.com");
  client_.Set("first.example.com", Allow());
  client_.Set("second.example.com",
              Patch(R"([{"op":"add","path":"/metadata/labels","value":{"b":"1"}}])"));
  auto plugin = Plugin();
  api::Object pod = Pod("p");
  AdmissionAttributes a = Attrs(kPods, "CREATE", &pod);
  EXPECT_FALSE(plugin.Admit(a));
  EXPECT_EQ(client_.calls(), (std::vector<std::string>{"first.example.com", "second.example.com",
                                                       "first.example.com"}));
}

TEST_F(WebhookAdmissionTest, NamespaceAndObjectSelectors) {
  AddValidating(
      "prod-only.example.com",
      {{"namespaceSelector", json::object{{"matchLabels", json::object{{"env", "prod"}}}}}});
  AddValidating(
      "labelled-only.example.com",
      {{"objectSelector",
        json::object{{"matchExpressions",
                      json::array{json::object{{"key", "checked"}, {"operator", "Exists"}}}}}}});
  client_.Set("prod-only.example.com", Deny("prod"));
  client_.Set("labelled-only.example.com", Deny("labelled"));
  auto plugin = Plugin();

  api::Object plain = Pod("plain");
  AdmissionAttributes in_other = Attrs(kPods, "CREATE", &plain, "other");
  EXPECT_FALSE(plugin.Validate(in_other)) << "neither selector matches";
  EXPECT_TRUE(client_.calls().empty());

  AdmissionAttributes in_prod = Attrs(kPods, "CREATE", &plain, "team");
  auto err = plugin.Validate(in_prod);
  ASSERT_TRUE(err);
  EXPECT_NE(err->message.find("prod-only.example.com"), std::string::npos);

  api::Object labelled = Pod("labelled", {{"checked", "1"}});
  AdmissionAttributes labelled_other = Attrs(kPods, "CREATE", &labelled, "other");
  err = plugin.Validate(labelled_other);
  ASSERT_TRUE(err);
  EXPECT_NE(err->message.find("labelled-only.example.com"), std::string::npos);

  // An update whose old object carried the label still matches.
  api::Object old = labelled;
  AdmissionAttributes update = Attrs(kPods, "UPDATE", &plain, "other");
  update.old_object = &old;
  EXPECT_TRUE(plugin.Validate(update));

  // A namespace that does not exist is a 404 for a webhook with a namespaceSelector.
  AdmissionAttributes gone = Attrs(kPods, "CREATE", &plain, "gone");
  err = plugin.Validate(gone);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, 404);
}

TEST_F(WebhookAdmissionTest, NamespaceSelectorOfANamespaceUsesItsOwnLabels) {
  AddValidating("ns.example.com", {{"rules", json::array{Rule({"namespaces"})}},
                                   {"namespaceSelector",
                                    json::object{{"matchLabels", json::object{{"guard", "on"}}}}}});
  client_.Set("ns.example.com", Deny("guarded"));
  auto plugin = Plugin();
  api::Object ns;
  ns.SetGvk({"", "v1", "Namespace"});
  ns.set_name("fresh");
  AdmissionAttributes a = Attrs(kNamespaces, "CREATE", &ns, "");
  EXPECT_FALSE(plugin.Validate(a));
  ns.SetLabel("guard", "on");
  EXPECT_TRUE(plugin.Validate(a));
}

TEST_F(WebhookAdmissionTest, DryRunMeetsSideEffects) {
  Webhook& hook = AddValidating("effects.example.com");
  hook.side_effects = "Some";
  client_.Set("effects.example.com", Allow());
  auto plugin = Plugin();
  api::Object pod = Pod("p");
  AdmissionAttributes a = Attrs(kPods, "CREATE", &pod);
  EXPECT_FALSE(plugin.Validate(a)) << "not a dry run: called";
  a.dry_run = true;
  auto err = plugin.Validate(a);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->code, 400);
  EXPECT_EQ(err->message, "admission webhook \"effects.example.com\" does not support dry run");
  EXPECT_EQ(client_.calls().size(), 1u);
}

}  // namespace
}  // namespace converge::apiserver
