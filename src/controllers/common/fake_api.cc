#include "controllers/common/fake_api.h"

namespace converge::controllers::testing {

namespace json = boost::json;

namespace {

client::HttpResponse StatusResponse(int code, std::string_view reason, std::string_view message) {
  json::object s{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                 {"reason", reason}, {"code", code},       {"message", message}};
  return client::FakeTransport::Json(code, json::serialize(s));
}

// "/apis/apps/v1/namespaces/ns/replicasets/name/status" → collection path, name, subresource.
struct ParsedPath {
  std::string collection;  // up to the resource
  std::string name;
  std::string subresource;
};

ParsedPath Parse(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 1;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  // /api/v1/namespaces/ns/pods[/name[/sub]] or /apis/g/v/namespaces/ns/res[/name[/sub]]
  size_t res = parts[0] == "api" ? 4 : 5;
  ParsedPath p;
  for (size_t i = 0; i <= res && i < parts.size(); ++i) p.collection += "/" + parts[i];
  if (parts.size() > res + 1) p.name = parts[res + 1];
  if (parts.size() > res + 2) p.subresource = parts[res + 2];
  return p;
}

}  // namespace

FakeApi::FakeApi() {
  transport_ = std::make_shared<client::FakeTransport>(
      [this](const client::HttpRequest& r) { return Handle(r); });
  client_ =
      std::make_unique<client::RestClient>(client::RestClientOptions{.transport = transport_});
}

api::Object FakeApi::Put(const api::GroupVersionResource& gvr, api::Object obj) {
  std::lock_guard lock(mu_);
  obj.set_resource_version(std::to_string(++rv_));
  objects_[client::ResourcePath(gvr, obj.namespace_(), obj.name())] = obj.doc();
  return obj;
}

std::optional<api::Object> FakeApi::Get(const api::GroupVersionResource& gvr,
                                        const api::ObjectKey& key) const {
  std::lock_guard lock(mu_);
  auto it = objects_.find(client::ResourcePath(gvr, key.ns, key.name));
  if (it == objects_.end()) return std::nullopt;
  return api::Object(it->second);
}

std::vector<api::Object> FakeApi::List(const api::GroupVersionResource& gvr) const {
  std::lock_guard lock(mu_);
  std::vector<api::Object> out;
  for (const auto& [path, doc] : objects_) {
    api::Object o(doc);
    if (client::ResourcePath(gvr, o.namespace_(), o.name()) == path) out.push_back(o);
  }
  return out;
}

void FakeApi::FailNext(std::string method, std::string path_suffix, int code, std::string reason,
                       std::string message) {
  std::lock_guard lock(mu_);
  forced_.push_back(
      {std::move(method), std::move(path_suffix), code, std::move(reason), std::move(message)});
}

std::vector<FakeApi::Request> FakeApi::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

std::vector<FakeApi::Request> FakeApi::RequestsOf(std::string_view method,
                                                  std::string_view path_part) const {
  std::lock_guard lock(mu_);
  std::vector<Request> out;
  for (const Request& r : requests_) {
    if (r.method == method && r.path.find(path_part) != std::string::npos) out.push_back(r);
  }
  return out;
}

void FakeApi::ClearRequests() {
  std::lock_guard lock(mu_);
  requests_.clear();
}

util::StatusOr<client::HttpResponse> FakeApi::Handle(const client::HttpRequest& r) {
  std::lock_guard lock(mu_);
  requests_.push_back({r.method, r.path, r.body});
  for (auto it = forced_.begin(); it != forced_.end(); ++it) {
    if (it->method == r.method && r.path.ends_with(it->suffix)) {
      client::HttpResponse resp = StatusResponse(it->code, it->reason, it->message);
      forced_.erase(it);
      return resp;
    }
  }
  ParsedPath p = Parse(r.path);
  std::string object_path = p.collection + "/" + p.name;
  if (r.method == "GET") {
    auto it = objects_.find(object_path);
    if (it == objects_.end()) return StatusResponse(404, "NotFound", p.name + " not found");
    return client::FakeTransport::Json(200, json::serialize(it->second));
  }
  if (r.method == "DELETE") {
    if (objects_.erase(object_path) == 0) {
      return StatusResponse(404, "NotFound", p.name + " not found");
    }
    return client::FakeTransport::Json(200, R"({"kind":"Status","status":"Success"})");
  }
  if (r.method == "POST") {
    api::Object obj(json::parse(r.body).as_object());
    if (obj.name().empty())
      obj.set_name(std::string(obj.generate_name()) + std::to_string(names_++));
    std::string path = p.collection + "/" + std::string(obj.name());
    if (objects_.contains(path)) {
      return StatusResponse(409, "AlreadyExists", std::string(obj.name()) + " already exists");
    }
    obj.set_uid("uid-" + std::string(obj.name()));
    obj.set_resource_version(std::to_string(++rv_));
    if (obj.generation() == 0) obj.set_generation(1);
    objects_[path] = obj.doc();
    return client::FakeTransport::Json(201, obj.Serialize());
  }
  if (r.method == "PUT" || r.method == "PATCH") {
    auto it = objects_.find(object_path);
    if (it == objects_.end()) return StatusResponse(404, "NotFound", p.name + " not found");
    api::Object current(it->second);
    json::object body = json::parse(r.body).as_object();
    api::Object next = current;
    if (r.method == "PATCH") {
      // Merge the metadata maps the controllers patch (labels, annotations, ownerReferences).
      if (const json::object* m = api::FindObject(body, {"metadata"})) {
        for (const auto& kv : *m) next.mutable_metadata()[kv.key()] = kv.value();
      }
    } else {
      api::Object sent(body);
      if (!sent.resource_version().empty() &&
          sent.resource_version() != current.resource_version()) {
        return StatusResponse(409, "Conflict",
                              "Operation cannot be fulfilled on " + p.name +
                                  ": the object has been modified; please apply your changes to "
                                  "the latest version and try again");
      }
      if (p.subresource == "status") {
        if (const json::value* st = body.if_contains("status")) next.mutable_doc()["status"] = *st;
        // Deployments keep annotations written through /status, as upstream does.
        if (const json::object* a = api::FindObject(sent.doc(), {"metadata", "annotations"}))
          next.mutable_metadata()["annotations"] = *a;
      } else {
        json::value old_spec = current.doc().contains("spec") ? current.doc().at("spec") : nullptr;
        next = sent;
        if (const json::value* st = current.doc().if_contains("status")) {
          next.mutable_doc()["status"] = *st;
        }
        json::value new_spec = next.doc().contains("spec") ? next.doc().at("spec") : nullptr;
        next.set_generation(old_spec == new_spec ? current.generation() : current.generation() + 1);
        next.set_uid(current.uid());
      }
    }
    next.set_resource_version(std::to_string(++rv_));
    it->second = next.doc();
    return client::FakeTransport::Json(200, next.Serialize());
  }
  return StatusResponse(405, "MethodNotAllowed", r.method);
}

}  // namespace converge::controllers::testing
