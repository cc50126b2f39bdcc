#include "kubelet/log_proxy.h"

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "apiserver/errors.h"
#include "apiserver/handler_util.h"
#include "client/http_transport.h"
#include "kubelet/container_logs.h"
#include "kubelet/kubelet.h"
#include "util/clock.h"

namespace converge::kubelet {

namespace {

namespace json = boost::json;

apiserver::Response Error(const apiserver::ApiError& e) {
  return apiserver::ErrorResponse(e);
}

// Reads a kubelet's followed log on a thread of its own and hands the chunks to the API
// server's transport, which polls without blocking.
class ProxiedStream final : public apiserver::ResponseStream {
 public:
  explicit ProxiedStream(client::StreamedResponse upstream, std::stop_source stop)
      : upstream_(std::move(upstream)), stop_(std::move(stop)) {
    reader_ = std::jthread([this] { Read(); });
  }
  ~ProxiedStream() override { Close(); }

  PollResult Poll(std::vector<std::shared_ptr<const std::string>>* out,
                  std::function<void()> wake) override {
    std::lock_guard lock(mu_);
    if (!chunks_.empty()) {
      for (auto& c : chunks_) out->push_back(std::move(c));
      chunks_.clear();
      return PollResult::kData;
    }
    if (done_) return PollResult::kEnd;
    wake_ = std::move(wake);
    return PollResult::kPending;
  }

  void Close() override {
    stop_.request_stop();
    if (reader_.joinable() && reader_.get_id() != std::this_thread::get_id()) reader_.join();
  }

 private:
  void Read() {
    while (true) {
      std::vector<std::shared_ptr<const std::string>> got;
      auto more = upstream_.body->Read(&got);
      std::function<void()> wake;
      {
        std::lock_guard lock(mu_);
        for (auto& c : got) chunks_.push_back(std::move(c));
        if (!more.ok() || !*more) done_ = true;
        wake = std::move(wake_);
        wake_ = nullptr;
      }
      if (wake) wake();
      if (!more.ok() || !*more) return;
    }
  }

  client::StreamedResponse upstream_;
  std::stop_source stop_;
  std::mutex mu_;
  std::deque<std::shared_ptr<const std::string>> chunks_;  // guarded by mu_
  bool done_ = false;                                      // guarded by mu_
  std::function<void()> wake_;                             // guarded by mu_
  std::jthread reader_;
};

class LogProxy {
 public:
  LogProxy(apiserver::APIServer* server, KubeletLogProxyOptions options)
      : server_(server), options_(options) {}

