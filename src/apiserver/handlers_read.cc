// get, list and watch.
#include <charconv>
#include <random>

#include "apiserver/handler_util.h"
#include "apiserver/metrics.h"
#include "apiserver/server.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

// A watch response: the CacheWatcher's items encoded as watch frames. JSON frames are the
// cache's shared bytes; Table frames (kubectl get -w) are built per watcher.
class WatchResponseStream final : public ResponseStream, public WatchEventSource {
 public:
  WatchResponseStream(std::shared_ptr<CacheWatcher> watcher, const api::ResourceInfo& info,
                      std::optional<TableOptions> table, util::Gauge* open,
                      bool without_managed_fields)
      : watcher_(std::move(watcher)),
        kind_(info.kind),
        api_version_(info.gvr.Gv().ApiVersion()),
        info_(info),
        convert_(info.crd != nullptr),
        printer_(table ? PrinterForResource(info) : nullptr),
        table_(std::move(table)),
        open_(open),
        without_managed_fields_(without_managed_fields) {
    open_->Inc();
  }
  ~WatchResponseStream() override { Close(); }

  // An event that goes out as the cache holds it: no Table, no version conversion.
  bool AsStored(const WatchItem& item) const {
    return item.event && !table_ &&
           (!convert_ || !NeedsVersionConversion(info_, *item.event->object()->json()));
  }

  PollResult Poll(std::vector<std::shared_ptr<const std::string>>* out,
                  std::function<void()> wake) override {
    std::vector<WatchItem> items;
    auto r = watcher_->Poll(&items, std::move(wake));
    if (r == CacheWatcher::PollResult::kEnd) return PollResult::kEnd;
    if (r == CacheWatcher::PollResult::kPending) return PollResult::kPending;
    for (const WatchItem& item : items) {
      if (AsStored(item)) {
        item.event->AppendFrame(item.as, out);  // the cache's bytes, not a copy
      } else {
        out->push_back(Encode(item));
      }
    }
    return PollResult::kData;
  }

  PollResult PollEvents(std::vector<WatchEventSource::Event>* out,
                        std::function<void()> wake) override {
    std::vector<WatchItem> items;
    auto r = watcher_->Poll(&items, std::move(wake));
    if (r == CacheWatcher::PollResult::kEnd) return PollResult::kEnd;
    if (r == CacheWatcher::PollResult::kPending) return PollResult::kPending;
    for (const WatchItem& item : items) {
      // Plain JSON objects as stored are shared; everything else goes as bytes.
      if (AsStored(item)) {
        const CachedObject& obj = *item.event->object();
        auto decoded = without_managed_fields_ ? obj.DecodedWithoutManagedFields() : obj.Decoded();
        if (decoded.ok()) {
          out->push_back({WatchEventTypeName(item.as), std::move(*decoded), nullptr});
          continue;
        }
      }
      out->push_back({{}, nullptr, Encode(item)});
    }
    return PollResult::kData;
  }

  void Close() override {
    if (closed_) return;
    closed_ = true;
    watcher_->Stop();
    open_->Dec();
  }

 private:
  std::shared_ptr<const std::string> Encode(const WatchItem& item) {
    if (!item.event) {
      json::object meta;
      meta["resourceVersion"] = std::to_string(item.bookmark_revision);
      if (item.initial_events_end) {
        json::object ann;
        ann["k8s.io/initial-events-end"] = "true";
        meta["annotations"] = std::move(ann);
      }
      json::object obj;
      obj["kind"] = kind_;
      obj["apiVersion"] = api_version_;
      obj["metadata"] = std::move(meta);
      json::object frame;
      frame["type"] = "BOOKMARK";
      frame["object"] = std::move(obj);
      return std::make_shared<const std::string>(json::serialize(frame) + "\n");
    }
    if (!table_) {
      // Served in another version than stored (plain JSON frames are AppendFrame's): the frame
      // is this watcher's own.
      auto parsed = item.event->object()->Parse();
      if (!parsed.ok()) {
        std::vector<std::shared_ptr<const std::string>> parts;
        item.event->AppendFrame(item.as, &parts);
        std::string frame;
        for (const auto& p : parts) frame += *p;
        return std::make_shared<const std::string>(std::move(frame));
      }
      parsed->SetGvk({info_.gvr.group, info_.gvr.version, kind_});
      json::object frame;
      frame["type"] = std::string(WatchEventTypeName(item.as));
      frame["object"] = std::move(parsed->mutable_doc());
      return std::make_shared<const std::string>(json::serialize(frame) + "\n");
    }
    auto parsed = item.event->object()->Parse();
    json::object frame;
    frame["type"] = std::string(WatchEventTypeName(item.as));
    if (parsed.ok()) {
      if (convert_) parsed->SetGvk({info_.gvr.group, info_.gvr.version, kind_});
      TableOptions opts = *table_;
      opts.include_columns = !sent_columns_;
      opts.resource_version = std::to_string(item.event->revision());
      opts.now = std::chrono::system_clock::now();
      sent_columns_ = true;
      frame["object"] = BuildTable(*printer_, {&*parsed}, opts);
    }
    return std::make_shared<const std::string>(json::serialize(frame) + "\n");
  }

