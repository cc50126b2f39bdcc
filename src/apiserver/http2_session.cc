#include "apiserver/http2_session.h"

#include <nghttp2/nghttp2.h>
#include <spdlog/spdlog.h>

#include <array>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apiserver/errors.h"
#include "apiserver/http_request.h"

namespace converge::apiserver {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::use_awaitable;

namespace {

// Bytes gathered from nghttp2 before one socket write.
constexpr size_t kWriteBatch = 64 * 1024;

std::string LowerHeaderName(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

nghttp2_nv Header(const std::string& name, const std::string& value) {
  return nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                    reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(),
                    value.size(), NGHTTP2_NV_FLAG_NONE};
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(TlsStream stream, Request base, Http2SessionOptions options)
      : stream_(std::move(stream)),
        base_(std::move(base)),
        options_(std::move(options)),
        wake_(stream_.get_executor()) {}

  ~Session() {
    if (session_) nghttp2_session_del(session_);
  }

  asio::awaitable<void> Run();

 private:
  // One stream: the request as it arrives, then the response as it leaves.
  struct Stream {
    explicit Stream(Request base) : req(std::move(base)) {}
    Request req;
    bool dispatched = false;
    bool too_large = false;
    bool responding = false;
    Response resp;
    size_t body_offset = 0;
    // Streamed responses: chunks polled and not yet handed to nghttp2.
    std::deque<std::shared_ptr<const std::string>> pending;
    size_t pending_offset = 0;
    bool ended = false;     // the ResponseStream ended (or its timeout passed)
    bool deferred = false;  // nghttp2 waits for resume_data
    std::unique_ptr<asio::steady_timer> deadline;
  };

  bool Init();
  asio::awaitable<void> Reader();
  void Signal() { wake_.cancel(); }
  void Dispatch(int32_t id, Stream& s);
  void Respond(int32_t id, Response resp);
  void Resume(int32_t id);
  void Release(Stream& s);
  void CloseAll();
  Stream* Find(int32_t id) {
    auto it = streams_.find(id);
    return it == streams_.end() ? nullptr : it->second.get();
  }

  // nghttp2 callbacks (user_data is the Session).
  static int OnBeginHeaders(nghttp2_session*, const nghttp2_frame* frame, void* user);
  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                      size_t namelen, const uint8_t* value, size_t valuelen, uint8_t flags,
                      void* user);
  static int OnDataChunk(nghttp2_session*, uint8_t flags, int32_t id, const uint8_t* data,
                         size_t len, void* user);
  static int OnFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* user);
  static int OnStreamClose(nghttp2_session*, int32_t id, uint32_t error_code, void* user);
  static ssize_t ReadBody(nghttp2_session*, int32_t id, uint8_t* buf, size_t length,
                          uint32_t* flags, nghttp2_data_source* source, void* user);

  TlsStream stream_;
  const Request base_;
  const Http2SessionOptions options_;
  nghttp2_session* session_ = nullptr;
  // Cancelled whenever nghttp2 may have something to send; the writer loop waits on it.
  asio::steady_timer wake_;
  std::map<int32_t, std::unique_ptr<Stream>> streams_;
  bool closed_ = false;  // the socket failed or the peer went away
};

bool Session::Init() {
  nghttp2_session_callbacks* cb;
  if (nghttp2_session_callbacks_new(&cb) != 0) return false;
  nghttp2_session_callbacks_set_on_begin_headers_callback(cb, &Session::OnBeginHeaders);
  nghttp2_session_callbacks_set_on_header_callback(cb, &Session::OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, &Session::OnDataChunk);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, &Session::OnFrameRecv);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, &Session::OnStreamClose);
  int rv = nghttp2_session_server_new(&session_, cb, this);
  nghttp2_session_callbacks_del(cb);
  if (rv != 0) return false;
  nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, options_.max_concurrent_streams},
  };
  return nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, 1) == 0;
}

int Session::OnBeginHeaders(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  auto* self = static_cast<Session*>(user);
  if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  self->streams_[frame->hd.stream_id] = std::make_unique<Stream>(self->base_);
  return 0;
}

int Session::OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                      size_t namelen, const uint8_t* value, size_t valuelen, uint8_t, void* user) {
  auto* self = static_cast<Session*>(user);
  if (frame->hd.type != NGHTTP2_HEADERS) return 0;
  Stream* s = self->Find(frame->hd.stream_id);
  if (!s || s->dispatched) return 0;  // trailers are ignored
  std::string_view n(reinterpret_cast<const char*>(name), namelen);
  std::string_view v(reinterpret_cast<const char*>(value), valuelen);
  if (n == ":method") {
    s->req.method = std::string(v);
  } else if (n == ":path") {
    SetRequestTarget(v, &s->req);
  } else if (n == ":authority") {
    s->req.headers.emplace_back("host", std::string(v));
  } else if (!n.starts_with(":")) {
    // nghttp2 rejects upper-case names in HTTP/2, so names arrive lower-cased.
    s->req.headers.emplace_back(std::string(n), std::string(v));
  }
  return 0;
}