  apiserver::Response Serve(const apiserver::Request& req, const api::Object& pod) {
    auto request = ResolveLogRequest(req, pod, util::RealClock().WallNow());
    if (!request.ok()) return Error(apiserver::BadRequest(request.status().message()));
    std::string node_name(api::FindString(pod.view(), {"spec", "nodeName"}));
    apiserver::ResourceStorage* nodes = server_->Storage({"", "v1", "nodes"});
    if (!nodes) return Error(apiserver::InternalError("no node storage"));
    auto cached = nodes->Get("", node_name, "");
    if (!cached.ok()) {
      return Error(apiserver::BadRequest("node " + node_name + " of pod " +
                                         std::string(pod.name()) + " not found"));
    }
    auto node = (*cached)->Parse();
    if (!node.ok()) return Error(apiserver::InternalError(node.status().message()));
    std::string host;
    for (const char* type : {"InternalIP", "Hostname"}) {
      if (!host.empty()) break;
      if (api::ArrayView addrs = api::FindArray(node->view(), {"status", "addresses"})) {
        for (const api::View a : *addrs) {
          if (a.is_object() && api::Object::GetString(a.get_object(), "type") == type) {
            host = std::string(api::Object::GetString(a.get_object(), "address"));
            break;
          }
        }
      }
    }
    int64_t port =
        api::FindInt(node->view(), {"status", "daemonEndpoints", "kubeletEndpoint", "Port"});
    if (host.empty() || port <= 0) {
      return Error(apiserver::BadRequest("node " + node_name + " has no kubelet endpoint"));
    }
    auto transport = TransportFor(host, port);
    if (!transport.ok()) return Error(apiserver::InternalError(transport.status().message()));

    client::HttpRequest hr;
    hr.method = "GET";
    hr.path = "/containerLogs/" + std::string(pod.namespace_()) + "/" + std::string(pod.name()) +
              "/" + request->container;
    hr.query = LogRequestQuery(*request);
    if (!request->follow) {
      hr.timeout = options_.request_timeout;
      auto resp = (*transport)->Do(hr);
      if (!resp.ok()) {
        return Error(apiserver::ServiceUnavailable("cannot reach the kubelet of node " + node_name +
                                                   ": " + resp.status().message()));
      }
      apiserver::Response r;
      r.status = resp->status;
      std::string_view ct = resp->Header("content-type");
      r.content_type = ct.empty() ? "text/plain" : std::string(ct);
      r.body = std::move(resp->body);
      return r;
    }
    std::stop_source stop;
    hr.stop = stop.get_token();
    auto resp = (*transport)->Stream(hr);
    if (!resp.ok()) {
      return Error(apiserver::ServiceUnavailable("cannot reach the kubelet of node " + node_name +
                                                 ": " + resp.status().message()));
    }
    apiserver::Response r;
    r.status = resp->status;
    std::string_view ct = resp->Header("content-type");
    r.content_type = ct.empty() ? "text/plain" : std::string(ct);
    if (resp->status < 200 || resp->status > 299) {
      auto body = client::ReadAll(*resp->body);
      r.body = body.ok() ? *body : "";
      return r;
    }
    r.stream = std::make_shared<ProxiedStream>(std::move(*resp), std::move(stop));
    return r;
  }

 private:
  util::StatusOr<std::shared_ptr<client::Transport>> TransportFor(const std::string& host,
                                                                  int64_t port) {
    std::string url = "http://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) +
                      ":" + std::to_string(port);
    std::lock_guard lock(mu_);
    auto it = transports_.find(url);
    if (it != transports_.end()) return it->second;
    client::HttpTransportOptions o;
    o.config.server = url;
    o.config.user_agent = "converge-apiserver/0.1";
    o.connect_timeout = options_.connect_timeout;
    o.max_idle_connections = 4;
    auto t = client::HttpTransport::New(o);
    if (!t.ok()) return t.status();
    std::shared_ptr<client::Transport> shared = std::move(*t);
    transports_[url] = shared;
    return shared;
  }

  apiserver::APIServer* const server_;
  const KubeletLogProxyOptions options_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<client::Transport>> transports_;  // guarded by mu_
};

}  // namespace

apiserver::APIServer::LogProvider NewKubeletLogProxy(apiserver::APIServer* server,
                                                     KubeletLogProxyOptions options) {
  auto proxy = std::make_shared<LogProxy>(server, options);
  return [proxy](const apiserver::Request& req, const apiserver::CachedObject& cached) {
    auto pod = cached.Parse();
    if (!pod.ok()) return Error(apiserver::InternalError(pod.status().message()));
    return proxy->Serve(req, *pod);
  };
}

apiserver::APIServer::LogProvider LocalOrProxyLogProvider(Kubelet* local,
                                                          apiserver::APIServer* server,
                                                          KubeletLogProxyOptions options) {
  auto proxy = std::make_shared<LogProxy>(server, options);
  return [local, proxy](const apiserver::Request& req, const apiserver::CachedObject& cached) {
    auto pod = cached.Parse();
    if (!pod.ok()) return Error(apiserver::InternalError(pod.status().message()));
    if (local->OwnsNode(api::FindString(pod->view(), {"spec", "nodeName"}))) {
      return local->ServeLogs(req, *pod);
    }
    return proxy->Serve(req, *pod);
  };
}

}  // namespace converge::kubelet
