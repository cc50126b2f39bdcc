#include "controllers/namespace/namespace_controller.h"

#include <spdlog/spdlog.h>

#include "client/api_errors.h"
#include "client/rate_limiters.h"
#include "controllers/common/reconcile_metrics.h"
#include "util/time_format.h"

namespace converge::controllers::namespace_ {

namespace json = boost::json;

namespace {

const api::GroupVersionResource kNamespaces{"", "v1", "namespaces"};
const api::GroupVersionResource kPods{"", "v1", "pods"};

// Upstream's namespace queue: 5 ms·2ⁿ up to 60 s (a namespace waiting on content is re-checked
// at least once a minute even when every pass fails).
std::unique_ptr<client::RateLimiter<api::ObjectKey>> NamespaceRateLimiter() {
  return std::make_unique<client::ItemExponentialFailureRateLimiter<api::ObjectKey>>(
      client::ExponentialFailureOptions{.base_delay = std::chrono::milliseconds(5),
                                        .max_delay = std::chrono::seconds(60)});
}

// Resources that do not support an operation answer MethodNotSupported, or NotFound for
// resources discovery lists without top-level verbs.
bool Unsupported(const util::Status& s) {
  return client::IsMethodNotSupported(s) || client::IsNotFound(s);
}

}  // namespace

// ---- RestNamespaceClient ----

util::StatusOr<api::Object> RestNamespaceClient::GetNamespace(const std::string& name) {
  return client_->Get(kNamespaces, {"", name});
}

util::StatusOr<api::Object> RestNamespaceClient::UpdateNamespaceStatus(const api::Object& ns) {
  return client_->UpdateStatus(kNamespaces, ns);
}

util::StatusOr<api::Object> RestNamespaceClient::FinalizeNamespace(const api::Object& ns) {
  client::HttpRequest r;
  r.method = "PUT";
  r.path = client::ResourcePath(kNamespaces, "", ns.name(), "finalize");
  r.headers.emplace_back("content-type", "application/json");
  r.headers.emplace_back("accept", "application/json");
  r.body = ns.Serialize();
  CONVERGE_ASSIGN_OR_RETURN(client::HttpResponse resp, client_->Do(std::move(r)));
  return api::Object::Parse(resp.body);
}

util::StatusOr<discovery::DiscoveryResult> RestNamespaceClient::Discover() {
  return discovery::ServerPreferredResources(*client_);
}

util::Status RestNamespaceClient::DeleteCollection(const api::GroupVersionResource& gvr,
                                                   const std::string& ns, std::stop_token stop) {
  client::DeleteOptions o;
  o.propagation_policy = "Background";
  o.stop = std::move(stop);
  return client_->DeleteCollection(gvr, ns, {}, o);
}

util::Status RestNamespaceClient::Delete(const api::GroupVersionResource& gvr,
                                         const api::ObjectKey& key, std::stop_token stop) {
  client::DeleteOptions o;
  o.propagation_policy = "Background";
  o.stop = std::move(stop);
  return client_->Delete(gvr, key, o);
}

util::Status RestNamespaceClient::ListEach(const api::GroupVersionResource& gvr,
                                           const std::string& ns, std::stop_token stop,
                                           const std::function<void(const api::Object&)>& fn) {
  client::ListOptions o;
  o.limit = page_size_;
  o.stop = stop;
  do {
    if (stop.stop_requested()) return util::Status(util::Code::kCancelled, "stopping");
    CONVERGE_ASSIGN_OR_RETURN(client::ObjectList page, client_->List(gvr, ns, o));
    for (const api::Object& item : page.items) fn(item);
    o.continue_token = std::move(page.continue_token);
  } while (!o.continue_token.empty());
  return util::Status::Ok();
}

// ---- NamespaceController ----

NamespaceController::NamespaceController(NamespaceControllerOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &util::RealClock()),
      controller_(client::ControllerOptions{
          .name = options_.queue_name,
          .reconcile = InstrumentReconcile(
              "namespace",
              options_.metrics != nullptr ? options_.metrics : &util::DefaultRegistry(), clock_,
              [this](const api::ObjectKey& key, std::stop_token stop) {
                return Sync(key.name, std::move(stop));
              }),
          .workers = options_.workers,
          .rate_limiter = NamespaceRateLimiter(),
          .clock = clock_,
          .metrics = options_.metrics,
          .wait_for_sync = options_.namespaces != nullptr
                               ? std::vector<const client::SharedInformer*>{options_.namespaces}
                               : std::vector<const client::SharedInformer*>{},
      }) {
  if (options_.namespaces != nullptr) {
    auto h = std::make_shared<client::ResourceEventHandlerFuncs>();
    // Only namespaces being deleted concern us.
    h->add = [this](const api::ObjectPtr& obj, bool) {
      if (obj->being_deleted()) Enqueue(std::string(obj->name()));
    };
    h->update = [this](const api::ObjectPtr&, const api::ObjectPtr& obj) {
      if (obj->being_deleted()) Enqueue(std::string(obj->name()));
    };
    (void)options_.namespaces->AddEventHandler(h, {.inline_delivery = true});  // only enqueues
  }
}

void NamespaceController::Run(std::stop_token stop) {
  controller_.Run(stop);
}

util::StatusOr<api::Object> NamespaceController::RetryOnConflict(
    api::Object ns, const std::function<util::StatusOr<api::Object>(const api::Object&)>& fn) {
  const std::string uid(ns.uid());
  while (true) {
    auto r = fn(ns);
    if (r.ok() || !client::IsConflict(r.status())) return r;
    CONVERGE_ASSIGN_OR_RETURN(ns, options_.client->GetNamespace(std::string(ns.name())));
    if (ns.uid() != uid) return util::Aborted("namespace uid has changed across retries");
  }
}

client::ReconcileResult NamespaceController::Sync(const std::string& name, std::stop_token stop) {
  auto ns = options_.client->GetNamespace(name);
  if (!ns.ok()) {
    if (client::IsNotFound(ns.status())) return client::ReconcileResult::Done();
    return client::ReconcileResult::Error(ns.status());
  }
  if (DecideStep(*ns) == NamespaceStep::kIgnore) return client::ReconcileResult::Done();

  // Make sure the phase says Terminating.
  auto current = RetryOnConflict(*ns, [this](const api::Object& n) -> util::StatusOr<api::Object> {
    if (DecideStep(n) != NamespaceStep::kSetTerminating) return n;
    api::Object next = n;
    api::EnsureObject(next.mutable_doc(), "status")["phase"] = "Terminating";
    return options_.client->UpdateNamespaceStatus(next);
  });
  if (!current.ok()) {
    if (client::IsNotFound(current.status())) return client::ReconcileResult::Done();
    return client::ReconcileResult::Error(current.status());
  }
  NamespaceStep step = DecideStep(*current);
  if (step == NamespaceStep::kIgnore || step == NamespaceStep::kFinalized) {
    return client::ReconcileResult::Done();
  }

  ContentOutcome outcome = DeleteAllContent(*current, stop);
  if (!outcome.errors.empty()) {
    std::string msg;
    for (const std::string& e : outcome.errors) msg += (msg.empty() ? "" : "; ") + e;
    return client::ReconcileResult::Error(util::Unavailable(msg));
  }
  if (outcome.estimate_seconds > 0) {
    return client::ReconcileResult::RequeueAfter(
        std::chrono::seconds(outcome.estimate_seconds / 2 + 1));
  }

  // Nothing left: let the namespace go.
  auto finalized = RetryOnConflict(*current, [this](const api::Object& n) {
    return options_.client->FinalizeNamespace(FinalizeRequest(n, kKubernetesFinalizer));
  });
  if (!finalized.ok() && !client::IsNotFound(finalized.status())) {
    return client::ReconcileResult::Error(finalized.status());
  }
  spdlog::info("namespace controller: finalized namespace {}", name);
  return client::ReconcileResult::Done();
}

ContentOutcome NamespaceController::DeleteAllContent(const api::Object& ns, std::stop_token stop) {
  const std::string name(ns.name());
  const util::Clock::WallTime deleted_at =
      util::ParseRfc3339(ns.deletion_timestamp()).value_or(clock_->WallNow());
  ContentReport report;
  auto discovered = options_.client->Discover();
  std::vector<api::ResourceInfo> resources;
  if (!discovered.ok()) {
    report.discovery_error = discovered.status().message();
  } else {
    if (!discovered->failed_groups.empty()) {
      // upstream's ProcessDiscoverResourcesErr for ErrGroupDiscoveryFailed.
      report.discovery_error = "Discovery failed for some groups, " +
                               std::to_string(discovered->failed_groups.size()) +
                               " failing: " + discovered->FailureMessage();
    }
    resources = discovered->resources;
  }
  for (const api::ResourceInfo& r : resources) {
    if (!r.namespaced || !r.HasVerb("delete")) continue;
    if (stop.stop_requested()) break;
    report.resources.push_back(DeleteContentOf(r.gvr, name, deleted_at, stop));
  }
  if (stop.stop_requested()) {
    // What was cut short is no failure to report in the conditions: the next sync starts over.
    ContentOutcome stopped;
    stopped.errors.push_back("stopping");
    return stopped;
  }
  ContentOutcome outcome = Summarize(report);
  // Conditions are written whenever they change, failing or fine (a condition that was failing
  // must say when it stopped).
  api::Object next = ns;
  json::object& status = api::EnsureObject(next.mutable_doc(), "status");
  if (UpdateConditions(status, outcome.failing, util::FormatRfc3339(clock_->WallNow()))) {
    auto updated = options_.client->UpdateNamespaceStatus(next);
    if (!updated.ok()) {
      spdlog::info("namespace controller: updating the conditions of {}: {}", name,
                   updated.status().ToString());
    }
  }
  return outcome;
}

ResourceResult NamespaceController::DeleteContentOf(const api::GroupVersionResource& gvr,
                                                    const std::string& ns,
                                                    util::Clock::WallTime deleted_at,
                                                    std::stop_token stop) {
  ResourceResult failed;
  failed.gvr = gvr;
  int64_t estimate = 0;
  if (gvr.group.empty() && gvr.resource == "pods") {
    PodTerminationEstimate pods;
    util::Status listed =
        options_.client->ListEach(kPods, ns, stop, [&](const api::Object& pod) { pods.Add(pod); });
    if (!listed.ok()) {
      failed.error = listed.message();
      return failed;
    }
    estimate = pods.Seconds(deleted_at, clock_->WallNow());
  }
  failed.estimate_seconds = estimate;
  util::Status s = options_.client->DeleteCollection(gvr, ns, stop);
  if (!s.ok()) {
    if (!Unsupported(s)) {
      failed.error = s.message();
      return failed;
    }
    // No deletecollection: list and delete one by one (the keys first: deleting while paging
    // would move the pages).
    std::vector<api::ObjectKey> keys;
    util::Status listed = options_.client->ListEach(
        gvr, ns, stop, [&](const api::Object& item) { keys.push_back(item.key()); });
    if (!listed.ok()) {
      if (Unsupported(listed)) return failed;
      failed.error = listed.message();
      return failed;
    }
    for (const api::ObjectKey& key : keys) {
      util::Status d = options_.client->Delete(gvr, key, stop);
      if (!d.ok() && !Unsupported(d)) {
        failed.error = d.message();
        return failed;
      }
    }
  }
  RemainingContent remaining;
  util::Status listed = options_.client->ListEach(
      gvr, ns, stop, [&](const api::Object& item) { remaining.Add(item); });
  if (!listed.ok()) {
    if (Unsupported(listed)) return failed;
    failed.error = listed.message();
    return failed;
  }
  return SummarizeRemaining(gvr, ns, remaining, estimate);
}

util::StatusOr<std::unique_ptr<RunnableController>> InitNamespaceController(
    ControllerContext& ctx) {
  // The controller owns its client adapter.
  class Runnable final : public RunnableController {
   public:
    Runnable(std::unique_ptr<RestNamespaceClient> client, NamespaceControllerOptions o)
        : client_(std::move(client)), controller_([&] {
            o.client = client_.get();
            return o;
          }()) {}
    void Run(std::stop_token stop) override { controller_.Run(stop); }

   private:
    std::unique_ptr<RestNamespaceClient> client_;
    NamespaceController controller_;
  };
  auto rest = std::make_unique<RestNamespaceClient>(ctx.client);
  NamespaceControllerOptions o;
  o.namespaces = &ctx.informers->InformerFor(kNamespaces);
  o.clock = ctx.clock;
  o.metrics = ctx.metrics;
  o.workers = std::max(ctx.workers, 1) * 2;
  return std::unique_ptr<RunnableController>(std::make_unique<Runnable>(std::move(rest), o));
}

}  // namespace converge::controllers::namespace_