int Session::OnDataChunk(nghttp2_session*, uint8_t, int32_t id, const uint8_t* data, size_t len,
                         void* user) {
  auto* self = static_cast<Session*>(user);
  Stream* s = self->Find(id);
  if (!s || s->too_large || s->dispatched) return 0;
  if (s->req.body.size() + len > self->options_.max_body_bytes) {
    // Answer at once; what else the client sends on this stream is discarded.
    s->too_large = true;
    s->dispatched = true;
    s->req.body.clear();
    ApiError e = RequestEntityTooLarge("the request body is larger than the limit of " +
                                       std::to_string(self->options_.max_body_bytes) + " bytes");
    Response r;
    r.status = e.code;
    r.body = e.ToJson();
    self->Respond(id, std::move(r));
    return 0;
  }
  s->req.body.append(reinterpret_cast<const char*>(data), len);
  return 0;
}

int Session::OnFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  auto* self = static_cast<Session*>(user);
  if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
      (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
    Stream* s = self->Find(frame->hd.stream_id);
    if (s && !s->dispatched) self->Dispatch(frame->hd.stream_id, *s);
  }
  return 0;
}

int Session::OnStreamClose(nghttp2_session*, int32_t id, uint32_t, void* user) {
  auto* self = static_cast<Session*>(user);
  auto it = self->streams_.find(id);
  if (it == self->streams_.end()) return 0;
  // Whether the response finished or the client reset the stream: a watch stops here.
  self->Release(*it->second);
  self->streams_.erase(it);
  return 0;
}

void Session::Release(Stream& s) {
  if (s.deadline) s.deadline->cancel();
  if (s.resp.stream) {
    s.resp.stream->Close();
    s.resp.stream.reset();
  }
}

void Session::Dispatch(int32_t id, Stream& s) {
  s.dispatched = true;
  asio::co_spawn(
      stream_.get_executor(),
      [self = shared_from_this(), id, req = std::move(s.req)]() mutable -> asio::awaitable<void> {
        Response resp = co_await self->options_.serve(std::move(req));
        // Back on the session's I/O thread.
        self->Respond(id, std::move(resp));
        self->Signal();
      },
      asio::detached);
}

void Session::Respond(int32_t id, Response resp) {
  Stream* s = closed_ ? nullptr : Find(id);
  if (!s || s->responding) {
    // The client reset the stream (or the connection went) while the handler ran.
    if (resp.stream) resp.stream->Close();
    return;
  }
  s->responding = true;
  s->resp = std::move(resp);
  std::vector<std::pair<std::string, std::string>> fields;
  fields.emplace_back(":status", std::to_string(s->resp.status));
  fields.emplace_back("content-type", s->resp.content_type);
  for (const auto& [k, v] : s->resp.headers) {
    std::string name = LowerHeaderName(k);
    // Connection-specific fields are forbidden in HTTP/2 (RFC 9113 §8.2.2).
    if (name == "connection" || name == "keep-alive" || name == "transfer-encoding" ||
        name == "upgrade" || name == "proxy-connection" || name == "content-length") {
      continue;
    }
    fields.emplace_back(std::move(name), v);
  }
  if (!s->resp.stream) fields.emplace_back("content-length", std::to_string(s->resp.body.size()));
  std::vector<nghttp2_nv> nva;
  nva.reserve(fields.size());
  for (const auto& [k, v] : fields) nva.push_back(Header(k, v));
  nghttp2_data_provider provider;
  provider.source.ptr = s;
  provider.read_callback = &Session::ReadBody;
  if (s->resp.stream && s->resp.stream_timeout.count() > 0) {
    s->deadline = std::make_unique<asio::steady_timer>(stream_.get_executor());
    s->deadline->expires_after(s->resp.stream_timeout);
    s->deadline->async_wait([weak = weak_from_this(), id](beast::error_code ec) {
      if (ec) return;
      auto self = weak.lock();
      if (!self) return;
      if (Stream* st = self->Find(id)) {
        st->ended = true;
        self->Resume(id);
      }
    });
  }
  // A response without a body ends with its HEADERS frame.
  const bool has_body = s->resp.stream || !s->resp.body.empty();
  if (nghttp2_submit_response(session_, id, nva.data(), nva.size(),
                              has_body ? &provider : nullptr) != 0) {
    nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id, NGHTTP2_INTERNAL_ERROR);
  }
  Signal();
}

