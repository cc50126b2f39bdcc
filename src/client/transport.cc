#include "client/transport.h"

#include <strings.h>

namespace converge::client {

std::string_view FindHeader(const HeaderList& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (k.size() == name.size() && strncasecmp(k.data(), name.data(), k.size()) == 0) return v;
  }
  return {};
}

util::StatusOr<std::string> ReadAll(ResponseStream& stream) {
  std::string out;
  std::vector<std::shared_ptr<const std::string>> chunks;
  for (;;) {
    chunks.clear();
    CONVERGE_ASSIGN_OR_RETURN(bool more, stream.Read(&chunks));
    for (const auto& c : chunks) out += *c;
    if (!more) return out;
  }
}

namespace {

class StringStream final : public ResponseStream {
 public:
  explicit StringStream(std::string body)
      : body_(std::make_shared<const std::string>(std::move(body))) {}

  util::StatusOr<bool> Read(std::vector<std::shared_ptr<const std::string>>* out) override {
    if (body_ == nullptr || body_->empty()) return false;
    out->push_back(std::move(body_));
    body_ = nullptr;
    return true;
  }

 private:
  std::shared_ptr<const std::string> body_;  // null once read
};

}  // namespace

std::unique_ptr<ResponseStream> MakeStringStream(std::string body) {
  return std::make_unique<StringStream>(std::move(body));
}

}  // namespace converge::client
