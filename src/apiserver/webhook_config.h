// Dynamic admission webhooks, the data side: MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration objects compiled into Webhooks, and the pure decision whether a
// webhook intercepts a request (upstream's
// k8s.io/apiserver/pkg/admission/plugin/webhook/predicates: rules, namespaceSelector,
// objectSelector).
//
// Rule matching as upstream (rules.Matcher):
//   - operations: "*" or the request's operation (CREATE, UPDATE, DELETE, CONNECT);
//   - apiGroups, apiVersions: "*" or equal;
//   - resources: "res" matches the resource without a subresource, "res/sub" that subresource,
//     "*" every resource without a subresource, "*/*" everything, "res/*" and "*/sub" likewise;
//   - scope: "*" (default), "Cluster" (cluster-scoped objects and namespaces themselves) or
//     "Namespaced" (namespaced objects).
// matchPolicy is simplified: every resource is served in one version here, so "Equivalent" and
// "Exact" decide the same.
//
// Requests for the webhook configurations themselves are never sent to webhooks (upstream's
// IsExemptAdmissionConfigurationResource), so a broken webhook cannot lock its own fix out.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "api/labels.h"
#include "apiserver/admission.h"

namespace converge::apiserver {

struct WebhookRule {
  std::vector<std::string> operations;
  std::vector<std::string> api_groups;
  std::vector<std::string> api_versions;
  std::vector<std::string> resources;
  std::string scope = "*";
};

struct Webhook {
  std::string configuration;  // metadata.name of the configuration that holds it
  std::string name;
  bool mutating = false;
  std::vector<WebhookRule> rules;
  bool fail_open = false;  // failurePolicy: Ignore
  api::LabelSelector namespace_selector;
  api::LabelSelector object_selector;
  std::chrono::seconds timeout{10};
  std::string side_effects;  // None, NoneOnDryRun (v1); Some, Unknown (older versions)
  bool reinvoke_if_needed = false;
  // clientConfig.url, or for a service reference "https://<name>.<namespace>.svc:<port><path>"
  // (reachable only when that name resolves).
  std::string url;
  std::string ca_bundle_pem;  // clientConfig.caBundle decoded; empty = system trust store
};

// Both kinds of configuration, in upstream's order: configurations sorted by name, webhooks in
// the order their configuration lists them. Immutable once built.
struct WebhookSet {
  std::vector<Webhook> mutating;
  std::vector<Webhook> validating;
  bool empty() const { return mutating.empty() && validating.empty(); }
};

// The webhooks of one configuration document (stored objects are defaulted and validated by
// strategy_admissionregistration.cc; anything malformed that slips through is skipped).
std::vector<Webhook> WebhooksFromConfiguration(const boost::json::object& doc, bool mutating);

// Whether `hook`'s rules select the request (operation, group, version, resource, subresource,
// scope). Selectors are checked separately (they need the namespace's labels).
bool RulesMatch(const Webhook& hook, const AdmissionAttributes& attrs);

// Whether the request concerns the webhook configurations themselves (never intercepted).
bool IsExemptFromWebhooks(const AdmissionAttributes& attrs);

// objectSelector: matches when the selector is empty or selects the new or the old object.
bool ObjectSelectorMatches(const Webhook& hook, const AdmissionAttributes& attrs);

// namespaceSelector, given the labels of the request's namespace (for a Namespace object itself,
// the object's own labels; see NamespaceForSelector). Cluster-scoped requests other than
// namespaces always match.
bool NamespaceSelectorMatches(const Webhook& hook, const boost::json::object* namespace_labels);

// Which namespace's labels the namespaceSelector is evaluated against: "" when the request is
// cluster-scoped (not a namespace) and the selector does not apply. `*own_labels` is set when the
// request is about a Namespace object, whose own labels count (old object's on DELETE).
std::string NamespaceForSelector(const AdmissionAttributes& attrs,
                                 const boost::json::object** own_labels);

}  // namespace converge::apiserver