void Session::Resume(int32_t id) {
  Stream* s = Find(id);
  if (!s || !s->deferred) return;
  s->deferred = false;
  nghttp2_session_resume_data(session_, id);
  Signal();
}

ssize_t Session::ReadBody(nghttp2_session*, int32_t id, uint8_t* buf, size_t length,
                          uint32_t* flags, nghttp2_data_source* source, void* user) {
  auto* self = static_cast<Session*>(user);
  auto* s = static_cast<Stream*>(source->ptr);
  if (!s->resp.stream) {
    size_t n = std::min(length, s->resp.body.size() - s->body_offset);
    std::memcpy(buf, s->resp.body.data() + s->body_offset, n);
    s->body_offset += n;
    if (s->body_offset == s->resp.body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
  // Pull more only when what was pulled before is gone: nghttp2 calls this only while the peer's
  // window is open, so a client that does not read leaves the events in the watcher's buffer.
  if (s->pending.empty() && !s->ended) {
    std::vector<std::shared_ptr<const std::string>> chunks;
    auto wake = [weak = self->weak_from_this(), ex = self->stream_.get_executor(), id] {
      asio::post(ex, [weak, id] {
        if (auto self = weak.lock()) self->Resume(id);
      });
    };
    switch (s->resp.stream->Poll(&chunks, wake)) {
      case ResponseStream::PollResult::kData:
        for (auto& c : chunks) {
          if (c && !c->empty()) s->pending.push_back(std::move(c));
        }
        break;
      case ResponseStream::PollResult::kEnd: s->ended = true; break;
      case ResponseStream::PollResult::kPending: break;
    }
  }
  size_t n = 0;
  while (n < length && !s->pending.empty()) {
    const std::string& front = *s->pending.front();
    size_t take = std::min(length - n, front.size() - s->pending_offset);
    std::memcpy(buf + n, front.data() + s->pending_offset, take);
    n += take;
    s->pending_offset += take;
    if (s->pending_offset == front.size()) {
      s->pending.pop_front();
      s->pending_offset = 0;
    }
  }
  if (n > 0) return static_cast<ssize_t>(n);
  if (s->ended) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    return 0;
  }
  s->deferred = true;
  return NGHTTP2_ERR_DEFERRED;
}

asio::awaitable<void> Session::Reader() {
  auto self = shared_from_this();
  std::array<uint8_t, 16 * 1024> buf;
  beast::error_code ec;
  while (!closed_) {
    size_t n = co_await stream_.async_read_some(asio::buffer(buf),
                                                asio::redirect_error(use_awaitable, ec));
    if (ec) break;
    ssize_t rv = nghttp2_session_mem_recv(session_, buf.data(), n);
    if (rv < 0) {
      spdlog::debug("http2: {}: {}", base_.remote_address, nghttp2_strerror(static_cast<int>(rv)));
      break;
    }
    Signal();
  }
  closed_ = true;
  Signal();
}

asio::awaitable<void> Session::Run() {
  if (!Init()) co_return;
  asio::co_spawn(stream_.get_executor(), Reader(), asio::detached);
  std::string out;
  beast::error_code ec;
  while (!closed_) {
    out.clear();
    while (out.size() < kWriteBatch) {
      const uint8_t* data = nullptr;
      ssize_t n = nghttp2_session_mem_send(session_, &data);
      if (n < 0) {
        closed_ = true;
        break;
      }
      if (n == 0) break;
      out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
    }
    if (!out.empty()) {
      co_await asio::async_write(stream_, asio::buffer(out),
                                 asio::redirect_error(use_awaitable, ec));
      if (ec) break;
      continue;
    }
    if (closed_ ||
        (!nghttp2_session_want_read(session_) && !nghttp2_session_want_write(session_))) {
      break;  // GOAWAY exchanged and every stream done, or a protocol error
    }
    // Nothing to send: wait until the reader, a handler or a stream wakes us.
    wake_.expires_at(asio::steady_timer::time_point::max());
    co_await wake_.async_wait(asio::redirect_error(use_awaitable, ec));
  }
  closed_ = true;
  CloseAll();
  // Ends the reader's pending read.
  beast::get_lowest_layer(stream_).socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  beast::get_lowest_layer(stream_).close();
}

void Session::CloseAll() {
  for (auto& [id, s] : streams_) Release(*s);
  streams_.clear();
}

}  // namespace

asio::awaitable<void> RunHttp2Session(TlsStream stream, Request base, Http2SessionOptions options) {
  auto session = std::make_shared<Session>(std::move(stream), std::move(base), std::move(options));
  co_await session->Run();
}

}  // namespace converge::apiserver