  std::shared_ptr<CacheWatcher> watcher_;
  const std::string kind_;
  const std::string api_version_;
  // A copy: the registry may drop its own while the watch goes on (custom resources).
  const api::ResourceInfo info_;
  const bool convert_;  // a custom resource: objects may need their apiVersion rewritten
  std::shared_ptr<const TablePrinter> printer_;
  const std::optional<TableOptions> table_;
  util::Gauge* open_;
  const bool without_managed_fields_;  // PollEvents' objects lack metadata.managedFields
  bool sent_columns_ = false;
  bool closed_ = false;
};

// A watch that fails after it started: one ERROR event carrying a Status, then the end.
class ErrorEventStream final : public ResponseStream {
 public:
  explicit ErrorEventStream(const ApiError& e) {
    json::object frame;
    frame["type"] = "ERROR";
    frame["object"] = e.ToStatus();
    frame_ = std::make_shared<const std::string>(json::serialize(frame) + "\n");
  }
  PollResult Poll(std::vector<std::shared_ptr<const std::string>>* out,
                  std::function<void()>) override {
    if (!frame_) return PollResult::kEnd;
    out->push_back(std::move(frame_));
    return PollResult::kData;
  }
  void Close() override {}

 private:
  std::shared_ptr<const std::string> frame_;
};

Response StreamResponse(std::shared_ptr<ResponseStream> stream, std::chrono::milliseconds timeout) {
  Response r;
  r.status = 200;
  r.content_type = "application/json";
  r.stream = std::move(stream);
  r.stream_timeout = timeout;
  return r;
}

}  // namespace

Response APIServer::HandleGet(RequestContext& ctx) {
  if (ctx.ri.subresource == "scale") return HandleScale(ctx);
  if (ctx.ri.subresource == "log") return HandleLog(ctx);
  auto obj = ctx.storage.Get(ctx.ns, ctx.ri.name, std::string(ctx.req.Query("resourceVersion")));
  if (!obj.ok()) return ErrorResponse(obj.error());
  return ObjectResponse(200, ctx.req, ctx.info, **obj);
}

Response APIServer::HandleList(RequestContext& ctx) {
  auto filter = QueryFilter(ctx.req, ctx.info, ctx.ns);
  if (!filter.ok()) return ErrorResponse(filter.error());
  auto limit = QueryInt(ctx.req, "limit");
  if (!limit.ok()) return ErrorResponse(limit.error());
  ListOptions opts;
  opts.filter = std::move(*filter);
  opts.resource_version = ctx.req.Query("resourceVersion");
  opts.resource_version_match = ctx.req.Query("resourceVersionMatch");
  opts.limit = limit->value_or(0);
  opts.continue_token = ctx.req.Query("continue");
  if (opts.limit < 0) return ErrorResponse(BadRequest("limit must not be negative"));
  if (ctx.req.HasQuery("sendInitialEvents")) {
    auto send_initial = QueryBool(ctx.req, "sendInitialEvents", false);
    if (!send_initial.ok()) return ErrorResponse(send_initial.error());
    if (*send_initial) {
      return ErrorResponse(Invalid(
          {"meta.k8s.io", "v1", "ListOptions"}, "",
          {FieldForbidden("sendInitialEvents", "sendInitialEvents is forbidden for list")}));
    }
  }
  auto list = ctx.storage.List(opts);
  if (!list.ok()) return ErrorResponse(list.error());
  return ListResponse(ctx.req, ctx.info, *list);
}

Response APIServer::HandleWatch(RequestContext& ctx) {
  auto filter = QueryFilter(ctx.req, ctx.info, ctx.ns);
  if (!filter.ok()) return ErrorResponse(filter.error());
  if (!ctx.ri.name.empty()) filter->name = ctx.ri.name;
  auto format = NegotiateOutput(ctx.req);
  if (!format.ok()) return ErrorResponse(format.error());
  auto bookmarks = QueryBool(ctx.req, "allowWatchBookmarks", false);
  if (!bookmarks.ok()) return ErrorResponse(bookmarks.error());
  auto send_initial = QueryBool(ctx.req, "sendInitialEvents", false);
  if (!send_initial.ok()) return ErrorResponse(send_initial.error());
  auto timeout = QueryInt(ctx.req, "timeoutSeconds");
  if (!timeout.ok()) return ErrorResponse(timeout.error());

  std::string rv_text(ctx.req.Query("resourceVersion"));
  std::string match(ctx.req.Query("resourceVersionMatch"));
  WatchCache::WatchOptions wo;
  wo.bookmarks = *bookmarks;
  bool present_initial = ctx.req.HasQuery("sendInitialEvents");
  if (present_initial) {
    if (match != "NotOlderThan") {
      return ErrorResponse(Invalid({"meta.k8s.io", "v1", "ListOptions"}, "",
                                   {FieldForbidden("resourceVersionMatch",
                                                   "sendInitialEvents requires setting "
                                                   "resourceVersionMatch to NotOlderThan")}));
    }
    if (*send_initial && !*bookmarks) {
      return ErrorResponse(Invalid({"meta.k8s.io", "v1", "ListOptions"}, "",
                                   {FieldForbidden("allowWatchBookmarks",
                                                   "sendInitialEvents requires "
                                                   "allowWatchBookmarks=true")}));
    }
  } else if (!match.empty()) {
    return ErrorResponse(Invalid({"meta.k8s.io", "v1", "ListOptions"}, "",
                                 {FieldForbidden("resourceVersionMatch",
                                                 "resourceVersionMatch is forbidden for watch "
                                                 "unless sendInitialEvents is provided")}));
  }
  store::Revision rv = 0;
  if (!rv_text.empty()) {
    auto [p, ec] = std::from_chars(rv_text.data(), rv_text.data() + rv_text.size(), rv);
    if (ec != std::errc() || p != rv_text.data() + rv_text.size() || rv < 0) {
      return ErrorResponse(BadRequest("invalid resource version \"" + rv_text + "\""));
    }
  }
  if (present_initial && *send_initial) {
    // Initial state, then the end-of-initial-events bookmark, then changes.
    if (rv > 0 && !cacher_->WaitForRevision(rv, options_.storage.too_large_rv_wait)) {
      return ErrorResponse(Timeout("Too large resource version: " + rv_text, 1));
    }
    if (rv == 0 && rv_text.empty()) cacher_->WaitFresh(options_.storage.too_large_rv_wait);
    wo.initial_events_end_bookmark = true;
  } else if (rv_text.empty() || rv == 0) {
    // Unset or "0": synthetic ADDED events for the current state first.
    if (rv_text.empty()) cacher_->WaitFresh(options_.storage.too_large_rv_wait);
  } else {
    if (!cacher_->WaitForRevision(rv, options_.storage.too_large_rv_wait)) {
      return ErrorResponse(Timeout("Too large resource version: " + rv_text +
                                       ", current: " + std::to_string(cacher_->applied_revision()),
                                   1));
    }
    wo.from_revision = rv;
  }
  // Upstream spreads default timeouts over [min, 2*min) so that watches do not all reconnect at
  // once after a restart.
  std::chrono::milliseconds limit;
  if (timeout->has_value() && **timeout > 0) {
    limit = std::chrono::seconds(**timeout);
  } else {
    thread_local std::mt19937 rng{std::random_device{}()};
    auto base = std::chrono::duration_cast<std::chrono::milliseconds>(options_.max_watch_timeout);
    limit = base +
            std::chrono::milliseconds(std::uniform_int_distribution<int64_t>(0, base.count())(rng));
  }
  if (!ctx.storage.cache()->keeps_objects() && !wo.from_revision) {
    // The cache keeps no objects (Events): the current state is read from the store, and the
    // cache's history follows from that revision on.
    auto state = ctx.storage.ListCurrentFromStore(*filter);
    if (!state.ok()) return ErrorResponse(state.error());
    if (!cacher_->WaitForRevision(state->revision, options_.storage.too_large_rv_wait)) {
      return ErrorResponse(
          Timeout("Too large resource version: " + std::to_string(state->revision) +
                      ", current: " + std::to_string(cacher_->applied_revision()),
                  1));
    }
    wo.from_revision = state->revision;
    wo.initial_objects = std::move(state->items);
  }
  wo.decodes_without_managed_fields = ctx.req.watch_without_managed_fields;
  auto watcher =
      ctx.storage.cache()->Watch(std::move(*filter), wo, options_.cacher.cache.watcher_buffer);
  if (!watcher.ok()) {
    // Too old: a 200 with one ERROR event carrying 410 Expired; clients relist.
    return StreamResponse(std::make_shared<ErrorEventStream>(Expired(watcher.status().message())),
                          limit);
  }
  std::optional<TableOptions> table;
  if (format->table) {
    auto include = QueryIncludeObject(ctx.req);
    if (!include.ok()) return ErrorResponse(include.error());
    table.emplace();
    table->include_object = *include;
  }
  util::Gauge* open = &ApiMetrics::Get().longrunning.WithLabelValues(
      {"WATCH", ctx.info.gvr.group, ctx.info.gvr.version, ctx.info.gvr.resource});
  return StreamResponse(
      std::make_shared<WatchResponseStream>(std::move(*watcher), ctx.info, std::move(table), open,
                                            ctx.req.watch_without_managed_fields),
      limit);
}

}  // namespace converge::apiserver
